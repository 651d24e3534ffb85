"""Topics from a taxonomy: a hierarchy of areas and topics, each with the terms that signal it."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from itertools import compress
from pathlib import Path

from etl.errors import TaxonomyError
from etl.models import Topic, TopicHit

MAX_TOPICS = 3
# A topic is kept when its score reaches this share of the best topic's score.
KEEP_RATIO = 0.4
# Each further occurrence of a matched term adds this share of its weight (up to 3 times).
REPEAT_BONUS = 0.25
WORD_RE = re.compile(r"\w+")
WORD_CHAR_RE = re.compile(r"\w")
# Bytes tables: ASCII characters that are not word characters become spaces; all of ASCII.
_ASCII_NOT_WORD = bytes(c for c in range(128) if not WORD_CHAR_RE.match(chr(c)))
_NOT_WORD_TO_SPACE = bytes.maketrans(_ASCII_NOT_WORD, b" " * len(_ASCII_NOT_WORD))
_ASCII = bytes(range(128))

# Terms in a trie of words: word -> (the words that may follow, the (slug, term)s ending here).
# A term's last word is entered in each plural form the text may use.
Trie = dict[str, tuple["Trie", list[tuple[str, str]]]]
# Where a text's longest term from a start word ends: start -> (last word, (slug, term)s).
Matches = dict[int, tuple[int, list[tuple[str, str]]]]


@dataclass(frozen=True)
class Taxonomy:
    """Topics with their terms in word tries; built once per run, shared by workers."""

    topics: tuple[Topic, ...]
    words: Trie  # lowercased words of terms matched in any case
    exact: Trie  # words of acronym terms (LLM, GNN), matched case-sensitively
    weights: dict[str, float]  # term -> weight (multi-word terms weigh more)
    leaves: frozenset[str]
    # the first words of `exact` lower-cased: a text whose lower-cased words hold none of them
    # has no acronym term, and its words as written need not be listed
    exact_lowered: frozenset[str] = frozenset()


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Read a taxonomy TOML file (the packaged default when no path is given) and check it."""
    if path is None:
        data = resources.files("etl.data").joinpath("taxonomy.toml").read_text("utf-8")
        where = "default taxonomy"
    else:
        where = str(path)
        try:
            data = Path(path).read_text("utf-8")
        except OSError as exc:
            raise TaxonomyError(f"{where}: cannot read: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise TaxonomyError(f"{where}: not UTF-8 text: {exc.reason}") from exc
    try:
        document = tomllib.loads(data)
    except tomllib.TOMLDecodeError as exc:
        raise TaxonomyError(f"{where}: not valid TOML: {exc}") from exc
    return build_taxonomy(document.get("topic"), where)


def build_taxonomy(entries: object, where: str = "taxonomy") -> Taxonomy:
    """Validate `[[topic]]` entries and index their terms."""
    if not isinstance(entries, list) or not entries:
        raise TaxonomyError(f"{where}: no [[topic]] entries")
    topics: list[Topic] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not entry.get("slug") or not entry.get("name"):
            raise TaxonomyError(f"{where}: topic #{number} needs a slug and a name")
        slug = entry["slug"]
        terms = entry.get("terms", [])
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise TaxonomyError(f"{where}: topic {slug!r}: terms must be a list of strings")
        parent = entry.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise TaxonomyError(f"{where}: topic {slug!r}: parent must be a slug")
        topics.append(Topic(str(slug), str(entry["name"]), parent, tuple(terms)))
    slugs = [t.slug for t in topics]
    if len(set(slugs)) != len(slugs):
        duplicate = next(s for s in slugs if slugs.count(s) > 1)
        raise TaxonomyError(f"{where}: topic {duplicate!r} is defined twice")
    for topic in topics:
        if topic.parent is not None and topic.parent not in slugs:
            message = f"topic {topic.slug!r} has unknown parent {topic.parent!r}"
            raise TaxonomyError(f"{where}: {message}")
    words: Trie = {}
    exact: Trie = {}
    weights: dict[str, float] = {}
    for topic in topics:
        for term in topic.terms:
            tokens = WORD_RE.findall(term)
            if not tokens:
                continue
            acronym = is_acronym_term(term)
            if not acronym:
                tokens = [t.lower() for t in tokens]
            weights[term] = 1.0 + 0.5 * (len(tokens) - 1)
            node = exact if acronym else words
            for word in tokens[:-1]:
                node = node.setdefault(word, ({}, []))[0]
            for form in plural_forms(tokens[-1]):
                ending = node.setdefault(form, ({}, []))[1]
                if (topic.slug, term) not in ending:
                    ending.append((topic.slug, term))
    leaves = frozenset(t.slug for t in topics if t.parent is not None)
    exact_lowered = frozenset(word.lower() for word in exact)
    return Taxonomy(tuple(topics), words, exact, weights, leaves, exact_lowered)


def is_acronym_term(term: str) -> bool:
    """Terms in capitals (LLM, GNN) match case-sensitively; others ignore case."""
    return term.upper() == term and any(c.isalpha() for c in term)


def plural_forms(word: str) -> tuple[str, ...]:
    """A term's last word and the plural forms a text may use instead (`query`, `queries`)."""
    forms = [word, word + "s"]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        forms.append(word + "es")
    if len(word) > 2 and word.endswith("y") and word[-2] not in "aeiouAEIOU":
        forms.append(word[:-1] + ("IES" if word.isupper() else "ies"))
    return tuple(forms)


def matched_terms(text: str, taxonomy: Taxonomy) -> dict[str, list[str]]:
    """Terms found in a text, by topic (see `term_counts`)."""
    return {slug: list(terms) for slug, terms in term_counts(text, taxonomy).items()}


def term_counts(text: str, taxonomy: Taxonomy) -> dict[str, dict[str, int]]:
    """Terms found in a text, by topic: whole words, hyphens and spaces alike, plurals accepted.

    A match inside a longer match counts only for the longer term (`language model` inside
    `large language model`), unless the shorter term also occurs on its own elsewhere.
    """
    spaced, lowered, aligned = _words(text)
    longest = _longest_matches(taxonomy.words, lowered)
    # Most texts have no acronym term. When `lowered` is the words lower-cased, one C-level
    # test of it says so (its words' hashes are known by now), before the words as written
    # are split out: a word of `exact` lower-cased is in `exact_lowered`.
    if not (aligned and taxonomy.exact_lowered.isdisjoint(lowered)):
        tokens = spaced.split()
        if not taxonomy.exact.keys().isdisjoint(tokens):
            longest = _merged(longest, _longest_matches(taxonomy.exact, tokens))
    found: dict[str, dict[str, int]] = {}
    longest_end = -1
    # In reading order, a match that ends where an earlier one ends, or before, is inside it.
    # (Shorter matches from the same start are inside the longest: they were never kept.)
    for end, ending in longest.values():
        if end <= longest_end:
            continue
        longest_end = end
        for slug, term in ending:
            terms = found.setdefault(slug, {})
            terms[term] = terms.get(term, 0) + 1
    return found


def _longest_matches(trie: Trie, words: list[str]) -> Matches:
    """Start word -> (last word, the (slug, term)s ending there) of the longest term starting
    there, in reading order."""
    count = len(words)
    found: Matches = {}
    # only the positions where some term can start are looked at
    for start in compress(range(count), map(trie.__contains__, words)):
        node, ending = trie[words[start]]
        last = start
        end = start + 1
        while node and end < count:
            entry = node.get(words[end])
            if entry is None:
                break
            node, longer = entry
            if longer:  # a term ends here, not only a prefix of one
                last, ending = end, longer
            end += 1
        if ending:
            found[start] = (last, ending)
    return found


def _merged(words: Matches, exact: Matches) -> Matches:
    """Both tries' longest matches per start; where they end together, the word trie's first."""
    merged = dict(words)
    for start, (end, ending) in exact.items():
        known = merged.get(start)
        if known is None or end > known[0]:
            merged[start] = (end, ending)
        elif end == known[0]:
            merged[start] = (end, known[1] + ending)
    return dict(sorted(merged.items()))


def _words(text: str) -> tuple[str, list[str], bool]:
    """The text with its non-word characters made spaces (its split() is
    `WORD_RE.findall(text)`), `WORD_RE.findall(text.lower())`, and whether the latter is the
    former's words each lower-cased (not so only where rare Unicode changes the words); faster.

    Every non-word character is made a space, then the text is split: ASCII characters are
    mapped as bytes, the few distinct non-ASCII ones are tested one by one (no word character
    is white space to str.split, so the runs it returns are the words). When lower-casing
    changes only ASCII letters (bytes lower-case those and nothing else), no word boundary
    moves and no word changes length, so the words of the lower-cased text are the words
    lower-cased.
    """
    if text.isascii():
        spaced = text.encode("ascii").translate(_NOT_WORD_TO_SPACE)
        return spaced.decode("ascii"), spaced.lower().decode("ascii").split(), True
    encoded = text.encode("utf-8", "surrogatepass")
    words = encoded.translate(_NOT_WORD_TO_SPACE).decode("utf-8", "surrogatepass")
    others = set(encoded.translate(None, _ASCII).decode("utf-8", "surrogatepass"))
    for char in others:
        if not WORD_CHAR_RE.match(char):
            words = words.replace(char, " ")
    # Lower-casing changes only ASCII letters when no non-ASCII character changes: no
    # character's lower case starts with itself, so text.lower() differs from the bytes
    # lower-cased exactly when one does (a test of the few distinct ones, not of the text).
    if all(char.lower() == char for char in others):
        return words, words.lower().split(), True
    tokens = words.split()
    lowered_text = text.lower()
    lowered = WORD_RE.findall(lowered_text)
    if len(lowered) != len(tokens):  # lower-casing changed the words (rare Unicode)
        return words, [t.lower() for t in tokens], True
    return words, lowered, False


def score_terms(terms: dict[str, int], taxonomy: Taxonomy) -> float:
    """Each distinct term's weight, a little more when it recurs."""
    if len(terms) == 1:  # most topics: sum() of one product is 0.0 + it
        ((term, n),) = terms.items()
        return 0.0 + taxonomy.weights[term] * (1.0 + REPEAT_BONUS * min(n - 1, 3))
    return sum(taxonomy.weights[t] * (1.0 + REPEAT_BONUS * min(n - 1, 3)) for t, n in terms.items())


def assign_topics(text: str, taxonomy: Taxonomy) -> tuple[TopicHit, ...]:
    """The best leaf topics of a text (an area when no leaf matches), scored by matched terms.

    A topic scores the weights of its distinct matched terms; topics within KEEP_RATIO of the
    best score are kept, at most MAX_TOPICS of them.
    """
    evidence = term_counts(text, taxonomy)
    if not evidence:
        return ()
    leaves = taxonomy.leaves
    slugs = [slug for slug in evidence if slug in leaves] or list(evidence)
    # (-score, slug) pairs sort best first, ties by slug, without a key function
    ranked = sorted([(-score_terms(evidence[slug], taxonomy), slug) for slug in slugs])
    least = KEEP_RATIO * -ranked[0][0]
    return tuple(
        TopicHit(slug, round(-negated, 2), tuple(evidence[slug]))
        for negated, slug in ranked[:MAX_TOPICS]
        if -negated >= least
    )

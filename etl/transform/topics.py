"""Topics from a taxonomy: a hierarchy of areas and topics, each with the terms that signal it."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from etl.errors import TaxonomyError
from etl.models import Topic, TopicHit

MAX_TOPICS = 3
WORD_RE = re.compile(r"\w+")


Tokens = tuple[str, ...]


@dataclass(frozen=True)
class Taxonomy:
    """Topics with their terms indexed by word sequence; built once per run, shared by workers."""

    topics: tuple[Topic, ...]
    words: dict[Tokens, tuple[tuple[str, str], ...]]  # lowercased words -> (slug, term)
    acronyms: dict[Tokens, tuple[tuple[str, str], ...]]  # exact-case words -> (slug, term)
    longest: int


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
    try:
        document = tomllib.loads(data)
    except tomllib.TOMLDecodeError as exc:
        raise TaxonomyError(f"{where}: not valid TOML: {exc}") from exc
    return build_taxonomy(document.get("topic"), where)


def build_taxonomy(entries: object, where: str = "taxonomy") -> Taxonomy:
    """Validate `[[topic]]` entries and compile their terms."""
    if not isinstance(entries, list) or not entries:
        raise TaxonomyError(f"{where}: no [[topic]] entries")
    topics: list[Topic] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not entry.get("slug") or not entry.get("name"):
            raise TaxonomyError(f"{where}: topic #{number} needs a slug and a name")
        terms = entry.get("terms", [])
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise TaxonomyError(f"{where}: topic {entry['slug']!r}: terms must be a list of strings")
        topics.append(Topic(str(entry["slug"]), str(entry["name"]), entry.get("parent"), tuple(terms)))
    slugs = [t.slug for t in topics]
    if len(set(slugs)) != len(slugs):
        duplicate = next(s for s in slugs if slugs.count(s) > 1)
        raise TaxonomyError(f"{where}: topic {duplicate!r} is defined twice")
    for topic in topics:
        if topic.parent is not None and topic.parent not in slugs:
            raise TaxonomyError(f"{where}: topic {topic.slug!r} has unknown parent {topic.parent!r}")
    words: dict[Tokens, list[tuple[str, str]]] = {}
    acronyms: dict[Tokens, list[tuple[str, str]]] = {}
    for topic in topics:
        for term in topic.terms:
            tokens = tuple(WORD_RE.findall(term))
            if not tokens:
                continue
            if is_acronym_term(term):
                acronyms.setdefault(tokens, []).append((topic.slug, term))
            else:
                words.setdefault(tuple(t.lower() for t in tokens), []).append((topic.slug, term))
    longest = max((len(k) for k in [*words, *acronyms]), default=1)
    return Taxonomy(
        tuple(topics),
        {k: tuple(v) for k, v in words.items()},
        {k: tuple(v) for k, v in acronyms.items()},
        longest,
    )


def is_acronym_term(term: str) -> bool:
    """Terms in capitals (LLM, GNN) match case-sensitively; others ignore case."""
    return term.upper() == term and any(c.isalpha() for c in term)


def _singulars(word: str) -> tuple[str, ...]:
    """The word and the forms it has without a plural ending."""
    forms = [word]
    if len(word) > 3 and word.endswith("es"):
        forms.append(word[:-2])
    if len(word) > 2 and word.endswith("s"):
        forms.append(word[:-1])
    return tuple(forms)


def matched_terms(text: str, taxonomy: Taxonomy) -> dict[str, list[str]]:
    """Terms found in a text, by topic: whole words, hyphens and spaces alike, plurals accepted."""
    tokens = WORD_RE.findall(text)
    lowered = [t.lower() for t in tokens]
    found: dict[str, list[str]] = {}
    for start in range(len(tokens)):
        for size in range(1, min(taxonomy.longest, len(tokens) - start) + 1):
            head = start + size - 1
            for index, words in ((taxonomy.words, lowered), (taxonomy.acronyms, tokens)):
                for last in _singulars(words[head]):
                    for slug, term in index.get((*words[start:head], last), ()):
                        terms = found.setdefault(slug, [])
                        if term not in terms:
                            terms.append(term)
    return found


def assign_topics(text: str, taxonomy: Taxonomy) -> tuple[TopicHit, ...]:
    """The best topics of a text, each scored by the distinct terms that matched."""
    evidence = matched_terms(text, taxonomy)
    scored = [
        (slug, sum(1.0 + 0.5 * (len(WORD_RE.findall(term)) - 1) for term in terms), terms)
        for slug, terms in evidence.items()
    ]
    leaves = {t.slug for t in taxonomy.topics if t.parent is not None}
    ranked = sorted(scored, key=lambda s: (s[0] not in leaves, -s[1], s[0]))
    best = [s for s in ranked if s[0] in leaves][:MAX_TOPICS] or ranked[:1]
    return tuple(TopicHit(slug, round(score, 2), tuple(terms)) for slug, score, terms in best)

"""Terms found in a paper's text, each weighed by where it stands, as a reader weighs it.

A term in the title, or in the sentence that states the contribution ("we propose ..."), says
what the paper is about. A term given as an example ("such as", "tasks like"), or after a
negation or a contrast ("does not require fine-tuning", "unlike GANs"), is context. A term
directly followed by another term modifies it ("video recommendation" is about
recommendation): it counts for less. The text is read clause by clause, so that a term never
runs across a comma or a sentence's end.

Finer readings (evaluation sentences, "for" after "we propose", "via"/"using") were tried and
measured on real abstracts the rules had not seen: they moved no score and cost a quarter of
the transform's time (tests/gold/README.md).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, count
from typing import NamedTuple

# Terms in a trie of words: word -> (the words that may follow, the (key, term)s ending here).
# A term's last word is entered in each plural form the text may use.
Trie = dict[str, tuple["Trie", list[tuple[str, str]]]]
# Where a text's longest term from a start word ends: start -> (last word, (key, term)s).
Matches = dict[int, tuple[int, list[tuple[str, str]]]]

TITLE = 2.0  # a term in the title
IN_CONTRIBUTION = 1.5  # in a sentence stating the paper's contribution ("we propose ...")
AS_EXAMPLE = 0.4  # after "such as", "including", "e.g.", "tasks like"
NEGATED = 0.1  # after "without", "unlike", "does not require", "rather than" ...
DEFINED = 0.25  # an acronym in parentheses: its long form just before it is the evidence
MODIFIER = 0.5  # a term directly followed by another term ("video" in "video recommendation")

WORD_RE = re.compile(r"\w+")
# A sentence ends at the white space (group 1) after `.`, `!` or `?` before anything but a
# lower-case letter. The pattern starts with the character it needs: one starting with a
# look-behind is tried at every position of the text.
SENTENCE_END_RE = re.compile(r"[.!?](\s+)(?=[^a-z\s])")
CLAUSE_RE = re.compile(r"[,;:]\s")
# "out-of-distribution (OOD) detection": an acronym in parentheses would split the term it
# stands inside; it is read apart from its clause.
PAREN_ACRONYM_RE = re.compile(r"\s?\(([^\s()]*[A-Z][^\s()]*)\)")


@dataclass(frozen=True, eq=False)  # hashed by identity: a dict key in every clause
class Cue:
    """A pattern over lower-cased text, tried only in texts holding one of its keys: a
    substring test costs far less than a search for many alternatives at every position."""

    pattern: re.Pattern[str]
    keys: tuple[str, ...]

    def possible(self, lowered: str) -> bool:
        """Whether the text holds one of the keys (else the pattern cannot match)."""
        return any(map(lowered.__contains__, self.keys))


CONTRIBUTION = Cue(
    re.compile(
        r"\b(?:we|this (?:paper|work|study|article)|our (?:work|paper|study))\b[^.]{0,40}?"
        r"\b(?:propose|present|introduce|develop|design|address|tackle|study|investigate|"
        r"consider|focus|formulate|explore|put forward|contribute|revisit)"
        r"|\bin this (?:paper|work|study)\b|\bwe (?:aim|seek) to\b"
    ),
    (
        "propos",
        "present",
        "introduc",
        "develop",
        "design",
        "address",
        "tackle",
        "study",
        "investigat",
        "consider",
        "focus",
        "formulat",
        "explor",
        "put forward",
        "contribut",
        "revisit",
        "in this",
        "aim to",
        "seek to",
    ),
)
NEGATION = Cue(
    re.compile(
        r"(?<![\w-])(?:without|unlike|rather than|instead of|in contrast to|as opposed to|"
        r"free of|(?:does|do|did|need|needs|can|could|will) not "
        r"(?:require|need|rely on|use|involve)|"
        r"no (?:need|longer) (?:for|of|requires?)|eliminat\w* the need for|not based on|"
        r"(?:needs?|requires?|uses?|with|involves?) no)\b"
    ),
    (
        "without",
        "unlike",
        "rather",
        "instead",
        "contrast",
        "opposed",
        "free of",
        "not require",
        "not need",
        "not rely",
        "not use",
        "not involve",
        "not based",
        "no need",
        "no longer",
        "s no",
        "e no",
        "with no",
        "need no",
        "eliminat",
    ),
)
EXAMPLE = Cue(
    re.compile(
        r"(?<![\w-])(?:such as|including|e\.g\.|for example|for instance|ranging from|"
        r"(?:tasks|applications|problems|domains|areas|fields|scenarios|settings) like\b)"
    ),
    ("such as", "including", "e.g.", "for ex", "for inst", "ranging", "s like"),
)
# Prefixes written joined, hyphenated or apart ("multimodal", "multi-modal").
PREFIXES = ("multi", "non", "semi", "pre", "self")
SPLIT_PREFIXES = ("multi", "non", "semi", "pre")

_WORD_CHAR_RE = re.compile(r"\w")
# Stands between two pieces in `piece_words`: a non-word character, so no term holds it.
SEPARATOR = "\x00"
# Bytes tables: ASCII characters that are not word characters become spaces (but the
# separator); all of ASCII.
_ASCII_NOT_WORD = bytes(c for c in range(1, 128) if not _WORD_CHAR_RE.match(chr(c)))
_NOT_WORD_TO_SPACE = bytes.maketrans(_ASCII_NOT_WORD, b" " * len(_ASCII_NOT_WORD))
_ASCII = bytes(range(128))


@dataclass(frozen=True)
class TermIndex:
    """Terms of named entries (topics, tasks) in word tries; built once, shared by workers."""

    words: Trie  # lowercased words of terms matched in any case
    exact: Trie  # words of acronym terms (LLM, GNN), matched case-sensitively
    weights: dict[str, float]  # term -> weight (multi-word terms weigh more)
    # the first words of `exact` lower-cased: a text whose lower-cased words hold none of them
    # has no acronym term, and its words as written need not be listed
    exact_lowered: frozenset[str] = frozenset()
    acronyms: frozenset[str] = frozenset()  # the terms that are acronyms (`is_acronym_term`)

    def __reduce__(self) -> tuple[type[TermIndex], tuple[object, ...]]:
        """Pickled as its fields, rebuilt by the constructor: compiled (mypyc), a frozen
        class has no `__dict__` for pickle to fill, and refuses its attributes being set."""
        return (
            TermIndex,
            (self.words, self.exact, self.weights, self.exact_lowered, self.acronyms),
        )


@dataclass(slots=True)
class Occurrence:
    """One match of a term: how much its place counts, and where it is (for ties)."""

    key: str
    term: str
    factor: float
    order: int


def build_index(entries: Iterable[tuple[str, Iterable[str]]]) -> TermIndex:
    """Index (key, terms) entries: each term's words in a trie, its weight by length."""
    words: Trie = {}
    exact: Trie = {}
    weights: dict[str, float] = {}
    acronyms: set[str] = set()
    for key, terms in entries:
        for term in terms:
            tokens = WORD_RE.findall(term)
            if not tokens:
                continue
            acronym = is_acronym_term(term)
            if acronym:
                acronyms.add(term)
            else:
                tokens = [t.lower() for t in tokens]
            weights[term] = 1.0 + 0.5 * (len(term.split()) - 1)  # "8-bit" is one word
            for spelling in [tokens] if acronym else spellings(tokens):
                node = exact if acronym else words
                for word in spelling[:-1]:
                    node = node.setdefault(word, ({}, []))[0]
                for form in plural_forms(spelling[-1]):
                    ending = node.setdefault(form, ({}, []))[1]
                    # one spelling, one term per key: "multi-modal" is "multimodal"
                    if all(known != key for known, _ in ending):
                        ending.append((key, term))
    lowered = frozenset(word.lower() for word in exact)
    return TermIndex(words, exact, weights, lowered, frozenset(acronyms))


def spellings(tokens: list[str]) -> list[list[str]]:
    """A term's words, and the same with a prefix joined or split: `multi modal` (as the text
    "multi-modal" is read) and `multimodal` are one term."""
    joined: list[str] = []
    for word in tokens:
        if joined and joined[-1] in PREFIXES:
            joined[-1] += word
        else:
            joined.append(word)
    split: list[str] = []
    for word in joined:
        prefix = next(
            (p for p in SPLIT_PREFIXES if word.startswith(p) and len(word) > len(p) + 2), None
        )
        split.extend([prefix, word[len(prefix) :]] if prefix else [word])
    return [list(s) for s in dict.fromkeys(map(tuple, (tokens, joined, split)))]


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


# Topics and tasks read the same text one after the other: the second reading is remembered.
@lru_cache(maxsize=4)
def pieces(title: str | None, abstract: str) -> tuple[tuple[str, float], ...]:
    """The text cut into clauses, each with the factor its place gives the terms in it."""
    found: list[tuple[str, float]] = []
    if title:
        _Reader(title, found).clauses(0, len(title), TITLE, 0)
    reader = _Reader(abstract, found)
    start = 0
    for end in [m.start(1) for m in SENTENCE_END_RE.finditer(abstract)] + [len(abstract)]:
        stating = reader.search(CONTRIBUTION, start, end)
        reader.clauses(start, end, 1.0, stating.end() if stating else start)
        start = end
    return tuple(found)


class _Reader:
    """Cuts one text into weighed clauses; a cue's pattern runs on its lower-cased copy, and
    only in a clause where one of the cue's keys occurs (every match holds one)."""

    def __init__(self, text: str, found: list[tuple[str, float]]) -> None:
        self.text = text
        self.found = found
        self.lowered = lowered = _lowered(text)
        # where each cue's keys occur: a clause with none cannot match the cue
        self.keys_at: dict[Cue, list[int]] = {}
        for cue in (CONTRIBUTION, NEGATION, EXAMPLE):
            if cue.possible(lowered):
                self.keys_at[cue] = sorted(at for key in cue.keys for at in _find_all(lowered, key))

    def search(self, cue: Cue, start: int, end: int) -> re.Match[str] | None:
        """The cue's first match in text[start:end], if one of its keys occurs there."""
        if not self.holds_key(cue, start, end):
            return None
        return cue.pattern.search(self.lowered, start, end)

    def holds_key(self, cue: Cue, start: int, end: int) -> bool:
        """Whether one of the cue's keys occurs in text[start:end]."""
        positions = self.keys_at.get(cue)
        if not positions:
            return False
        first = bisect_left(positions, start)
        return first < len(positions) and positions[first] < end

    def clauses(self, start: int, end: int, factor: float, stated: int) -> None:
        """The clauses of text[start:end], each weighed by `factor`, and by IN_CONTRIBUTION
        up to the one holding position `stated` (where the contribution's verb ends): the
        clauses after it say how the contribution works, not what it is about."""
        # a sentence holding no key of a discounting cue holds no cue in any clause: each
        # clause is then one piece (most sentences)
        cued = self.holds_key(NEGATION, start, end) or self.holds_key(EXAMPLE, start, end)
        read = self.clause if cued else self.add
        for clause_end in [m.start() for m in CLAUSE_RE.finditer(self.text, start, end)] + [end]:
            read(start, clause_end, factor * IN_CONTRIBUTION if start < stated else factor)
            start = clause_end

    def clause(self, start: int, end: int, factor: float) -> None:
        """A clause, what follows a cue in it discounted, its bracketed acronyms read apart."""
        for cue, discount in ((NEGATION, NEGATED), (EXAMPLE, AS_EXAMPLE)):
            match = self.search(cue, start, end)
            if match:
                self.add(start, match.start(), factor)
                self.add(match.end(), end, factor * discount)
                return
        self.add(start, end, factor)

    def add(self, start: int, end: int, factor: float) -> None:
        """One weighed piece; an acronym in parentheses goes to a piece of its own."""
        piece = self.text[start:end]
        if "(" in piece:
            acronyms = PAREN_ACRONYM_RE.findall(piece)
            if acronyms:
                piece = PAREN_ACRONYM_RE.sub("", piece)
                self.found.append((" ".join(acronyms), factor * DEFINED))
        self.found.append((piece, factor))


def _find_all(text: str, key: str) -> list[int]:
    """Every position where `key` occurs in `text`."""
    found = []
    at = text.find(key)
    while at >= 0:
        found.append(at)
        at = text.find(key, at + 1)
    return found


def _lowered(text: str) -> str:
    """The text lower-cased, each character still at its place (for cue positions)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)  # rare Unicode


def occurrences(parts: Sequence[tuple[str, float]], index: TermIndex) -> list[Occurrence]:
    """Every longest term match in the pieces, with its factor and reading order (1000 per
    piece, plus the match's first word in its piece)."""
    stream = piece_words(tuple(parts))
    starts = stream.piece_starts
    found: list[Occurrence] = []
    piece = 0
    last_piece = len(starts) - 1
    previous_end = -2
    previous: list[Occurrence] = []
    for start, (end, ending) in _kept_matches(stream, index).items():
        while piece < last_piece and starts[piece + 1] <= start:
            piece += 1
        if start == previous_end + 1:  # the previous term modifies this one (never across
            for occurrence in previous:  # pieces: a separator stands between them)
                occurrence.factor *= MODIFIER
        # key "": a phrase that only looks like a term ("word segmentation")
        factor, order = parts[piece][1], piece * 1000 + start - starts[piece]
        previous = [Occurrence(k, term, factor, order) for k, term in ending if k]
        found.extend(previous)
        previous_end = end
    return found


def term_matches(text: str, index: TermIndex) -> Matches:
    """Longest matches in a text, in reading order, none inside another: whole words, hyphens
    and spaces alike, plurals accepted."""
    return _kept_matches(piece_words(((text, 1.0),)), index)


def _kept_matches(stream: PieceWords, index: TermIndex) -> Matches:
    """The longest matches of the stream's pieces (word positions in the stream), in reading
    order, none inside another. No term holds the separator, so none runs across pieces."""
    lowered = stream.lowered
    longest = _longest_matches(index.words, lowered)
    # Most texts have no acronym term. When `lowered` is the words lower-cased, one C-level
    # test of it says so, before the words as written are split out.
    if not (stream.aligned and index.exact_lowered.isdisjoint(lowered)):
        tokens = stream.spaced.split()
        if not index.exact.keys().isdisjoint(tokens):
            longest = _merged(longest, _longest_matches(index.exact, tokens))
    kept: Matches = {}
    longest_end = -1
    # In reading order, a match that ends where an earlier one ends, or before, is inside it.
    for start, (end, ending) in longest.items():
        if end > longest_end:
            longest_end = end
            kept[start] = (end, ending)
    return kept


def _longest_matches(trie: Trie, words: list[str]) -> Matches:
    """Start word -> (last word, the (key, term)s ending there) of the longest term starting
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


class PieceWords(NamedTuple):
    """The words of a text's pieces in one stream, a SEPARATOR word between two pieces: the
    term tries are walked once per text, not once per piece."""

    spaced: str  # the pieces joined, non-word characters made spaces: split() = the words
    lowered: list[str]  # the words lower-cased (WORD_RE.findall of each piece lower-cased)
    aligned: bool  # whether `lowered` is the words of `spaced` each lower-cased
    piece_starts: list[int]  # where each piece's words start in the stream


# Topics and tasks read the same pieces one after the other: the second reading is remembered.
@lru_cache(maxsize=4)
def piece_words(parts: tuple[tuple[str, float], ...]) -> PieceWords:
    """The words of the pieces, as `words_of` reads each, in one stream."""
    texts = [text for text, _ in parts]
    if any(SEPARATOR in text for text in texts):
        texts = [text.replace(SEPARATOR, " ") for text in texts]  # a non-word character
    joined = f" {SEPARATOR} ".join(texts)
    if "\u0130" in joined or "\u03a3" in joined:
        # Lower-casing `İ` (two characters) and `Σ` (by what follows it) would read a
        # piece differently beside the others: each piece is read on its own.
        spaced_pieces: list[str] = []
        lowered: list[str] = []
        for text in texts:
            spaced, words, _ = words_of(text)
            spaced_pieces.append(spaced)
            lowered += (*words, SEPARATOR)
        spaced, aligned = f" {SEPARATOR} ".join(spaced_pieces), False
        del lowered[-1]
    else:
        spaced, lowered, aligned = words_of(joined)
    separators = compress(count(1), map(SEPARATOR.__eq__, lowered))
    return PieceWords(spaced, lowered, aligned, [0, *separators])


def words_of(text: str) -> tuple[str, list[str], bool]:
    """The text with its non-word characters made spaces (its split() is
    `WORD_RE.findall(text)`), `WORD_RE.findall(text.lower())`, and whether the latter is the
    former's words each lower-cased (not so only where rare Unicode changes the words); faster.
    SEPARATOR characters are kept, as words of their own where spaces surround them.

    Every non-word character is made a space, then the text is split: ASCII characters are
    mapped as bytes, the few distinct non-ASCII ones are tested one by one (no word character
    is white space to str.split, so the runs it returns are the words). When lower-casing
    changes only ASCII letters (bytes lower-case those and nothing else), no word boundary
    moves and no word changes length, so the words of the lower-cased text are the words
    lower-cased; and so they are whenever the text holds neither `İ` nor `Σ`: every other
    character lower-cases to one character, a word character to a word character, whatever
    surrounds it.
    """
    if text.isascii():
        spaced = text.encode("ascii").translate(_NOT_WORD_TO_SPACE)
        return spaced.decode("ascii"), spaced.lower().decode("ascii").split(), True
    encoded = text.encode("utf-8", "surrogatepass")
    words = encoded.translate(_NOT_WORD_TO_SPACE).decode("utf-8", "surrogatepass")
    others = set(encoded.translate(None, _ASCII).decode("utf-8", "surrogatepass"))
    for char in others:
        if not _WORD_CHAR_RE.match(char):
            words = words.replace(char, " ")
    if "\u0130" not in others and "\u03a3" not in others:
        return words, words.lower().split(), True
    tokens = words.split()
    lowered = WORD_RE.findall(text.lower())
    if len(lowered) != len(tokens):  # lower-casing changed the words (rare Unicode)
        return words, [t.lower() for t in tokens], True
    return words, lowered, False

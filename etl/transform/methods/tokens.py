"""A text read as tokens, each with a shape, a position and flags; sentence starts.

Each token gets a shape: a *strong* name (CommVQ, GSM8K, LLaMA-3.1, scVI: capitals inside, or
letters mixed with digits), a *title* word (Adam, Diffusion), a number, a lowercase word,
punctuation, or an adjective made of a name (`RoPE-based`). The pieces of text between spaces
are tokenized once and remembered (the finder's one cache): a vocabulary repeats.
"""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache, reduce
from itertools import accumulate, compress
from operator import iadd, sub
from typing import Any

from etl.transform.clean import anchored_finditer, sub_matches
from etl.transform.methods.vocabulary import (
    ABBREVIATIONS,
    ADJ_ENDINGS,
    ADJ_SUFFIX_WORDS,
    GENERIC,
    GENERIC_TITLES,
    METRIC_ROOTS,
    TRIGGERS_AND_COMMA,
)

# a possessive `'s` is left out (`LLM's` is `LLM`); `CNN/DailyMail` is one name.
# (Possessive quantifiers: nothing after them can fail, so they only save backtracking state.)
TOKEN_RE = re.compile(r"[^\W_]++(?:(?:[-.+@/]|['’](?![sS]\b))[^\W_]++)*+\+*+|\S")
# A token and the white space before it (`\s` is what str.lstrip strips).
SPACED_TOKEN_RE = re.compile(r"\s*+(?:" + TOKEN_RE.pattern + ")")
# URLs (with a scheme, `www.`, or a bare code-host or `.com/`-style address) are not names.
URL_MASK_RE = re.compile(
    r"(?i)(?:\b(?:https?://|www\.)|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|io|net|co|ai|edu|dev)/)"
    r"[^\s<>\"'`{}|\\^\[\]]*"
)
# What every URL_MASK_RE match holds ('://' or '.com/'-style, so a slash; or 'www.').
URL_MASK_ANCHORS = ("/", "www.")

STRONG, TITLE, NUM, LOWER, PUNCT, ADJ = range(6)
NAME_SHAPES = frozenset({STRONG, TITLE, ADJ})  # where a mention may start
SENTENCE_ENDS = frozenset({".", "?", "!", ":", "\x00"})
BOUNDARIES = SENTENCE_ENDS | {")"}
HEADING_ENDS = frozenset({".", "?", "!"})
OPENERS = frozenset({"(", "“", '"', "'", "‘", "["})
HARDWARE_RE = re.compile(r"^(?:[AHVLB]\d{2,4}[A-Za-z]?|RTX|GTX|TPUv\d|M[1-4])$")
NUMBER_FORMAT_RE = re.compile(r"^(?:FP|BF|INT|UINT|TF|NF)\d+$", re.I)
UNIT_RE = re.compile(
    r"^(?:\d[\d.,]*(?:[x×]\d[\d.,]*)?(?:[KMBTkmbt]|x|×|st|nd|rd|th|D|d|px|ms|s|h|GB|MB|TB)?"
    r"|[vV]\d+(?:\.\d+)*)$"
)
SIZE_RE = re.compile(r"^\d+(?:\.\d+)?(?:x\d+)?[KMBT]$")
# `seq2seq`, `sim2real`, `text-to-SQL`: one thing turned into another.
PARADIGM_RE = re.compile(r"^[A-Za-z]+(?:2|-to-)[A-Za-z]+$")
PARADIGM_SPLIT_RE = re.compile(r"2|-to-")
GREEK_RE = re.compile(r"[\u0370-\u03ff]")
GLUED_RE = re.compile(r"^[a-z]{2,}\.[A-Z][a-z]+$")
ROMAN_RE = re.compile(r"^[IVXivx]+$")
MATH_TOKEN_RE = re.compile(r"^[a-z][A-Z]\d*$")
DIGIT_LETTER_RE = re.compile(r"\d")
JOINER_SPLIT_RE = re.compile(r"[-+]")
ASCII_LETTERS = frozenset(string.ascii_letters)  # c.isascii() and c.isalpha()

KEY_IGNORED_RE = re.compile(r"[\s\-_./’']+")  # what method keys leave out


@lru_cache(maxsize=4096)
def method_key(name: str) -> str:
    """Key under which spellings of one artifact merge: case, hyphens, spaces and plurals."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = KEY_IGNORED_RE.sub("", text)
    return text[:-1] if len(text) > 3 and text.endswith("s") and not text.endswith("ss") else text


@lru_cache(maxsize=4096)
def generic_key(token: str) -> str:
    """A token compared with the generic lists: lower case, possessive and plural `s` removed."""
    if token.endswith(("'s", "’s")):
        token = token[:-2]
    if len(token) > 2 and token[-1] == "s" and (token[-2].isupper() or token[-2].isdigit()):
        token = token[:-1]  # LLMs, GNNs (but not DAS)
    return token.lower()


@lru_cache(maxsize=1 << 16)  # pieces are forgotten in batches; their words' shapes need not be
def shape(token: str) -> int:
    """What a token looks like: a strong name, a title word, a number, a lowercase word ..."""
    if not token[0].isalnum():
        return PUNCT
    if "@" in token or token.split("-", 1)[0].lower() in METRIC_ROOTS:
        return LOWER  # NDCG@10, BLEU-4, ROUGE-L
    if "/" in token:
        parts = token.split("/")
        if all(len(p) < 2 or p.islower() or generic_key(p) in GENERIC for p in parts):
            return LOWER  # A/B, input/output, LLMs/VLMs
    if UNIT_RE.match(token):
        return NUM
    low = generic_key(token)
    parts = token.split("-")
    if len(parts) > 1 and parts[-1].islower() and parts[-1].isalpha():
        last = parts[-1]
        if last in ADJ_SUFFIX_WORDS or (last.endswith(ADJ_ENDINGS) and len(last) > 4):
            return ADJ
    if low in GENERIC or HARDWARE_RE.match(token) or NUMBER_FORMAT_RE.match(token):
        return LOWER
    if len(parts) == 2 and (
        (parts[1].islower() and generic_key(parts[0]) in GENERIC)
        or (_plain(parts[0]) and generic_key(parts[1]) in GENERIC)
    ):
        return LOWER  # VC-dimension, non-IID, 4-DoF, weighted-F1: a generic word qualified
    if PARADIGM_RE.match(token) and _paradigm(token):
        return LOWER  # seq2seq, sim2real, text-to-SQL: a setting, not a name
    if GREEK_RE.search(token):
        return LOWER  # math: `UΛ`, `δD`
    if GLUED_RE.match(token):
        return LOWER  # `models.Our`: two words glued by a missing space
    if ROMAN_RE.match(token) and token.isupper():
        return LOWER
    if MATH_TOKEN_RE.match(token) or (len(token) == 1 and not token.isdigit()):
        return LOWER
    if is_strong(token):
        if (
            len(parts) == 2
            and parts[0][:1].isupper()
            and parts[0][1:].islower()
            and (parts[1].endswith("s") and generic_key(parts[1]) in GENERIC)
        ):
            return LOWER  # Video-LLMs: a plain word qualifying a generic class, in the plural
        return STRONG
    if token[0].isupper():
        return LOWER if low in GENERIC_TITLES else TITLE
    return LOWER


def _plain(word: str) -> bool:
    """A plain lower-case word (`non`, `weighted`) or a number, not a name (`Megatron`)."""
    return word.isdigit() or (word.isalpha() and word.islower())


def _paradigm(token: str) -> bool:
    """`sim2real`, `text-to-SQL`: plain or generic words on both sides, the second a word of
    four letters or more (`wav2vec`, `pix2pix` are names)."""
    source, target = PARADIGM_SPLIT_RE.split(token, maxsplit=1)
    return (
        _plain_or_generic(source)
        and _plain_or_generic(target)
        and (len(target) >= 4 or generic_key(target) in GENERIC)
    )


def _plain_or_generic(word: str) -> bool:
    """A plain lower-case word of some length or a generic one (`sim`, `real`, `SQL`; not the
    `vec` of `wav2vec`, which names)."""
    plain = word.islower() or (word[:1].isupper() and word[1:].islower())  # `text`, `Text`
    return (plain and len(word) >= 3) or generic_key(word) in GENERIC


def is_strong(token: str) -> bool:
    """Shaped like a coined name: inner capitals (DropEdge, scVI), or letters with digits."""
    parts = [p for p in JOINER_SPLIT_RE.split(token) if p]
    capitalised = 0
    single_letter = False
    for part in parts:
        uppers = sum(map(str.isupper, part))
        if uppers >= 2 or (uppers and not part[0].isupper()):
            return True
        if uppers:
            capitalised += 1
            single_letter = single_letter or len(part) == 1
        letters = sum(map(ASCII_LETTERS.__contains__, part))  # not 2α
        mixed = letters and DIGIT_LETTER_RE.search(part) and not UNIT_RE.match(part)
        if mixed and (uppers or letters >= 3 or len(parts) > 1):
            return True
    if capitalised >= 2 and single_letter:
        return True  # Best-of-N, Q-Iteration
    # Llama-2, Whisper-large-v3
    return len(parts) > 1 and parts[0][:1].isupper() and any(UNIT_RE.match(p) for p in parts[1:])


def mask_urls(text: str) -> str:
    """The text with each URL_MASK_RE match blanked (`\\x00` then spaces, lengths kept)."""
    matches = anchored_finditer(URL_MASK_RE, text, URL_MASK_ANCHORS)
    return sub_matches(text, matches, lambda m: "\x00" + " " * (len(m.group(0)) - 1))


# The first space of a run of spaces: a text is cut there into pieces, the rest of the run
# starting the next piece (as white space before its first token).
PIECE_SPLIT_RE = re.compile(r"(?<! ) ")
# Per token in a piece's tuple: the token, its lower case, shape, advance, length, and whether
# it may cue an introduced name, start a mention, or end a sentence (see `_Text`).
TOKEN_FIELDS = 8
WORD, LOWER_CASE, SHAPE, ADVANCE, LENGTH, CUE, NAME_SHAPED, BOUNDARY = range(TOKEN_FIELDS)
Piece = tuple[str | int, ...]


class _PieceTokens(dict[str, Piece]):
    """A piece of text between spaces -> for each of its tokens, in one flat tuple: the token,
    its lower case, its shape, its advance: how far it reaches past the previous token (its
    length with the white space before it; the first token counts the space before the piece),
    its length, and the three flags of `_flags`.

    Filled as pieces are first seen, remembered across texts (a vocabulary repeats).
    """

    def __missing__(self, piece: str) -> Piece:
        # Memory stays flat on huge, varied inputs, and the pieces a text is mostly made of
        # come back at once; a larger cache touched more memory for no gain on a one-pass load
        # (benchmarks/HISTORY.md).
        if len(self) > 5_000:
            self.clear()
        # A piece holds one to three tokens: a loop over them is cheaper than the list-wide
        # map() calls of `_tokenize` (each made for so few items), and a piece is tokenized
        # again each time the cache has been cleared (some five pieces a text).
        fields: list[str | int] = []
        for spaced in _spaced_tokens(piece):
            word = spaced.lstrip()
            low = word.lower()
            kind = shape(word)
            fields += (word, low, kind, len(spaced), len(word))
            fields += (low in TRIGGERS_AND_COMMA, kind in NAME_SHAPES, word in BOUNDARIES)
        tokens = self[piece] = tuple(fields)
        return tokens


_PIECE_TOKENS = _PieceTokens()


def _spaced_tokens(piece: str) -> list[str]:
    """`SPACED_TOKEN_RE.findall(" " + piece)`. A piece of letters and digits only is one
    token: str.isalnum is `[^\\W_]` (what `\\w` matches but `_`), so TOKEN_RE's first run takes
    all of it and nothing follows. Some two in five new pieces are such words."""
    if piece.isalnum():
        return [" " + piece]
    # White space with no token after it is in no match; left in, each of its positions would
    # be tried to its end: quadratic in the run's length (a masked URL is such a run).
    return SPACED_TOKEN_RE.findall(" " + piece.rstrip())


def _flags(
    words: list[str], lower: list[str], shapes: list[int]
) -> tuple[list[bool], list[bool], list[bool]]:
    """Per token: whether it may cue an introduced name (a trigger word or a comma), start a
    mention (its shape), or end a sentence."""
    return (
        list(map(TRIGGERS_AND_COMMA.__contains__, lower)),
        list(map(NAME_SHAPES.__contains__, shapes)),
        list(map(BOUNDARIES.__contains__, words)),
    )


class Text:
    """A text's tokens with their shapes, positions and sentence starts."""

    words: list[str]
    lower: list[str]
    shapes: list[int]
    starts: list[int]
    ends: list[int]
    # per token: a trigger word or comma, a shape that may start a mention, a sentence end
    cues: list[bool]
    name_shaped: list[bool]
    boundaries: list[bool]

    def __init__(self, text: str):
        masked = mask_urls(text) if "/" in text else text
        self.text = text
        if not self._tokenize_pieces(masked):
            self._tokenize(masked)
        self.n = len(self.words)
        self.initial = self._sentence_starts()
        self.heading_end = self._heading_end()

    def _tokenize(self, masked: str) -> None:
        """Words, where they start and end, their lower case, shapes and flags (`_flags`), from
        one pass of the tokenizer over the whole text."""
        # Each token with the white space before it: the words are those stripped, and where
        # they end adds up (no Match objects to make and read).
        spaced: list[str] = SPACED_TOKEN_RE.findall(masked)
        self.words = words = list(map(str.lstrip, spaced))
        self.ends = list(accumulate(map(len, spaced)))
        self.starts = list(map(sub, self.ends, map(len, words)))
        self.lower = lower = list(map(str.lower, words))
        self.shapes = shapes = list(map(shape, words))
        self.cues, self.name_shaped, self.boundaries = _flags(words, lower, shapes)

    def _tokenize_pieces(self, masked: str) -> bool:
        """What `_tokenize` finds, read from the text's pieces between spaces, each tokenized
        once (see `_PieceTokens`): a text is mostly pieces seen before. False, with nothing
        set, when a piece before the text's trailing white space holds no token or ends in
        white space: its length would be lost.

        No token holds a space, and the tokenizer looks at nothing past one, so the text's
        tokens are its pieces' tokens in order. What no token covers is white space; when it
        is all at the end, the tokens' advances add up to the length of the stripped text.
        """
        pieces = masked.split(" ") if "  " not in masked else PIECE_SPLIT_RE.split(masked)
        # the pieces' tuples added to one list (`+=` copies a tuple at once; chain() goes item
        # by item)
        fields: list[Any] = reduce(iadd, map(_PIECE_TOKENS.__getitem__, pieces), [])
        # the first piece has no space before it: where tokens end starts from -1
        ends = list(accumulate(fields[ADVANCE::TOKEN_FIELDS], initial=-1))
        if ends[-1] != len(masked.rstrip()):
            return False
        del ends[0]
        self.ends = ends
        self.starts = list(map(sub, ends, fields[LENGTH::TOKEN_FIELDS]))
        self.words = fields[WORD::TOKEN_FIELDS]
        self.lower = fields[LOWER_CASE::TOKEN_FIELDS]
        self.shapes = fields[SHAPE::TOKEN_FIELDS]
        self.cues = fields[CUE::TOKEN_FIELDS]
        self.name_shaped = fields[NAME_SHAPED::TOKEN_FIELDS]
        self.boundaries = fields[BOUNDARY::TOKEN_FIELDS]
        return True

    def _heading_end(self) -> int:
        """Where a Title-Cased first sentence (a paper title) ends, or 0 if there is none.

        In `Deep Residual Learning for Image Recognition` capitals do not mark names.
        """
        stops = map(HEADING_ENDS.__contains__, self.words)
        end = next(compress(range(self.n), stops), self.n)
        words = [
            w
            for w, s in zip(self.words[:end], self.shapes[:end], strict=True)
            if s in (TITLE, LOWER) and len(w) > 3
        ]
        capitalised = sum(w[0].isupper() for w in words)
        return end if len(words) >= 4 and capitalised >= 0.75 * len(words) else 0

    def _sentence_starts(self) -> list[bool]:
        """True where capitalisation is forced: text start, after `.`, `?`, `!`, `:` or `1)`."""
        words, n, lower = self.words, len(self.words), self.lower
        initial = [False] * n
        ends = compress(range(n), self.boundaries)
        for i in [-1, *ends]:
            if i >= 0:
                word = words[i]
                if word == "." and i > 0 and lower[i - 1] in ABBREVIATIONS:
                    continue
                if word == ")" and not (
                    i > 0
                    and (words[i - 1].isdigit() or ROMAN_RE.match(words[i - 1]))
                    and (i < 2 or initial[i - 1])
                ):
                    continue
            j = i + 1
            while j < n and words[j] in OPENERS:
                initial[j] = True
                j += 1
            if j < n:
                initial[j] = True
        return initial

    def writes_in_lower_case(self, low: str) -> bool:
        """Whether a lower-case word occurs as written: `Using` is ordinary if `using` occurs.

        (A text rarely asks this, mostly never: a look through the words when asked is cheaper
        than a set of them made for every text.)
        """
        return low.islower() and low in self.words

    def span(self, first: int, last: int) -> str:
        """The text from token `first` to token `last`, as written."""
        return self.text[self.starts[first] : self.ends[last]]

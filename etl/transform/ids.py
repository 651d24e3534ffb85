"""Deterministic ids and content hashes, so reruns and duplicates never create new rows."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache
from typing import Any

NOT_WORD_RE = re.compile(r"[\W_]")
_ASCII_ALNUM = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Byte tables: ASCII letters lower-cased; ASCII characters outside [A-Za-z0-9] (\W and `_`)
# deleted; every ASCII character deleted (what is left of UTF-8 is the non-ASCII text).
_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_ASCII_NOT_WORD = bytes(b for b in range(128) if b not in _ASCII_ALNUM)
_ASCII = bytes(range(128))


def content_key(text: str) -> str:
    """Text reduced to what identifies it: case, accents, markup residue and spacing ignored.

    That is NFKD, casefold, then every `[\\W_]` character removed. ASCII characters are
    removed (and lower-cased) as bytes; the few distinct non-ASCII ones are case-folded and
    looked at one by one (case folding maps each character on its own, and is slower on a
    whole text than this).
    """
    if text.isascii():  # NFKD changes nothing, casefold is lower-casing
        return text.encode("ascii").translate(_LOWER, _ASCII_NOT_WORD).decode("ascii")
    decomposed = unicodedata.normalize("NFKD", text)
    encoded = decomposed.encode("utf-8", "surrogatepass")
    kept = encoded.translate(_LOWER, _ASCII_NOT_WORD).decode("utf-8", "surrogatepass")
    others = encoded.translate(None, _ASCII).decode("utf-8", "surrogatepass")
    for char in set(others):
        folded = _folded_word_chars(char)
        if folded != char:
            kept = kept.replace(char, folded)
    return kept


@lru_cache(maxsize=4096)
def _folded_word_chars(char: str) -> str:
    """A character case-folded, without the `[\\W_]` characters of its folding (remembered: a
    text holds few distinct non-ASCII characters, and texts hold the same ones)."""
    return "".join(c for c in char.casefold() if not NOT_WORD_RE.match(c))


# Abstract fields that hold no abstract: they say nothing about which paper a record is.
PLACEHOLDER_ABSTRACTS = frozenset(
    content_key(text)
    for text in (
        "Part of",
        "N/A",
        "NA",
        "None",
        "Null",
        "TBA",
        "TBD",
        "Abstract",
        "No abstract",
        "No abstract available",
        "Abstract not available",
        "Abstract unavailable",
        "Coming soon",
        "To be announced",
        "To appear",
    )
)
# Title fields that hold no title (withdrawn or unnamed submissions).
PLACEHOLDER_TITLES = PLACEHOLDER_ABSTRACTS | frozenset(
    content_key(text)
    for text in ("Withdrawn", "Withdrawn paper", "Untitled", "No title", "Deleted", "Removed")
)
# Shorter abstracts do not identify a paper: unrelated records share text that short.
MIN_ABSTRACT_WORDS = 20
MIN_ABSTRACT_KEY_CHARS = 100  # the same, for scripts written without spaces


def substantive(abstract: str) -> bool:
    """Whether an abstract is long enough, and not a placeholder, to identify a paper."""
    return _substantive(abstract, content_key(abstract))


def _substantive(abstract: str, key: str) -> bool:
    """`substantive`, given the abstract's content key (computed once per record)."""
    if not key or key in PLACEHOLDER_ABSTRACTS:
        return False
    return len(key) >= MIN_ABSTRACT_KEY_CHARS or len(abstract.split()) >= MIN_ABSTRACT_WORDS


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def identify(
    abstract: str, title: str | None, external: tuple[str, ...] = ()
) -> tuple[str, tuple[str, ...]]:
    """A record's paper id and identity keys (`paper_id` and `identity_keys` in one pass)."""
    abstract_key = content_key(abstract)
    title_key = content_key(title) if title else ""
    if title_key in PLACEHOLDER_TITLES:
        title_key = ""
    strong = _substantive(abstract, abstract_key)
    keys = list(external)
    if strong:
        keys.append("abs:" + _digest(abstract_key))
    elif abstract_key and not title_key:
        keys.append("text:" + _digest(abstract_key))
    if title_key:
        keys.append("title:" + _digest(title_key))
    if external:
        basis = external[0]
    elif strong or not title_key:  # as ids were before identity keys: stored ids stay
        basis = abstract_key or "title:" + content_key(title or "")
    else:
        basis = "title:" + title_key
    return "p" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:16], tuple(keys)


def identity_keys(
    abstract: str, title: str | None, external: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """What identifies the paper a record describes, strongest first.

    External ids (`doi:`, `arxiv:`, `openreview:`), then `abs:` (a substantive abstract's
    content key, hashed) and `title:` (unless a placeholder such as `Withdrawn`). A record
    with neither a substantive abstract nor a title is known by its short text (`text:`), so
    that a rerun finds it again. The loader resolves these against the papers already stored
    (see etl.load.identity).
    """
    return identify(abstract, title, external)[1]


def paper_id(abstract: str, title: str | None, external: tuple[str, ...] = ()) -> str:
    """A stable paper id: from the first external id, else the substantive abstract (as
    before identity keys existed, so stored ids stay), else the title, else the short text."""
    return identify(abstract, title, external)[0]


def content_hash(value: Any) -> str:
    """A short hash of frozen dataclasses and plain data (their repr is deterministic)."""
    return hashlib.sha256(repr(value).encode("utf-8")).hexdigest()[:24]

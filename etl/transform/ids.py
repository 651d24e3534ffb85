"""Deterministic ids and content hashes, so reruns and duplicates never create new rows."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

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
    abstract: str,
    title: str | None,
    external: tuple[str, ...] = (),
    authors: Sequence[str] = (),
    year: int | None = None,
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
        keys.extend(bib_keys(title_key, authors, year))
    if external:
        basis = external[0]
    elif strong or not title_key:  # as ids were before identity keys: stored ids stay
        basis = abstract_key or "title:" + content_key(title or "")
    else:
        basis = "title:" + title_key
    return "p" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:16], tuple(keys)


def identity_keys(
    abstract: str,
    title: str | None,
    external: tuple[str, ...] = (),
    authors: Sequence[str] = (),
    year: int | None = None,
) -> tuple[str, ...]:
    """What identifies the paper a record describes, strongest first.

    External ids (`doi:`, `arxiv:`, `openreview:`, `openalex:`, `s2:`, `s2corpus:`, `dblp:`,
    `pwc:`), then `abs:` (a substantive abstract's content key, hashed), `title:` (unless a
    placeholder such as `Withdrawn`) and `bib:` (the title with its first author and year:
    see `bib_keys`). A record with neither a substantive abstract nor a title is known by its
    short text (`text:`), so that a rerun finds it again. The loader resolves these against
    the papers already stored (see etl.load.identity).
    """
    return identify(abstract, title, external, authors, year)[1]


def paper_id(abstract: str, title: str | None, external: tuple[str, ...] = ()) -> str:
    """A stable paper id: from the first external id, else the substantive abstract (as
    before identity keys existed, so stored ids stay), else the title, else the short text."""
    return identify(abstract, title, external)[0]


# Author names that name nobody, compared as content keys.
NOT_AUTHORS = frozenset({"anonymous", "anonymousauthor", "anonymousauthors", "others", "etal"})
NAME_PART_RE = re.compile(r"[^\W\d_]+")


def bib_keys(title_key: str, authors: Sequence[str], year: int | None) -> list[str]:
    """`bib:` keys: the title with its first author's family name and initial and a year, so
    that two records share one when their titles are the same, their first authors' family
    names are the same with compatible initials (`Wei Zhang`, `W. Zhang`, `Zhang, Wei`; and
    `Zhang Wei` written family name first), and their years are at most one apart (each record
    gives its year and the next). `Anika Li` and `Hana Li` share none. None without a year or
    an author: such records are matched by title and abstract."""
    if year is None:
        return []
    first = next((a for a in authors if content_key(a) not in NOT_AUTHORS), None)
    names = sorted(family_initials(first)) if first else []
    return [
        "bib:" + _digest(f"{title_key}|{family}|{initial}|{when}")
        for family, initial in names
        for when in (year, year + 1)
    ]


def family_initials(name: str) -> set[tuple[str, str]]:
    """(family name, initial of the given name) readings of a name: `Family, Given` has one;
    otherwise the last word is the family name, or the first (names written family first),
    each with the other end's initial. A family name is two letters or more."""
    if "," in name:
        family, _, given = name.partition(",")
        families, givens = _parts(family), _parts(given)
        if families:
            return {(families[-1], givens[0][:1] if givens else "")}
    parts = _parts(name)
    if len(parts) == 1:
        return {(parts[0], "")} if len(parts[0]) > 1 else set()
    readings = {(parts[-1], parts[0][:1]), (parts[0], parts[-1][:1])}
    return {(family, initial) for family, initial in readings if len(family) > 1}


def _parts(name: str) -> list[str]:
    """The words of a name as content keys (accents and case ignored, numbers dropped)."""
    return [key for part in NAME_PART_RE.findall(name) if (key := content_key(part))]


# Kinds of ids a source gives for a paper, in the order a paper's id is derived from them.
EXTERNAL_KINDS = ("doi", "arxiv", "openreview", "openalex", "s2", "s2corpus", "dblp", "pwc")
DOI_RE = re.compile(r"(?i)^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)$")
ARXIV_DOI_RE = re.compile(r"(?i)^10\.48550/arxiv\.(.+)$")
ARXIV_RE = re.compile(
    r"(?i)^(?:arxiv:\s*|https?://(?:www\.)?arxiv\.org/(?:abs|pdf)/)?"
    r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?/?$"
)
OPENREVIEW_RE = re.compile(r"^[A-Za-z0-9_-]{4,}$")
OPENALEX_RE = re.compile(r"(?i)^(?:https?://openalex\.org/)?(W\d+)$")
S2_RE = re.compile(r"(?i)^[0-9a-f]{40}$")
DBLP_RE = re.compile(
    r"(?i)^(?:DBLP:|https?://dblp\.org/rec/)?([a-z0-9_-]+(?:/[^/\s]+)+?)(?:\.html|\.xml|\.bib)?$"
)
PWC_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def doi_key(doi: str) -> str | None:
    """The identity key of a DOI (any case, as a URL or not); arXiv's own DOIs
    (`10.48550/arXiv.2101.00001`) name the arXiv paper, and give its `arxiv:` key."""
    match = DOI_RE.match(doi.strip())
    if not match:
        return None
    value = unquote(match.group(1)).lower()
    if arxiv := ARXIV_DOI_RE.match(value):
        return arxiv_key(arxiv.group(1))
    return "doi:" + value


def arxiv_key(value: str) -> str | None:
    """The identity key of an arXiv id, without its version (`2101.00001v2` ->
    `arxiv:2101.00001`), given bare, as `arXiv:...` or as an abstract or PDF URL."""
    match = ARXIV_RE.match(value.strip())
    return "arxiv:" + match.group(1).lower() if match else None


def source_keys(ids: Iterable[tuple[str, str]]) -> list[str]:
    """Identity keys of the ids a source gives (`(kind, value)`; see RawRecord.ids); values
    that are not ids of their kind give none."""
    keys = []
    for kind, value in ids:
        if key := _source_key(kind, value.strip()):
            keys.append(key)
    return keys


def _source_key(kind: str, value: str) -> str | None:
    """One id's identity key."""
    if kind == "doi":
        return doi_key(value)
    if kind == "arxiv":
        return arxiv_key(value)
    patterns = {"openreview": OPENREVIEW_RE, "openalex": OPENALEX_RE, "dblp": DBLP_RE}
    if kind in patterns:
        match = patterns[kind].match(value)
        if not match:
            return None
        found = match.group(match.lastindex or 0)
        return f"{kind}:{found.upper() if kind == 'openalex' else found}"
    if kind == "s2" and S2_RE.match(value):
        return "s2:" + value.lower()
    if kind == "s2corpus" and value.isdigit():
        return "s2corpus:" + str(int(value))
    if kind == "pwc" and PWC_RE.match(value.lower()):
        return "pwc:" + value.lower()
    return None


def ordered_external(keys: Iterable[str]) -> tuple[str, ...]:
    """External keys without repeats, in the order of EXTERNAL_KINDS (a paper's id comes
    from the first)."""
    rank = {kind: number for number, kind in enumerate(EXTERNAL_KINDS)}
    unique = dict.fromkeys(keys)
    return tuple(sorted(unique, key=lambda k: rank.get(k.split(":", 1)[0], len(rank))))


def content_hash(value: Any) -> str:
    """A short hash of frozen dataclasses and plain data (their repr is deterministic)."""
    return hashlib.sha256(repr(value).encode("utf-8")).hexdigest()[:24]

"""What every source reader shares: a RawRecord from the fields it mapped, with the same
checks for every shape (a title or an abstract; sizes within the limits), and everything it
did not map kept as JSON in `extra`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from etl.extract import json_io
from etl.extract.fields import (
    CODE_HOST_HINTS,
    MAX_ABSTRACT_CHARS,
    MAX_REFERENCES,
    MAX_TITLE_CHARS,
)
from etl.extract.venues import parse_venue, venue_in_name
from etl.models import RawRecord, Reject, SourceFile

Raw = str | Callable[[], str]  # a record's text, or how to make it (only a reject needs it)
Listed = tuple[str, str, str | None]  # (task or method, name, JSON of what else the source says)
SPACE_RE = re.compile(r"\s+")
YEAR_RE = re.compile(r"(?<!\d)(1[89]\d{2}|20\d{2})(?!\d)")
# Author names that name nobody: a hidden author list, or "and others".
NOT_AUTHORS = frozenset({"anonymous", "anonymousauthor", "anonymousauthors", "others", "etal"})
HOMONYM_RE = re.compile(r"^(.*\S)\s+(\d{4})$")  # `Wei Zhang 0001`: DBLP's homonym number
LATEX_MARKS = ("\\", "{", "~")  # a value without them is no LaTeX to read
UNESCAPED_PERCENT_RE = re.compile(r"(?<!\\)%")
# Macros whose argument pylatexenc drops, but which only box or set the font of their text.
KEPT_LATEX_MACROS = (
    "mbox",
    "makebox",
    "hbox",
    "texttt",
    "textsf",
    "textup",
    "textmd",
    "textnormal",
)


def build(
    source: SourceFile,
    position: int,
    raw: Raw,
    *,
    title: str | None,
    abstract: str | None,
    authors: Iterable[str] = (),
    keywords: Iterable[str] = (),
    links: Iterable[tuple[str, str]] = (),
    status: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    ids: Iterable[tuple[str, str]] = (),
    listed: Iterable[Listed] = (),
    extra: Mapping[str, Any] | None = None,
    author_links: tuple[tuple[str, tuple[str, ...]], ...] = (),
    references: Iterable[tuple[str, str]] = (),
    cited_by_count: int | None = None,
) -> RawRecord | Reject:
    """A RawRecord of a source's mapped fields, or a Reject saying what is wrong with them.

    The record's own venue and year beat the file's (its header or name), unless the user
    gave them (`--venue`, `--year`). Unmapped text fields that name a code host (a BibTeX
    `note` with `github.com/...`) are searched for repositories too.
    """
    if not title and not abstract:
        return Reject(
            source.path, position, "record has neither a title nor an abstract", _raw(raw)
        )
    for name, value, limit in (
        ("abstract", abstract, MAX_ABSTRACT_CHARS),
        ("title", title, MAX_TITLE_CHARS),
    ):
        if value and len(value) > limit:
            reason = f"{name} is {len(value):,} characters; the limit is {limit:,}"
            return Reject(source.path, position, reason, _raw(raw)[:10_000])
    cited = tuple((kind, value) for kind, value in references if value)
    if len(cited) > MAX_REFERENCES:
        reason = f"{len(cited):,} references; the limit is {MAX_REFERENCES:,}"
        return Reject(source.path, position, reason, _raw(raw)[:10_000])
    kept = {k: v for k, v in (extra or {}).items() if v not in (None, "", [], {})}
    mentions = tuple(
        (name, value)
        for name, value in kept.items()
        if isinstance(value, str) and any(hint in value.lower() for hint in CODE_HOST_HINTS)
    )
    return RawRecord(
        source=source.path,
        position=position,
        venue=source.venue if source.venue_given or not venue else venue,
        year=source.year if source.year_given or year is None else year,
        title=title or None,
        abstract=abstract or None,
        authors=tuple(authors),
        keywords=tuple(dict.fromkeys(k for k in keywords if k)),
        links=tuple((name, url) for name, url in links if url),
        status=status or None,
        extra=json_io.dumps(kept) if kept else None,
        author_links=author_links,
        code_mentions=mentions,
        ids=tuple(dict.fromkeys((kind, value) for kind, value in ids if value)),
        listed=tuple(listed),
        references=cited,
        cited_by_count=cited_by_count,
    )


def _raw(raw: Raw) -> str:
    return raw if isinstance(raw, str) else raw()


def text(value: Any) -> str | None:
    """A string field stripped, or None when missing, empty or not a string or number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        return None
    return value.strip() or None


def one_line(value: Any) -> str | None:
    """A string field with its runs of white space (line breaks, indents) made one space."""
    found = text(value)
    return SPACE_RE.sub(" ", found) if found else None


def first_text(value: Any) -> str | None:
    """The first string of a list field (Crossref writes titles as lists), or the string."""
    if isinstance(value, list):
        return next((t for item in value if (t := text(item))), None)
    return text(value)


def as_dict(value: Any) -> dict[str, Any]:
    """A mapping field, or an empty one when the source gives something else."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A list field, or an empty one when the source gives something else."""
    return value if isinstance(value, list) else []


def year_of(value: Any) -> int | None:
    """A plausible year from a number or text (`2019`, `2019-06-01`, `Mon, 2 Apr 2007`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1800 <= value <= 2100 else None
    match = YEAR_RE.search(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def count_of(value: Any) -> int | None:
    """A count a source gives (`cited_by_count`): a whole number from 0, else None."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    number = int(value) if isinstance(value, int) or value.strip().isdigit() else None
    return number if number is not None and 0 <= number < 2**31 else None


def year_of_epoch_ms(value: Any) -> int | None:
    """The year of a time given in milliseconds since 1970 (OpenReview's `cdate`)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, UTC).year
    except (OverflowError, OSError, ValueError):
        return None


def venue_of(written: str | None) -> tuple[str | None, int | None, str | None]:
    """Venue, year and what else a venue string says: a known venue by its canonical name,
    an unknown one as written (see etl.extract.venues)."""
    if not written:
        return None, None, None
    return parse_venue(written)


def known_venue(written: str | None) -> tuple[str | None, int | None]:
    """A known venue (and year) named in a string, else (None, its year)."""
    if not written:
        return None, None
    return venue_in_name(written)


def dblp_homonyms(names: Iterable[str]) -> tuple[list[str], dict[str, str]]:
    """Names without DBLP's homonym numbers, and the numbers by name: `Zoltán Fülöp 0001` is
    DBLP's first of several Zoltán Fülöps, an attribute of the author and not their name."""
    plain: list[str] = []
    numbers: dict[str, str] = {}
    for name in names:
        match = HOMONYM_RE.match(name)
        if match:
            name = match.group(1)
            numbers[name] = match.group(2)
        plain.append(name)
    return plain, numbers


def is_author(name: str) -> bool:
    """Whether a name names an author (not `Anonymous`, `others`, `et al.`)."""
    return re.sub(r"[\W_]", "", name.casefold()) not in NOT_AUTHORS


@lru_cache(maxsize=4096)
def latex_to_text(value: str) -> str:
    """LaTeX accents, commands and braces made text (`Bal\\'azs` -> `Balázs`, `{N}eural` ->
    `Neural`, `F.~P.` -> `F. P.`); other text unchanged. A brace left over (`$\\{$USENIX$\\}$`)
    goes too: no name, venue or id holds one."""
    if not any(mark in value for mark in LATEX_MARKS):
        return value
    try:  # `%` starts a LaTeX comment, but a BibTeX value means the character
        text = _latex_reader().latex_to_text(UNESCAPED_PERCENT_RE.sub(r"\\%", value))
    except Exception:  # pylatexenc's own errors: keep the value as written
        return value
    return SPACE_RE.sub(" ", text.replace("{", "").replace("}", "")).strip() or value


@lru_cache(maxsize=1)
def _latex_reader() -> Any:
    """pylatexenc's LaTeX-to-text converter, keeping the text of the boxes and fonts it
    would drop (`\\mbox{NeurIPS}`, `\\texttt{BERT}`)."""
    from pylatexenc import latex2text  # only sources written in LaTeX need it

    context = latex2text.get_default_latex_context_db()
    kept = [latex2text.MacroTextSpec(name, "%s") for name in KEPT_LATEX_MACROS]
    context.add_context_category("etl-kept", prepend=True, macros=kept)
    return latex2text.LatexNodes2Text(latex_context=context)


def dumps(value: Any) -> str:
    """A record as JSON text (for a reject's raw column)."""
    return json_io.dumps(value)


def unmapped(value: Mapping[str, Any], mapped: Iterable[str]) -> dict[str, Any]:
    """The fields of a record not in `mapped`: what `extra` keeps."""
    used = set(mapped)
    return {k: v for k, v in value.items() if k not in used}

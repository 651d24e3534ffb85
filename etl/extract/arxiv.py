"""The arXiv metadata snapshot: one JSON record per paper (`id`, `title`, `abstract`,
`authors_parsed`, `versions`, `journal-ref`, `doi`, `categories` ...).

Authors come from `authors_parsed`, one slot per entry as arXiv parsed the written list
(`[last, first, suffix, affiliations...]`); affiliations are kept in `extra`. The year is
that of the first version. A `journal-ref` that names a known venue gives the sighting that
venue (and its year); otherwise the sighting is arXiv's, a preprint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from etl.extract.fields import split_names
from etl.extract.records import (
    as_dict,
    as_list,
    build,
    is_author,
    known_venue,
    latex_to_text,
    one_line,
    text,
    unmapped,
    year_of,
)
from etl.models import RawRecord, Reject, SourceFile

MAPPED = ("id", "title", "abstract", "authors_parsed", "doi", "categories")


def map_record(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one snapshot record."""
    arxiv_id = text(value.get("id"))
    parsed = as_list(value.get("authors_parsed"))
    extra = unmapped(value, MAPPED)
    if parsed:
        authors, affiliations = _authors(parsed)
        if any(affiliations):
            extra["author_affiliations"] = affiliations
        if len(authors) == len(parsed):
            extra.pop("authors", None)  # every written slot is in the author rows
    else:
        authors = tuple(latex_to_text(a) for a in split_names(value.get("authors"), unique=False))
        extra.pop("authors", None)
    dois = (text(value.get("doi")) or "").split()
    journal = one_line(value.get("journal-ref"))
    venue, year = known_venue(journal)
    status = None
    if venue is None:
        venue, year, status = "arXiv", _first_version_year(value, arxiv_id), "preprint"
    elif year is None:
        year = _first_version_year(value, arxiv_id)
    return build(
        source,
        position,
        raw,
        title=text(value.get("title")),
        abstract=text(value.get("abstract")),
        authors=authors,
        keywords=(text(value.get("categories")) or "").split(),
        links=[("arxiv", arxiv_id or ""), *(("doi", doi) for doi in dois)],
        status=status,
        venue=venue,
        year=year,
        ids=[("arxiv", arxiv_id or ""), *(("doi", doi) for doi in dois)],
        extra=extra,
    )


def _authors(parsed: list[Any]) -> tuple[tuple[str, ...], list[list[str]]]:
    """One name per parsed entry (`first last suffix`, LaTeX made text) and its affiliations;
    entries with no name at all are not authors."""
    names: list[str] = []
    affiliations: list[list[str]] = []
    for entry in parsed:
        parts = [text(p) or "" for p in as_list(entry)]
        last, first, suffix = [*parts, "", "", ""][:3]
        name = latex_to_text(" ".join(p for p in (first, last, suffix) if p))
        if name and is_author(name):
            names.append(name)
            affiliations.append([p for p in parts[3:] if p])
    return tuple(names), affiliations


def _first_version_year(value: dict[str, Any], arxiv_id: str | None) -> int | None:
    """The year of the first version (`versions[0].created`), else the id's (`YYMM.`), else
    the last update's."""
    versions = as_list(value.get("versions"))
    first = as_dict(versions[0]) if versions else {}
    if year := year_of(first.get("created")):
        return year
    digits = (arxiv_id or "").rsplit("/", 1)[-1][:2]
    if digits.isdigit():
        yy = int(digits)
        return 1900 + yy if yy >= 91 else 2000 + yy
    return year_of(value.get("update_date"))

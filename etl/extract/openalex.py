"""OpenAlex works, from API pages (`results`) or snapshot lines: the abstract rebuilt from
`abstract_inverted_index`, authors from `authorships` in order (their ORCID as each
author's link), venue from `primary_location.source`, links from every location, the works
it cites from `referenced_works` (OpenAlex ids) and OpenAlex's own `cited_by_count`. Titles
and abstracts come with HTML character references (`&amp;`, `&#13;` for a carriage return):
they are decoded once."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

from etl.extract.records import (
    as_dict,
    as_list,
    build,
    count_of,
    is_author,
    text,
    unmapped,
    venue_of,
    year_of,
)
from etl.models import RawRecord, Reject, SourceFile

MAPPED = (
    "id",
    "doi",
    "title",
    "display_name",
    "abstract_inverted_index",
    "publication_year",
    "referenced_works",
    "cited_by_count",
)
# Sizes past which an inverted index is not an abstract (positions are word numbers).
MAX_ABSTRACT_WORDS = 50_000
# A line break left as the two characters `\n` (`&#13;\n`), not a LaTeX command (`\nabla`).
ESCAPED_BREAK_RE = re.compile(r"\\r\\n|\\[rn](?![a-z])")


def map_record(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one OpenAlex work."""
    ids = as_dict(value.get("ids"))
    abstract, problem = rebuild_abstract(value.get("abstract_inverted_index"))
    if problem:
        return Reject(source.path, position, f"abstract_inverted_index: {problem}", raw())
    authors, orcids = _authors(value.get("authorships"))
    primary = as_dict(value.get("primary_location"))
    venue, venue_year, _rest = venue_of(text(as_dict(primary.get("source")).get("display_name")))
    kind = text(value.get("type"))
    extra = unmapped(value, MAPPED)
    if set(ids) <= {"openalex", "doi"}:
        extra.pop("ids", None)  # both are identity keys
    return build(
        source,
        position,
        raw,
        title=html_text(text(value.get("title")) or text(value.get("display_name"))),
        abstract=abstract,
        authors=authors,
        author_links=(("orcid", orcids),) if any(orcids) else (),
        keywords=_keywords(value.get("keywords")),
        links=_links(value),
        status="preprint" if kind == "preprint" else None,
        venue=venue,
        year=year_of(value.get("publication_year")) or venue_year,
        ids=[
            ("openalex", text(value.get("id")) or text(ids.get("openalex")) or ""),
            ("doi", text(value.get("doi")) or text(ids.get("doi")) or ""),
        ],
        extra=extra,
        references=[
            ("openalex", w) for w in map(text, as_list(value.get("referenced_works"))) if w
        ],
        cited_by_count=count_of(value.get("cited_by_count")),
    )


def rebuild_abstract(index: Any) -> tuple[str | None, str | None]:
    """The abstract an inverted index (`{word: [positions]}`) encodes, words in position
    order; (None, why) when it is not one."""
    if index is None:
        return None, None
    if not isinstance(index, dict):
        return None, f"expected an object of words, got {type(index).__name__}"
    placed: list[tuple[int, str]] = []
    for word, positions in index.items():
        spots = positions if isinstance(positions, list) else [positions]
        if len(placed) + len(spots) > MAX_ABSTRACT_WORDS:  # counted before any is placed
            return None, f"more than {MAX_ABSTRACT_WORDS:,} words"
        for spot in spots:
            if not isinstance(spot, int) or isinstance(spot, bool) or spot < 0:
                return None, f"the word {word!r} has a position that is not a number: {spot!r}"
            placed.append((spot, word))
    placed.sort()
    return html_text(" ".join(word for _, word in placed)), None


def html_text(value: str | None) -> str | None:
    """Text with its HTML character references decoded, once (`&amp;amp;` is `&amp;`), and
    line breaks written as `\\n` made spaces."""
    if not value:
        return None
    return ESCAPED_BREAK_RE.sub(" ", html.unescape(value)).strip() or None


def _authors(authorships: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Author names in the order written, with each one's ORCID ("" where none)."""
    names: list[str] = []
    orcids: list[str] = []
    for authorship in as_list(authorships):
        authorship = as_dict(authorship)
        author = as_dict(authorship.get("author"))
        name = text(author.get("display_name")) or text(authorship.get("raw_author_name"))
        if name and is_author(name):
            names.append(name)
            orcids.append(text(author.get("orcid")) or "")
    return tuple(names), tuple(orcids)


def _texts(value: Any) -> list[str]:
    """The strings of a list field."""
    return [found for item in as_list(value) if (found := text(item))]


def _keywords(value: Any) -> list[str]:
    """Keyword names (objects with `display_name`, or plain strings)."""
    found = []
    for item in as_list(value):
        name = text(as_dict(item).get("display_name")) if isinstance(item, dict) else text(item)
        if name:
            found.append(name)
    return found


def _links(value: dict[str, Any]) -> list[tuple[str, str]]:
    """Landing pages and PDFs of every location (the primary one first), and the open-access
    URL."""
    locations = [value.get("primary_location"), *as_list(value.get("locations"))]
    locations.append(value.get("best_oa_location"))
    links: list[tuple[str, str]] = []
    for location in locations:
        location = as_dict(location)
        links.append(("url", text(location.get("landing_page_url")) or ""))
        links.append(("pdf", text(location.get("pdf_url")) or ""))
    links.append(("oa", text(as_dict(value.get("open_access")).get("oa_url")) or ""))
    return list(dict.fromkeys(link for link in links if link[1]))

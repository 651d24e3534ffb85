"""Crossref works (API responses, or the snapshot's `items`): titles as lists, authors as
given and family names, the abstract in JATS XML (tags stripped, paragraphs kept apart),
venue from `container-title` or `event`, year from `issued`. A preprint this work has or is
(`relation`: `has-preprint`, `is-preprint-of`) names the same paper: its DOI is a key too.
The works it cites come from `reference` (each by its `DOI`, else as its `unstructured`
text, else as the text its other fields make); `is-referenced-by-count` is Crossref's own
count of citing works.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

from etl.extract.records import (
    as_dict,
    as_list,
    build,
    count_of,
    first_text,
    is_author,
    one_line,
    text,
    unmapped,
    venue_of,
    year_of,
)
from etl.models import RawRecord, Reject, SourceFile

MAPPED = (
    "DOI",
    "title",
    "subtitle",
    "abstract",
    "author",
    "container-title",
    "issued",
    "reference",
    "is-referenced-by-count",
)
# Fields of a reference that make its text when it has neither a DOI nor `unstructured`.
REFERENCE_TEXT_FIELDS = ("author", "article-title", "volume-title", "journal-title", "year")
DATES = ("issued", "published", "published-print", "published-online", "created")
SAME_PAPER_RELATIONS = ("has-preprint", "is-preprint-of")
BLOCKS = {"jats:p", "p", "jats:sec", "sec", "jats:title", "title", "jats:list-item"}
SPACES_RE = re.compile(r"[ \t\r\f\v]+")


def map_record(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one Crossref work."""
    title = strip_markup(first_text(value.get("title")))
    subtitle = strip_markup(first_text(value.get("subtitle")))
    if title and subtitle and subtitle.casefold() not in title.casefold():
        title = f"{title}: {subtitle}"
    written_venue = first_text(value.get("container-title")) or text(
        as_dict(value.get("event")).get("name")
    )
    venue, venue_year, _ = venue_of(one_line(written_venue))
    kind = text(value.get("type"))
    preprint = kind == "posted-content" and text(value.get("subtype")) == "preprint"
    return build(
        source,
        position,
        raw,
        title=title,
        abstract=jats_text(text(value.get("abstract"))),
        authors=_authors(value.get("author")),
        keywords=[s for s in (text(x) for x in as_list(value.get("subject"))) if s],
        links=_links(value),
        status="preprint" if preprint else None,
        venue=venue,
        year=_year(value) or venue_year,
        ids=[("doi", text(value.get("DOI")) or ""), *_related(value)],
        extra=unmapped(value, MAPPED),
        references=_references(value.get("reference")),
        cited_by_count=count_of(value.get("is-referenced-by-count")),
    )


def _references(value: Any) -> list[tuple[str, str]]:
    """(`doi`, DOI) or (`text`, the reference as written) for each reference."""
    found = []
    for item in as_list(value):
        item = as_dict(item)
        if doi := text(item.get("DOI")):
            found.append(("doi", doi))
        elif written := one_line(item.get("unstructured")):
            found.append(("text", written))
        else:
            parts = (text(item.get(name)) for name in REFERENCE_TEXT_FIELDS)
            found.append(("text", ". ".join(part for part in parts if part)))
    return found


def _authors(value: Any) -> list[str]:
    """Names in order: `given family`, or `name` (an organisation)."""
    names = []
    for author in as_list(value):
        author = as_dict(author)
        parts = (text(author.get("given")), text(author.get("family")), text(author.get("suffix")))
        name = " ".join(p for p in parts if p) or text(author.get("name"))
        if name and is_author(name):
            names.append(name)
    return names


def _year(value: dict[str, Any]) -> int | None:
    """The first year of `issued`, else of the other publication dates."""
    for name in DATES:
        parts = as_list(as_dict(value.get(name)).get("date-parts"))
        first = as_list(parts[0]) if parts else []
        if first and (year := year_of(first[0])):
            return year
    return None


def _related(value: dict[str, Any]) -> list[tuple[str, str]]:
    """The DOIs (or arXiv ids) of the preprint this work has, or is the preprint of."""
    relation = as_dict(value.get("relation"))
    found = []
    for name in SAME_PAPER_RELATIONS:
        for item in as_list(relation.get(name)):
            item = as_dict(item)
            kind = (text(item.get("id-type")) or "").lower()
            if kind in ("doi", "arxiv"):
                found.append((kind, text(item.get("id")) or ""))
    return found


def _links(value: dict[str, Any]) -> list[tuple[str, str]]:
    """The work's resolver URL, its primary resource, and the full texts it lists (PDFs by
    their content type)."""
    links = [
        ("doi", text(value.get("URL")) or ""),
        ("url", text(as_dict(as_dict(value.get("resource")).get("primary")).get("URL")) or ""),
    ]
    for item in as_list(value.get("link")):
        item = as_dict(item)
        content_type = (text(item.get("content-type")) or "").lower()
        links.append(("pdf" if "pdf" in content_type else "fulltext", text(item.get("URL")) or ""))
    return links


class _Text(HTMLParser):
    """The text of JATS (or HTML) markup: tags dropped, entities decoded, blocks apart."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def strip_markup(value: str | None) -> str | None:
    """Text without tags (titles carry `<i>`, `<sub>` ...), on one line."""
    if not value:
        return value
    if "<" not in value and "&" not in value:
        return one_line(value)
    return one_line(_parse(value))


def jats_text(value: str | None) -> str | None:
    """An abstract's text from JATS: tags stripped, a leading `Abstract` heading dropped,
    paragraphs on lines of their own."""
    if not value:
        return value
    if "<" not in value:
        return html.unescape(value).strip() or None
    lines = [SPACES_RE.sub(" ", line).strip() for line in _parse(value).split("\n")]
    lines = [line for line in lines if line]
    if lines and lines[0].rstrip(".:").casefold() == "abstract":
        lines = lines[1:]
    return "\n".join(lines) or None


def _parse(value: str) -> str:
    parser = _Text()
    parser.feed(value)
    parser.close()
    return "".join(parser.parts)

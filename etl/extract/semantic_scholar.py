"""Semantic Scholar papers: Graph API records (`paperId`, `externalIds`, `authors` ...) and
the bulk datasets' records (`corpusid`, `externalids`, the same in lower case; an abstracts
dataset record holds `corpusid` and `abstract` only). Field names are matched without case.

Ids become identity keys: the paper id, the corpus id, and the DOI, arXiv and DBLP ids of
`externalIds`; the others (MAG, ACL, PubMed ...) are kept in `extra`.

A Graph API paper may carry the papers it cites (`references`) and the papers citing it
(`citations`), each a paper object. Each such object with a title or an abstract is a paper
of its own, sighted in the same file (the records after its paper's, in a JSON document;
`nested`), and the edges point both ways: the paper cites each of its references, each citing
paper cites it. An object with no title or abstract is only an id: a reference to it is kept
as an edge by that id, a citation from it is dropped (there is no citing paper to hold it).
An edge names a paper by its DOI, else its arXiv id, else its paper id, else its corpus id.
`citationCount` is Semantic Scholar's own count of citing papers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from etl.extract import json_io
from etl.extract.records import (
    as_dict,
    as_list,
    build,
    count_of,
    is_author,
    text,
    venue_of,
    year_of,
)
from etl.models import RawRecord, Reject, SourceFile

# externalIds entries that become identity keys, by their name in lower case.
ID_KINDS = {"doi": "doi", "arxiv": "arxiv", "dblp": "dblp", "corpusid": "s2corpus"}
MAPPED = {
    "paperid",
    "corpusid",
    "externalids",
    "title",
    "abstract",
    "authors",
    "venue",
    "publicationvenue",
    "year",
    "openaccesspdf",
    "url",
    "references",
    "citations",
    "citationcount",
}
# externalIds entries an edge names a paper by, in the order tried (then the paper id).
EDGE_ID_ORDER = (("doi", "doi"), ("arxiv", "arxiv"))
MAX_NESTED = 10_000  # papers one record may carry in `references` and `citations`


def map_paper(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject | list[RawRecord | Reject]:
    """The records of one Semantic Scholar paper: itself, then (in a JSON document) the
    papers it cites and is cited by, with the edges between them."""
    record = map_record(value, source, position, raw)
    if isinstance(record, Reject):
        return record
    nested = _nested(value, source, position)
    return [record, *nested] if nested else record


def _nested(value: dict[str, Any], source: SourceFile, position: int) -> list[RawRecord | Reject]:
    """The cited and citing papers a paper carries, one record each (a paper listed twice is
    one record, citing it if it is among the citations; the paper itself is none)."""
    fields = {k.lower(): v for k, v in value.items()}
    own, mine = edge_id(value), _ids_of(value)
    found: dict[tuple[str, str], tuple[dict[str, Any], bool]] = {}
    for name, citing in (("references", False), ("citations", True)):
        for item in as_list(fields.get(name))[:MAX_NESTED]:
            item = _paper_of(item)
            key = edge_id(item)
            if key is None or _ids_of(item) & mine or not _has_text(item):
                continue
            held = found.get(key)
            found[key] = (item, citing or (held is not None and held[1]))
    records: list[RawRecord | Reject] = []
    for number, (item, citing) in enumerate(found.values(), 1):
        bare = {k: v for k, v in item.items() if k.lower() not in ("references", "citations")}
        record = map_record(bare, source, position + number, partial(json_io.dumps, bare))
        if isinstance(record, RawRecord) and citing and own is not None:
            record = replace(record, references=(own,))
        records.append(record)
    return records


def _ids_of(value: dict[str, Any]) -> set[tuple[str, str]]:
    """Every id an object gives that an edge could name it by (values in lower case)."""
    fields = {k.lower(): v for k, v in value.items()}
    external = {k.lower(): v for k, v in as_dict(fields.get("externalids")).items()}
    given = [(kind, external.get(name)) for name, kind in EDGE_ID_ORDER]
    given += [("s2", fields.get("paperid")), ("s2corpus", fields.get("corpusid"))]
    given.append(("s2corpus", external.get("corpusid")))
    return {(kind, found.lower()) for kind, value in given if (found := text(value))}


def _paper_of(item: Any) -> dict[str, Any]:
    """A nested paper object (the Graph API's `/references` pages wrap it as `citedPaper` or
    `citingPaper`)."""
    paper = as_dict(item)
    for wrapper in ("citedPaper", "citingPaper"):
        inner = as_dict(paper.get(wrapper))
        if inner:
            return inner
    return paper


def _has_text(item: dict[str, Any]) -> bool:
    fields = {k.lower(): v for k, v in item.items()}
    return bool(text(fields.get("title")) or text(fields.get("abstract")))


def edge_id(value: dict[str, Any]) -> tuple[str, str] | None:
    """The id an edge names a paper by: (kind, value), or None for an object with none."""
    fields = {k.lower(): v for k, v in value.items()}
    external = {k.lower(): v for k, v in as_dict(fields.get("externalids")).items()}
    for name, kind in EDGE_ID_ORDER:
        if found := text(external.get(name)):
            return (kind, found)
    if found := text(fields.get("paperid")):
        return ("s2", found)
    if found := text(fields.get("corpusid")) or text(external.get("corpusid")):
        return ("s2corpus", found)
    return None


def map_record(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one Semantic Scholar paper (its nested papers as edges only)."""
    fields = {k.lower(): (k, v) for k, v in value.items()}

    def get(name: str) -> Any:
        return fields.get(name, ("", None))[1]

    external = {k.lower(): v for k, v in as_dict(get("externalids")).items()}
    ids = [("s2", text(get("paperid")) or ""), ("s2corpus", text(get("corpusid")) or "")]
    ids += [(kind, text(external.get(name)) or "") for name, kind in ID_KINDS.items()]
    kept_ids = {k: v for k, v in as_dict(get("externalids")).items() if k.lower() not in ID_KINDS}
    publication_venue = as_dict(get("publicationvenue"))
    written = text(publication_venue.get("name")) or text(get("venue"))
    venue, venue_year, _ = venue_of(written)
    extra = {key: v for name, (key, v) in fields.items() if name not in MAPPED}
    if kept_ids:
        extra["externalIds"] = kept_ids
    if publication_venue:
        extra["publicationVenue"] = publication_venue
    open_access = as_dict(get("openaccesspdf")) or as_dict(get("openaccessinfo"))
    return build(
        source,
        position,
        raw,
        title=text(get("title")),
        abstract=text(get("abstract")),
        authors=_authors(get("authors")),
        links=[("pdf", text(open_access.get("url")) or ""), ("url", text(get("url")) or "")],
        venue=venue,
        year=year_of(get("year")) or venue_year,
        ids=ids,
        extra=extra,
        references=[
            found
            for item in as_list(get("references"))
            if (found := edge_id(_paper_of(item))) is not None
        ],
        cited_by_count=count_of(get("citationcount")),
    )


def _authors(value: Any) -> list[str]:
    """Author names in order (objects with `name`, or strings)."""
    names = []
    for author in as_list(value):
        name = text(as_dict(author).get("name")) if isinstance(author, dict) else text(author)
        if name and is_author(name):
            names.append(name)
    return names

"""Semantic Scholar papers: Graph API records (`paperId`, `externalIds`, `authors` ...) and
the bulk datasets' records (`corpusid`, `externalids`, the same in lower case; an abstracts
dataset record holds `corpusid` and `abstract` only). Field names are matched without case.

Ids become identity keys: the paper id, the corpus id, and the DOI, arXiv and DBLP ids of
`externalIds`; the others (MAG, ACL, PubMed ...) are kept in `extra`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from etl.extract.records import as_dict, as_list, build, is_author, text, venue_of, year_of
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
}


def map_record(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one Semantic Scholar paper."""
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
    )


def _authors(value: Any) -> list[str]:
    """Author names in order (objects with `name`, or strings)."""
    names = []
    for author in as_list(value):
        name = text(as_dict(author).get("name")) if isinstance(author, dict) else text(author)
        if name and is_author(name):
            names.append(name)
    return names

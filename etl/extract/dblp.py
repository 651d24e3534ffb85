"""DBLP XML: the dump (`<dblp>` with `<!DOCTYPE dblp SYSTEM "dblp.dtd">` and its character
entities such as `&uuml;`) and person pages (`<dblpperson>`, records inside `<r>`), pulled
one record at a time with lxml, so memory stays flat on the multi-gigabyte dump.

Publications (`article`, `inproceedings`, `incollection`, `book`, `phdthesis`,
`mastersthesis`) are papers. Proceedings volumes, person records (`www`) and data sets hold no
paper and are not read. The record's `key` is its identity key, and so are the DOIs and arXiv
ids of its `ee` links; venue from `booktitle` (else `journal`), year from `year`. An author's
homonym number (`Wei Zhang 0001`) is kept apart from the name, in `extra.dblp_homonyms`.
"""

from __future__ import annotations

import html.entities
import json
from collections.abc import Iterator
from typing import Any

from lxml import etree

from etl.errors import SourceError
from etl.extract.compressed import open_bytes
from etl.extract.records import build, dblp_homonyms, is_author, one_line, venue_of, year_of
from etl.models import RawRecord, Reject, SourceFile

PAPERS = frozenset(
    {"article", "inproceedings", "incollection", "book", "phdthesis", "mastersthesis"}
)
MAPPED = {"author", "title", "booktitle", "journal", "year", "ee"}
CHUNK = 1 << 16
# DBLP's DTD declares the ISO 8879 character entities; the same names as HTML's. It is given
# to the parser for any DTD a file names, so that no file is read but the input itself.
ENTITIES_DTD = "".join(
    f'<!ENTITY {name} "&#{code};">\n'
    for name, code in sorted(html.entities.name2codepoint.items())
    if name not in ("amp", "lt", "gt", "quot", "apos")
)


class _Entities(etree.Resolver):  # type: ignore[misc]
    """Answers every DTD a file names with the character entities, and nothing else."""

    def resolve(self, system_url: str | None, public_id: str | None, context: Any) -> Any:
        if system_url and system_url.lower().endswith(".dtd"):
            return self.resolve_string(ENTITIES_DTD, context)
        return self.resolve_string("", context)


def read_dblp(source: SourceFile, encoding: str) -> Iterator[RawRecord | Reject]:
    """Stream the publication records of a DBLP XML file."""
    parser = etree.XMLPullParser(
        events=("start", "end"),
        load_dtd=True,
        no_network=True,
        resolve_entities="internal",
        remove_comments=True,
        remove_pis=True,
    )
    parser.resolvers.add(_Entities())
    count = 0
    root: Any = None
    with open_bytes(source.path) as handle:
        while chunk := handle.read(CHUNK):
            try:
                parser.feed(chunk)
                events = list(parser.read_events())
            except etree.XMLSyntaxError as exc:
                raise SourceError(
                    source.path, f"XML does not parse: {exc}", line=exc.lineno
                ) from exc
            for event, element in events:
                if event == "start":
                    root = element if root is None else root
                    continue
                if not _is_record(element, root):
                    continue  # a field of a record, read with it
                if element.tag in PAPERS:
                    count += 1
                    yield _record(element, source, count)
                _drop(element)
        try:
            parser.close()
        except etree.XMLSyntaxError as exc:
            raise SourceError(source.path, f"XML does not parse: {exc}", line=exc.lineno) from exc


def _is_record(element: Any, root: Any) -> bool:
    """A record of the dump (a child of the root), of a person page (inside `<r>`), or an
    `<r>` itself: what is read, or skipped, whole."""
    parent = element.getparent()
    return parent is not None and (parent is root or parent.tag == "r")


def _drop(element: Any) -> None:
    """Free a read element and what came before it, so the tree never grows."""
    element.clear(keep_tail=False)
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]


def _record(element: Any, source: SourceFile, position: int) -> RawRecord | Reject:
    """A RawRecord from one publication element."""
    key = element.get("key") or ""
    children: dict[str, list[str]] = {}
    attributes: dict[str, list[dict[str, str]]] = {}
    for child in element:
        if not isinstance(child.tag, str):
            continue
        value = " ".join("".join(child.itertext()).split())
        children.setdefault(child.tag, []).append(value)
        if child.attrib:
            attributes.setdefault(child.tag, []).append(dict(child.attrib))
    authors, homonyms = dblp_homonyms(a for a in children.get("author", []) if a and is_author(a))
    title = one_line(" ".join(children.get("title", []))) or None
    if title and title.endswith(".") and not title.endswith(".."):
        title = title[:-1]  # DBLP ends every title with a full stop
    written = (children.get("booktitle") or children.get("journal") or [""])[0] or None
    venue, venue_year, _ = venue_of(written)
    ees = children.get("ee", [])
    extra: dict[str, Any] = {"type": element.tag, **dict(element.attrib)}
    extra.pop("key", None)
    for tag, values in children.items():
        if tag not in MAPPED or (tag == "journal" and "booktitle" in children):
            extra[tag] = values[0] if len(values) == 1 else values
    if attributes:
        extra["attributes"] = attributes
    if homonyms:
        extra["dblp_homonyms"] = homonyms
    publtype = element.get("publtype")
    informal = publtype == "informal" or key.startswith("journals/corr/")
    return build(
        source,
        position,
        lambda: json.dumps({"key": key, **children}, ensure_ascii=False),
        title=title,
        abstract=None,
        authors=authors,
        links=[*(("ee", ee) for ee in ees), ("dblp", f"https://dblp.org/rec/{key}" if key else "")],
        status="preprint" if informal else publtype,
        venue=venue,
        year=year_of((children.get("year") or [""])[0]) or venue_year,
        ids=[("dblp", key), *_ids_of_links(ees)],
        extra=extra,
    )


def _ids_of_links(ees: list[str]) -> list[tuple[str, str]]:
    """The DOIs and arXiv ids an `ee` link names."""
    found = []
    for ee in ees:
        lowered = ee.lower()
        if "doi.org/10." in lowered:
            found.append(("doi", ee[lowered.index("doi.org/") + len("doi.org/") :]))
        elif "arxiv.org/abs/" in lowered:
            found.append(("arxiv", ee[lowered.index("arxiv.org/abs/") + len("arxiv.org/abs/") :]))
    return found

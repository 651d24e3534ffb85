"""DBLP XML: the dump (`<dblp>` with `<!DOCTYPE dblp SYSTEM "dblp.dtd">` and its character
entities such as `&uuml;`) and person pages (`<dblpperson>`, records inside `<r>`), pulled
one record at a time with lxml, so memory stays flat on the multi-gigabyte dump.

Publications (`article`, `inproceedings`, `incollection`, `book`, `phdthesis`,
`mastersthesis`) are papers. Proceedings volumes, person records (`www`) and data sets hold no
paper and are not read. The record's `key` is its identity key, and so are the DOIs and arXiv
ids of its `ee` links; venue from `booktitle` (else `journal`), year from `year`. An author's
homonym number (`Wei Zhang 0001`) is kept apart from the name, in `extra.dblp_homonyms`.
The works a record cites are its `<cite>` elements (DBLP keys; `...`, DBLP's mark for a
reference it could not name, gives none), found in older records of the dump.
"""

from __future__ import annotations

import html.entities
import json
from collections.abc import Iterator
from typing import Any

from lxml import etree

from etl.errors import SourceError
from etl.extract import limits
from etl.extract.compressed import open_bytes
from etl.extract.records import build, dblp_homonyms, is_author, one_line, venue_of, year_of
from etl.models import RawRecord, Reject, SourceFile

PAPERS = frozenset(
    {"article", "inproceedings", "incollection", "book", "phdthesis", "mastersthesis"}
)
MAPPED = {"author", "title", "booktitle", "journal", "year", "ee", "cite"}
UNNAMED_CITE = "..."
CHUNK = 1 << 16
# Bytes before the root element (the declaration and DTD): libxml2 holds every entity a DTD
# declares, so a DTD of a million declarations would take gigabytes. DBLP's names its DTD.
MAX_PROLOG = 1 << 20
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
    """Stream the publication records of a DBLP XML file, each within the limits (a record
    past one is read past, its elements freed as they end, and rejected)."""
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
    record = _Bounded(limits.current())
    with open_bytes(source.path) as handle:
        while chunk := handle.read(CHUNK):
            if root is None and handle.tell() > MAX_PROLOG + CHUNK:
                raise SourceError(
                    source.path,
                    f"over {MAX_PROLOG // 2**20}M before the root element (an internal DTD "
                    "that large is not read)",
                )
            try:
                parser.feed(chunk)
                events = list(parser.read_events())
            except etree.XMLSyntaxError as exc:
                raise SourceError(
                    source.path, f"XML does not parse: {exc}", line=exc.lineno
                ) from exc
            for event, element in events:
                if event == "start":
                    if root is None:
                        root = element
                    elif record.over:
                        record.depth += 1  # inside a record past a limit: nothing counted
                    else:
                        record.start(element, _is_record(element, root))
                    continue
                if record.over and element is not record.record:
                    record.depth -= 1
                    _drop(element)  # a field of a record past a limit: freed now
                    continue
                record.end(element)
                if not _is_record(element, root):
                    continue  # a field of a record, read with it
                if element.tag in PAPERS:
                    count += 1
                    if record.over:
                        yield Reject(source.path, count, record.over, record.raw)
                    else:
                        yield _record(element, source, count)
                _drop(element)
                record.reset()
        try:
            parser.close()
        except etree.XMLSyntaxError as exc:
            raise SourceError(source.path, f"XML does not parse: {exc}", line=exc.lineno) from exc


class _Bounded:
    """What the record being read holds so far (its elements, texts and attributes as values,
    their text and names as characters, its nesting), checked against the limits as its
    events come: libxml2 builds a record whole before its end, so it is bounded here."""

    def __init__(self, chosen: limits.Limits) -> None:
        self.limits = chosen
        self.depth = 1  # of the element being read, the document's root being 1
        self.reset()

    def reset(self) -> None:
        """A new record (or the text between records) starts."""
        self.values = 0
        self.size = 0
        self.last: Any = None  # the element that ended last: its tail is read after its end
        self.record: Any = None
        self.over: str | None = None  # why the record is past a limit
        self.raw = ""

    def start(self, element: Any, is_record: bool) -> None:
        self.depth += 1
        if is_record:
            self.reset()
            self.record = element
        # an element counts two values, itself and its text (libxml2 holds a node for each,
        # and an empty element costs as much as the two); an attribute counts one
        self._count(len(element.attrib) + 2, len(str(element.tag)) + 2)
        for name, value in element.attrib.items():
            self.size += len(name) + len(value) + 3
        if self.depth > self.limits.depth:
            self._past(limits.depth_reason(self.limits))

    def end(self, element: Any) -> None:
        self.depth -= 1
        self._count(0, len(element.text or ""))
        self.last = element

    def _count(self, values: int, size: int) -> None:
        if self.last is not None:
            size += len(self.last.tail or "")
            self.last = None
        self.values += values
        self.size += size
        if self.values > self.limits.values:
            self._past(limits.values_reason(self.limits))
        elif self.size > self.limits.record_size:
            self._past(limits.size_reason(self.size, self.limits.record_size))

    def _past(self, reason: str) -> None:
        """The record is past a limit: say why, and keep the start of what it holds."""
        if self.over is None and self.record is not None:
            self.over = reason
            text = etree.tostring(self.record, encoding="unicode", with_tail=False)
            self.raw = text[: limits.RAW_KEPT]


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
        references=[("dblp", c) for c in children.get("cite", []) if c and c != UNNAMED_CITE],
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

"""BibTeX (`.bib`): each entry a paper, parsed by bibtexparser, streamed.

The file is cut at the lines that open an entry (`@article{`) outside any braces, and the
entries are parsed a batch at a time, `@string` definitions carried over from batch to batch
and values joined with `#` resolved (etl.extract.bibtex_values), bounded by the field size;
a file that never closes a brace is cut at the next entry line once the entry grows past the
largest record, so memory stays bounded. Authors are split on `and` (each slot as written,
`and others` left out, a trailing comma dropped), names, venue and ids made text from LaTeX
(`{\\"u}` -> `ü`, `{N}eural` -> `Neural`); venue from `booktitle` (else `journal`); ids from
`doi`, `eprint` (arXiv), an arXiv id the venue names (`journal = {Ar{X}iv:2306.01116}`) and
DBLP's citation keys (`DBLP:...`).
Volumes (`@proceedings`) hold no paper and are not read.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bibtexparser
from bibtexparser import middlewares
from bibtexparser.library import Library
from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock

from etl.extract import limits
from etl.extract.bibtex_values import Macros, id_text, resolve, trim_names, venue_text
from etl.extract.fields import MAX_ABSTRACT_CHARS
from etl.extract.files import open_text
from etl.extract.records import (
    build,
    dblp_homonyms,
    is_author,
    latex_to_text,
    one_line,
    venue_of,
    year_of,
)
from etl.models import RawRecord, Reject, SourceFile

# Failed blocks become rejects with their reason; the parser's own log lines would repeat it.
_log = logging.getLogger("bibtexparser")
_log.addHandler(logging.NullHandler())
_log.propagate = False

ENTRY_START_RE = re.compile(r"^\s*@\s*([A-Za-z]+)\s*[{(]")
NOT_ENTRIES = {"string", "comment", "preamble"}
VOLUMES = {"proceedings"}
BATCH_ENTRIES = 200
BATCH_CHARS = 1 << 20
MAX_ENTRY_CHARS = MAX_ABSTRACT_CHARS * 2  # an entry holds an abstract and more
MAX_STRINGS = 10_000  # `@string` definitions kept (later new names stay as written)
MAX_STRING_CHARS = 16 * 2**20  # characters of `@string` values kept, in all
NAME_MIDDLEWARES = (middlewares.SeparateCoAuthors(), middlewares.SplitNameParts())
MAPPED = {"title", "abstract", "author", "booktitle", "journal", "year", "doi", "url", "pdf"}
LINK_FIELDS = ("url", "pdf", "code", "github", "project", "howpublished")
ARXIV_PREFIXES = {"arxiv", "arxiv.org"}


def read_bibtex(source: SourceFile, encoding: str) -> Iterator[RawRecord | Reject]:
    """The entries of a BibTeX file, in order."""
    macros = Macros(MAX_STRINGS, MAX_STRING_CHARS)  # carried over from batch to batch
    for batch in _batches(source, encoding):
        if isinstance(batch, Reject):
            yield batch
            continue
        first_line, text = batch
        # No parse stack: values come as written, resolved here (etl.extract.bibtex_values).
        library = bibtexparser.parse_string(text, parse_stack=[])  # type: ignore[attr-defined]
        cap = limits.current().field_size
        for string in library.strings:
            macros.define(string.key, resolve(str(string.value), macros, cap))
        blocks = sorted([*library.entries, *library.failed_blocks], key=lambda b: b.start_line or 0)
        for block in blocks:
            position = first_line + (block.start_line or 0)
            entry = block.ignore_error_block if isinstance(block, DuplicateBlockKeyBlock) else block
            if isinstance(entry, Entry):  # a duplicate key's entry is a record too
                if entry.entry_type.lower() not in VOLUMES:
                    yield _resolved_record(entry, source, position, macros, cap)
            elif isinstance(block, ParsingFailedBlock) and not isinstance(
                block, DuplicateBlockKeyBlock
            ):
                reason = f"BibTeX does not parse: {_error(block)}"
                yield Reject(source.path, position, reason, (block.raw or "")[:10_000])


def _resolved_record(
    entry: Entry, source: SourceFile, position: int, macros: Macros, cap: int
) -> RawRecord | Reject:
    """The entry's record, its values resolved, its field names in lower case and its names
    split; a Reject when a value grows past the field-size limit or a name cannot be split."""
    for field in entry.fields:
        value = resolve(str(field.value), macros, cap)
        if value.cut:
            reason = f"field {field.key!r}: its @string joins make more than {cap:,} characters"
            return Reject(source.path, position, reason, (entry.raw or "")[:10_000])
        field.value = value.text
        field.key = field.key.lower()  # `Author = {...}` is split into names as `author` is
    for middleware in NAME_MIDDLEWARES:
        split = middleware.transform_entry(entry, Library())
        if not isinstance(split, Entry):  # a name that cannot be split
            reason = f"BibTeX does not parse: {_error(split)}"  # type: ignore[arg-type]
            return Reject(source.path, position, reason, (entry.raw or "")[:10_000])
        entry = split
        _trim_name_lists(entry)
    return _record(entry, source, position)


def _trim_name_lists(entry: Entry) -> None:
    """Drop the comma a name list may leave at a name's end, once split on `and` (before the
    names are split into parts, which refuses a trailing comma)."""
    for field in entry.fields:
        if isinstance(field.value, list) and all(isinstance(v, str) for v in field.value):
            field.value = trim_names(field.value)


def _error(block: ParsingFailedBlock) -> str:
    """A failed block's reason on one line."""
    error = getattr(block, "error", None)
    if error is None:
        return type(block).__name__
    if type(error).__name__ == "BlockAbortedException":
        return "the entry does not close before the next entry starts"
    return " ".join(str(error).split()) or type(error).__name__


def _batches(source: SourceFile, encoding: str) -> Iterator[tuple[int, str] | Reject]:
    """(first line number, text) of batches of whole entries; a line longer than a record is
    a Reject of its own. An entry and the text after it (comments, or junk) are kept up to
    MAX_ENTRY_CHARS: past that, lines are dropped until the next entry starts."""
    lines: list[str] = []
    first = 1
    entries = 0
    size = 0
    entry_size = 0
    depth = 0
    with open_text(Path(source.path), encoding) as handle:
        for number, line in limits.lines(handle, keep_ends=True):
            if isinstance(line, limits.OverLimit):
                yield Reject(source.path, number, line.reason, line.raw)
                continue
            starts = ENTRY_START_RE.match(line)
            if starts and (depth <= 0 or entry_size > MAX_ENTRY_CHARS):
                if lines and (entries >= BATCH_ENTRIES or size >= BATCH_CHARS):
                    yield first, "".join(lines)
                    lines, first, entries, size = [], number, 0, 0
                entries += 1
                depth = 0
                entry_size = 0
            entry_size += len(line)
            depth += _braces(line)
            if entry_size > MAX_ENTRY_CHARS and not starts:
                continue  # an entry without end, or text after one: what follows waits
            if not lines:
                first = number
            lines.append(line)
            size += len(line)
    if lines:
        yield first, "".join(lines)


def _braces(line: str) -> int:
    """Opening minus closing braces of a line, escaped ones (`\\{`) not counted."""
    unescaped = line.replace("\\{", "").replace("\\}", "")
    return unescaped.count("{") - unescaped.count("}")


def _record(entry: Entry, source: SourceFile, position: int) -> RawRecord | Reject:
    """A RawRecord from one entry."""
    fields: dict[str, Any] = {}
    for field in entry.fields:
        fields.setdefault(field.key.lower(), field.value)
    names = fields.get("author")
    authors = _names(names) if isinstance(names, list) else []
    more = isinstance(names, list) and len(authors) < len(names)
    homonyms: dict[str, str] = {}
    if entry.key.upper().startswith("DBLP:"):  # DBLP's export numbers its homonyms
        authors, homonyms = dblp_homonyms(authors)
    written, arxiv_id = venue_text(_plain(fields.get("booktitle") or fields.get("journal")))
    venue, venue_year, _ = venue_of(written)
    doi = id_text(_plain(fields.get("doi"))) or ""
    ids = [("doi", doi)]
    eprint = id_text(_plain(fields.get("eprint")))
    prefix = id_text(_plain(fields.get("archiveprefix")) or _plain(fields.get("eprinttype")))
    if not (eprint and (prefix or "").lower() in ARXIV_PREFIXES):
        eprint = arxiv_id
    if eprint:
        ids.append(("arxiv", eprint))
    if entry.key.upper().startswith("DBLP:"):
        ids.append(("dblp", entry.key[5:]))
    extra: dict[str, Any] = {"ENTRYTYPE": entry.entry_type, "ID": entry.key}
    if homonyms:
        extra["dblp_homonyms"] = homonyms
    for key, value in fields.items():
        if key == "author" and not more:
            continue
        if key not in MAPPED or (key == "journal" and "booktitle" in fields):
            extra[key] = _written(value)
    links = [(name, _plain(fields.get(name)) or "") for name in LINK_FIELDS]
    links.append(("doi", doi))
    if eprint:
        links.append(("arxiv", eprint))
    return build(
        source,
        position,
        lambda: entry.raw or "",
        title=_plain(fields.get("title")),
        abstract=_plain(fields.get("abstract")),
        authors=authors,
        keywords=[k.strip() for k in re.split(r"[;,]", _plain(fields.get("keywords")) or "")],
        links=links,
        venue=venue,
        year=year_of(_plain(fields.get("year"))) or venue_year,
        ids=ids,
        extra=extra,
    )


def _names(parts: list[Any]) -> list[str]:
    """Display names (`First von Last Jr`, LaTeX made text) of split author names."""
    names = []
    for name in parts:
        if isinstance(name, middlewares.NameParts):
            words = [*name.first, *name.von, *name.last, *name.jr]
            written = latex_to_text(" ".join(words))
        else:
            written = latex_to_text(str(name))
        if written and is_author(written):
            names.append(written)
    return names


def _plain(value: Any) -> str | None:
    """A field's text on one line (values are strings once parsed)."""
    return one_line(value) if isinstance(value, str) else None


def _written(value: Any) -> Any:
    """A field's value for `extra` as written (split names joined back with `and`)."""
    if isinstance(value, list):
        return " and ".join(
            " ".join([*v.first, *v.von, *v.last, *v.jr])
            if isinstance(v, middlewares.NameParts)
            else str(v)
            for v in value
        )
    return value

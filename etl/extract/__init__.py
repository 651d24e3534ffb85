"""Extract stage: find input files, fingerprint them, and stream their records.

Public entry points: `discover` / `discover_all` (paths to files, and what a folder held that
is skipped), `identify` (a file to a SourceFile, or a SourceError saying why it cannot be
read) and `read_records` (a SourceFile to a stream of RawRecord and Reject). `read_items`
streams the same records but leaves JSON Lines unparsed; `parse_item` finishes one, and being
pure it can run in a worker process. Venues are named canonically from the table that
`load_venues` reads and `use_venues` sets for a process.
"""

from __future__ import annotations

import dataclasses
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from etl.errors import SourceError
from etl.extract import json_shapes, limits, pwc
from etl.extract.compressed import container_stat, is_tar
from etl.extract.files import discover, discover_all, fingerprint, read_head, read_head_bytes
from etl.extract.presence import gone_reasons, prune_scope
from etl.extract.readers import (
    READERS,
    JsonLine,
    guess_venue_year,
    is_header,
    parse_json_line,
)
from etl.extract.shapes import FORMATS, JSON_SHAPES, SNIFF_BYTES, detect_shape, expected
from etl.extract.venues import VenueTable, load_venues, use_venues, venue_in_name
from etl.models import RawRecord, Reject, SourceFile

__all__ = [
    "FORMATS",
    "Item",
    "VenueTable",
    "container_stat",
    "discover",
    "discover_all",
    "gone_reasons",
    "guess_venue_year",
    "identify",
    "item_size",
    "limits",
    "load_venues",
    "parse_item",
    "prune_scope",
    "read_items",
    "read_records",
    "unreadable",
    "use_venues",
]

Item = RawRecord | Reject | JsonLine
# A reader per shape: each streams a SourceFile's records (etl.extract.shapes names them).
ALL_READERS: dict[str, Callable[[SourceFile, str], Iterator[Item]]] = {
    **READERS,
    **{shape: json_shapes.read_shape for shape in JSON_SHAPES},
    "pwc-links": pwc.read_links,
    "dblp": lambda source, encoding: _read_dblp(source, encoding),
    "bibtex": lambda source, encoding: _read_bibtex(source, encoding),
}


def _read_dblp(source: SourceFile, encoding: str) -> Iterator[Item]:
    """DBLP XML; lxml is imported only when such a file is read (every command starts faster)."""
    from etl.extract import dblp

    return dblp.read_dblp(source, encoding)


def _read_bibtex(source: SourceFile, encoding: str) -> Iterator[Item]:
    """BibTeX; bibtexparser is imported only when such a file is read."""
    from etl.extract import bibtex

    return bibtex.read_bibtex(source, encoding)


def identify(
    path: Path,
    *,
    venue: str | None = None,
    year: int | None = None,
    source_format: str | None = None,
) -> SourceFile:
    """Fingerprint a file and work out its format (its shape: `source_format` if given, else
    from its content), venue and year (overrides win)."""
    if source_format is not None and source_format not in FORMATS:
        raise SourceError(str(path), f"unknown --source-format {source_format!r}: {expected()}")
    try:
        status = container_stat(str(path))
    except OSError as exc:  # gone, a link loop, no permission: this source fails, named
        raise SourceError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(status.st_mode):  # a named pipe would block the run
        raise SourceError(str(path), "not a regular file: not read")
    mtime_ns = status.st_mtime_ns
    checksum, size, encoding = fingerprint(path)
    head_bytes = read_head_bytes(path, SNIFF_BYTES)
    if is_tar(head_bytes):
        raise SourceError(str(path), "a tar archive: unpack it, or pack its files in a zip")
    head = read_head(path, encoding)
    fmt = source_format or detect_shape(path, head, head_bytes)
    guessed_venue, guessed_year = None, None
    first_line = next((line.strip() for line in head.splitlines() if line.strip()), "")
    if fmt == "text":
        if is_header(first_line):
            guessed_venue, guessed_year = guess_venue_year(first_line)
        elif len(head.strip()) == 0:
            raise SourceError(str(path), "the file holds only blank lines")
    if guessed_venue is None or guessed_year is None:
        name_venue, name_year = venue_in_name(path.stem)  # only a known venue: not `r20k`
        guessed_venue = guessed_venue or name_venue
        guessed_year = guessed_year or name_year
    return SourceFile(
        path=str(path),
        format=fmt,
        checksum=checksum,
        size=size,
        mtime_ns=mtime_ns,
        encoding=encoding,
        venue=venue or guessed_venue,
        year=year if year is not None else guessed_year,
        venue_given=venue is not None,
        year_given=year is not None,
    )


def read_records(source: SourceFile) -> Iterator[RawRecord | Reject]:
    """Stream the records of an identified file; SourceError if the file as a whole is bad."""
    for item in read_items(source):
        yield parse_item(item)


def read_items(source: SourceFile) -> Iterator[Item]:
    """The records of a file as `read_records` gives them, except that JSON Lines are left
    unparsed (`parse_item` parses them), so that the parsing can happen in parallel."""
    count = 0
    for item in ALL_READERS[source.format](source, source.encoding):
        count += 1
        yield item
    if count == 0:
        what = "no abstracts after the header" if source.format == "text" else "no records"
        raise SourceError(source.path, f"the file holds {what}")


def unreadable(path: str, exc: Exception) -> SourceError:
    """The SourceError for whatever reading or parsing a file raised that its reader did not
    name (a decoder's LookupError or UnicodeError, RecursionError, MemoryError, a library's
    own error): that file fails, named, and the run goes on."""
    if isinstance(exc, SourceError):
        return exc
    lines = str(exc).strip().splitlines()
    detail = f"{type(exc).__name__}: {lines[0][:300]}" if lines else type(exc).__name__
    if isinstance(exc, RecursionError):
        why = f"nested too deeply to be read ({detail})"
    elif isinstance(exc, MemoryError):
        why = (
            f"ran out of memory while it was read ({detail}): lower --max-record-size or "
            "--max-values, or use fewer --workers"
        )
    elif isinstance(exc, LookupError | UnicodeError):
        why = f"cannot be decoded ({detail})"
    elif isinstance(exc, OSError):
        why = f"cannot be read: {exc.strerror or detail}"
    else:
        why = f"its reader failed ({detail})"
    return SourceError(path, why)


def parse_item(item: Item) -> RawRecord | Reject:
    """A record or reject from what `read_items` gave (JSON Lines are parsed here), its text
    free of U+0000 and lone surrogates (which the databases cannot store), whatever reader
    made it; a reject's raw text cut to its first RAW_KEPT characters."""
    if isinstance(item, JsonLine):
        shaped = item.source.format in JSON_SHAPES
        item = json_shapes.parse_line(item) if shaped else parse_json_line(item)
    if isinstance(item, Reject) and len(item.raw) > limits.RAW_KEPT:  # its start says why
        item = dataclasses.replace(item, raw=item.raw[: limits.RAW_KEPT])
    return limits.storable(item)


def item_size(item: Item) -> int:
    """About how many characters an item holds (so batches are bounded in size, not only in
    records)."""
    if isinstance(item, JsonLine):
        return len(item.text)
    if isinstance(item, Reject):
        return len(item.raw)
    return (
        len(item.abstract or "")
        + len(item.title or "")
        + len(item.extra or "")
        + sum(map(len, item.authors))
    )

"""Streaming readers, one per format: each yields RawRecord or Reject, never a whole file."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import ijson

from etl.errors import SourceError
from etl.extract import json_io, limits
from etl.extract.fields import (
    ABSTRACT_FIELDS,
    MAX_ABSTRACT_CHARS,
    TITLE_FIELDS,
    field_key,
    record_from_mapping,
)
from etl.extract.files import open_text
from etl.extract.venues import venue_in_name
from etl.models import RawRecord, Reject, SourceFile

Record = RawRecord | Reject  # what parsing gives: a record, or why a piece of input is none

# Words a header or file name uses around the venue name that are not the venue.
_NOT_VENUE = {
    "accepted",
    "paper",
    "papers",
    "list",
    "lists",
    "abstract",
    "abstracts",
    "the",
    "of",
    "and",
    "main",
    "track",
    "conference",
    "proceedings",
    "all",
    "orals",
    "posters",
    "oral",
    "poster",
    "spotlight",
    "spotlights",
    "workshop",
    "export",
    "data",
    "dump",
    "论文列表",
}
_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20\d{2})(?!\d)")
_WORD = re.compile(r"[^\W_](?:[^\W_]|-)*")


def guess_venue_year(text: str) -> tuple[str | None, int | None]:
    """Venue and year named in a list's header, e.g. `Accepted papers — ICLR 2025`: a known
    venue by its canonical name, else the word that looks most like a venue's name."""
    known, year = venue_in_name(text)
    if known:
        return known, year
    match = _YEAR.search(text)
    year = int(match.group(1)) if match else None
    before = text[: match.start()] if match else text
    after = text[match.end() :] if match else ""
    for words in (reversed(_WORD.findall(before)), _WORD.findall(after)):
        for word in words:
            if _is_venue_word(word):
                return word, year
    return None, year


def _is_venue_word(word: str) -> bool:
    """A token that can be a venue name: has a latin letter, not a filler word, not a number."""
    if word.lower() in _NOT_VENUE or word.isdigit() or not re.search(r"[A-Za-z]", word):
        return False
    return not re.fullmatch(r"[0-9a-f]{8,}", word)  # hashes in file names


def is_header(line: str) -> bool:
    """A first line that names a list rather than being an abstract."""
    return len(line) <= 200 and bool(_YEAR.search(line)) and line.count(". ") < 2


def read_text_list(source: SourceFile, encoding: str) -> Iterator[Record]:
    """Abstracts separated by blank lines, after an optional header line naming venue and year."""
    with open_text(Path(source.path), encoding) as handle:
        block = _Block()
        seen_content = False
        for number, line in limits.lines(handle):
            if isinstance(line, limits.OverLimit):
                yield Reject(source.path, number, line.reason, line.raw)
                continue
            text = line.strip()
            if not seen_content and text:
                seen_content = True
                if is_header(text):
                    continue
            if text:
                block.add(number, text)
            elif block.lines:
                yield _text_record(source, block)
                block = _Block()
        if block.lines:
            yield _text_record(source, block)


class _Block:
    """The lines of one abstract, kept only up to the abstract limit (the rest is counted)."""

    def __init__(self) -> None:
        self.start = 0
        self.lines: list[str] = []
        self.size = -1  # characters joined with spaces

    def add(self, number: int, text: str) -> None:
        if not self.lines:
            self.start = number
        self.size += len(text) + 1
        if self.size - len(text) <= MAX_ABSTRACT_CHARS:
            self.lines.append(text)


def _text_record(source: SourceFile, block: _Block) -> Record:
    """One abstract from the text list format."""
    if block.size > MAX_ABSTRACT_CHARS:
        return Reject(
            source.path,
            block.start,
            f"abstract is {block.size:,} characters; the limit is {MAX_ABSTRACT_CHARS:,}",
            " ".join(block.lines)[:10_000],
        )
    return RawRecord(
        source=source.path,
        position=block.start,
        venue=source.venue,
        year=source.year,
        abstract=" ".join(block.lines),
    )


class JsonLine(NamedTuple):
    """A JSON Lines record not parsed yet. Parsing is pure, so a worker process can do it."""

    source: SourceFile
    number: int
    text: str


def read_json_lines(source: SourceFile, encoding: str) -> Iterator[JsonLine | Reject]:
    """The non-blank lines of a JSON Lines file, each with its line number, not parsed yet:
    `parse_json_line` makes each a record, or a reject when it is broken (the rest still
    load). A line past the record size limit is a reject already."""
    with open_text(Path(source.path), encoding) as handle:
        for number, line in limits.lines(handle):
            if isinstance(line, limits.OverLimit):
                yield Reject(source.path, number, line.reason, line.raw)
            elif line.strip():
                yield JsonLine(source, number, line)


def parse_json_line(line: JsonLine) -> Record:
    """A RawRecord from one JSON Lines line, or a Reject saying what is wrong with it."""
    try:
        value = limits.parse_line(line.text)
    except json.JSONDecodeError as exc:
        reason = f"invalid JSON: {exc.msg} at column {exc.colno}"
        return Reject(line.source.path, line.number, reason, line.text[: limits.RAW_KEPT])
    except json_io.NumberTooLong as exc:
        return Reject(line.source.path, line.number, str(exc), line.text[: limits.RAW_KEPT])
    if isinstance(value, limits.OverLimit):
        return Reject(line.source.path, line.number, value.reason, value.raw)
    return _json_record(line.source, line.number, value, json_text=line.text)


def read_json(source: SourceFile, encoding: str) -> Iterator[Record]:
    """A JSON array of records, or an object mapping ids (or URLs) to records, streamed within
    the limits (etl.extract.limits)."""
    with open_text(Path(source.path), encoding) as handle:
        count = 0
        try:
            for key, value in limits.json_records(_Utf8Bytes(handle)):
                count += 1
                if isinstance(value, limits.OverLimit):
                    yield Reject(source.path, count, value.reason, value.raw)
                else:
                    yield _json_record(source, count, value, source_id=key)
        except limits.LimitError as exc:
            after = f" (after record {count})" if count else ""
            raise SourceError(source.path, f"{exc}{after}") from exc
        except ijson.JSONError as exc:
            raise SourceError(
                source.path, f"JSON does not parse after record {count}: {exc}"
            ) from exc
        if count == 0:
            raise SourceError(source.path, "the JSON holds no records")


# JSON text as ijson reads it: UTF-8 bytes, lone surrogate escapes made U+FFFD escapes.
_Utf8Bytes = json_io.Utf8Json


def _json_record(
    source: SourceFile,
    position: int,
    value: Any,
    *,
    json_text: str | None = None,
    source_id: str | None = None,
) -> Record:
    """A RawRecord from one parsed JSON value, or a Reject if it is not an object."""
    raw = json_text if json_text is not None else json_io.dumps(value)
    if not isinstance(value, dict):
        return Reject(
            source.path, position, f"expected a JSON object, got {type(value).__name__}", raw
        )
    return record_from_mapping(
        value,
        source=source.path,
        position=position,
        venue=source.venue,
        year=source.year,
        raw=raw,
        source_id=source_id,
        venue_given=source.venue_given,
        year_given=source.year_given,
    )


def read_csv(source: SourceFile, encoding: str) -> Iterator[Record]:
    """CSV (or TSV) with a header row naming at least a title or an abstract column."""
    csv.field_size_limit(limits.current().record_size)
    path = Path(source.path)
    with open_text(path, encoding) as handle:
        sample = handle.read(65536)
        handle.seek(0)
        delimiter = "\t" if path.suffix.lower() == ".tsv" else _sniff_delimiter(sample)
        header = _CsvLines(handle, source.path, delimiter)
        reader = csv.DictReader(header, delimiter=delimiter)
        columns = reader.fieldnames or []
        keys = {field_key(c) for c in columns}
        if not keys & set(TITLE_FIELDS + ABSTRACT_FIELDS):
            if header.long and header.long[0][0] == 1:  # the header line itself is past a limit
                reason = header.long[0][1].reason
                raise SourceError(source.path, f"CSV header not read: {reason}", line=1)
            shown = ", ".join(columns[:12]) or "none"
            raise SourceError(
                source.path,
                f"CSV needs a title or abstract column; found columns: {shown}",
                line=1,
            )
        suspicious = _stray_line_breaks(_CsvLines(handle, source.path, delimiter), delimiter)
        handle.seek(0)
        rows = _CsvLines(handle, source.path, delimiter)
        reader = csv.DictReader(rows, delimiter=delimiter)
        line = 1
        try:
            for row in reader:
                yield from rows.long_lines()
                position = line + 1
                lines = reader.line_num - line
                line = reader.line_num
                raw = json.dumps(row, ensure_ascii=False)
                tainted = rows.next_row()
                if tainted is not None:
                    yield Reject(source.path, position, tainted, raw[: limits.RAW_KEPT])
                    continue
                if lines > 1 and suspicious:
                    yield Reject(
                        source.path,
                        position,
                        f"quoting runs over {lines} lines (lines {position}-{line}) where the "
                        "file's other records take one line each: an unclosed quote?",
                        raw,
                    )
                    continue
                if None in row:  # more cells than header columns
                    row = {k: v for k, v in row.items() if k is not None}
                too_long = _longest_cell(row)
                if too_long is not None:
                    yield Reject(source.path, position, too_long, raw[: limits.RAW_KEPT])
                    continue
                yield record_from_mapping(
                    row,
                    source=source.path,
                    position=position,
                    venue=source.venue,
                    year=source.year,
                    raw=raw,
                    venue_given=source.venue_given,
                    year_given=source.year_given,
                )
            yield from rows.long_lines()
        except limits.LimitError as exc:
            raise SourceError(source.path, str(exc), line=reader.line_num + 1) from exc
        except csv.Error as exc:
            problem = str(exc)
            if "field larger than field limit" in problem:
                problem = limits.size_reason(
                    limits.current().record_size + 1, limits.current().record_size
                )
            raise SourceError(
                source.path, f"CSV does not parse: {problem}", line=reader.line_num
            ) from exc


class _CsvLines:
    """A CSV file's lines for the csv module, each with its ending, bounded: a line longer
    than a record, or with more cells than a record may hold values, is given as an empty
    line and becomes a reject of its own (and of the row it was inside, if any); a row whose
    lines together run past a record fails the file."""

    def __init__(self, handle: TextIO, path: str, delimiter: str = ",") -> None:
        self.lines = limits.lines(handle, keep_ends=True)
        self.path = path
        self.delimiter = delimiter
        self.limit = limits.current().record_size
        self.long: list[tuple[int, limits.OverLimit]] = []  # not reported yet
        self.started = False  # a line of the current row was read
        self.tainted: str | None = None  # why the current row lost a line
        self.size = 0

    def __iter__(self) -> _CsvLines:
        return self

    def __next__(self) -> str:
        number, line = next(self.lines)
        if isinstance(line, str) and line.count(self.delimiter) >= limits.current().values:
            line = limits.OverLimit(limits.values_reason(limits.current()), line[: limits.RAW_KEPT])
        if isinstance(line, limits.OverLimit):
            if self.started:  # inside a row: the row is rejected, for this reason
                self.tainted = line.reason
            else:
                self.long.append((number, line))
            return "\n"
        self.started = self.started or bool(line.strip())
        self.size += len(line)
        if self.size > self.limit:
            reason = limits.size_reason(self.size, self.limit)
            raise limits.LimitError(f"a row over several lines: {reason}")
        return line

    def long_lines(self) -> Iterator[Reject]:
        """Rejects for the long lines read so far."""
        for number, over in self.long:
            yield Reject(self.path, number, over.reason, over.raw)
        self.long = []

    def next_row(self) -> str | None:
        """Start counting the next row; why the row just read lost a line, if it did."""
        tainted, self.tainted = self.tainted, None
        self.started, self.size = False, 0
        return tainted


def _longest_cell(row: dict[str, Any]) -> str | None:
    """Why a row has a cell past the field size limit, or None."""
    limit = limits.current().field_size
    for name, value in row.items():
        if isinstance(value, str) and len(value) > limit:
            return limits.field_reason(name, len(value), limits.current())
    return None


# A file whose records span several lines this rarely (share of records) does not use line
# breaks inside quotes: a record that does has an unclosed quote that swallowed what follows.
STRAY_LINE_BREAK_SHARE = 0.1


def _stray_line_breaks(lines: _CsvLines, delimiter: str) -> bool:
    """Whether records over several lines are rare in this CSV (a first pass, rows not kept)."""
    reader = csv.reader(lines, delimiter=delimiter)
    records = multi_line = 0
    line = 0
    try:
        for _ in reader:
            lines.next_row()
            records += 1
            multi_line += reader.line_num - line > 1
            line = reader.line_num
    except (csv.Error, limits.LimitError):
        return False  # the reading pass reports it, with its line
    return 0 < multi_line <= STRAY_LINE_BREAK_SHARE * records


def _sniff_delimiter(sample: str) -> str:
    """Comma unless the header line clearly uses semicolons or tabs."""
    header = sample.splitlines()[0] if sample else ""
    counts = {d: header.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > 0 else ","


READERS = {
    "text": read_text_list,
    "json": read_json,
    "jsonl": read_json_lines,
    "csv": read_csv,
}

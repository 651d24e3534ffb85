"""Reading the JSON shapes of metadata services, whatever holds their records: JSON Lines
(left unparsed, so that worker processes parse them), a JSON array, or an API response that
keeps them under a key (OpenAlex `results`, Semantic Scholar `data`, OpenReview `notes`,
Crossref `message.items`). Each shape's module maps one record; this one finds them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ijson

from etl.errors import SourceError
from etl.extract import (
    arxiv,
    crossref,
    json_io,
    limits,
    openalex,
    openreview,
    pwc,
    semantic_scholar,
)
from etl.extract.files import open_text, read_head_bytes
from etl.extract.readers import JsonLine, _Utf8Bytes, read_json_lines
from etl.extract.records import dumps
from etl.extract.shapes import ENVELOPES, FORMATS, SNIFF_BYTES, sniff_json
from etl.models import RawRecord, Reject, SourceFile

Record = RawRecord | Reject
# A mapper gives a record, or (a Semantic Scholar paper carrying the papers it cites and is
# cited by) the record and those after it, numbered after its position.
Mapped = Record | list[Record]
Mapper = Callable[[dict[str, Any], SourceFile, int, Callable[[], str]], Mapped]
MAPPERS: dict[str, Mapper] = {
    "arxiv": arxiv.map_record,
    "openalex": openalex.map_record,
    "openreview": openreview.map_record,
    "semantic-scholar": semantic_scholar.map_paper,
    "crossref": crossref.map_record,
    "pwc-papers": pwc.map_paper,
    "pwc-links": pwc.map_link,
}


def read_shape(source: SourceFile, encoding: str) -> Iterator[Record | JsonLine]:
    """The records of a file of one JSON shape (`source.format`), each read within the limits
    (etl.extract.limits), wherever the shape keeps them."""
    sniff = sniff_json(read_head_bytes(source.path, SNIFF_BYTES))
    if sniff.container == "jsonl":
        yield from read_json_lines(source, encoding)
        return
    prefix = sniff.record_prefix if sniff.shape == source.format else _prefix_for(source, sniff)
    mapper = MAPPERS[source.format]
    count = position = 0  # records of the document; records read (nested papers too)
    with open_text(Path(source.path), encoding) as handle:
        try:
            for value in limits.records_at(_Utf8Bytes(handle), prefix):
                count += 1
                position += 1
                if isinstance(value, limits.OverLimit):
                    yield Reject(source.path, position, value.reason, value.raw)
                    continue
                mapped = map_value(mapper, source, position, value, None)
                if isinstance(mapped, list):
                    yield from mapped
                    position += len(mapped) - 1
                else:
                    yield mapped
        except limits.LimitError as exc:
            after = f" (after record {count})" if count else ""
            raise SourceError(source.path, f"{exc}{after}") from exc
        except ijson.JSONError as exc:
            raise SourceError(
                source.path, f"JSON does not parse after record {count}: {exc}"
            ) from exc
    if count == 0:
        raise SourceError(
            source.path,
            f"no records where {FORMATS[source.format]} keeps them "
            f"({'the top level' if not prefix else prefix.removesuffix('.item')})",
        )


def _prefix_for(source: SourceFile, sniff: Any) -> str:
    """Where records are in a file named to be of a shape its content did not show."""
    if sniff.top == "array":
        return "item"
    for path, shape in ENVELOPES:
        if shape == source.format and path.split(".")[0] in sniff.top_keys:
            return path if path == "message" else path + ".item"
    return ""


def parse_line(line: JsonLine) -> Record:
    """One JSON Lines record of a shape (in a worker process): parsed within the limits, then
    mapped."""
    try:
        value = limits.parse_line(line.text)
    except json.JSONDecodeError as exc:
        reason = f"invalid JSON: {exc.msg} at column {exc.colno}"
        return Reject(line.source.path, line.number, reason, line.text[: limits.RAW_KEPT])
    except json_io.NumberTooLong as exc:
        return Reject(line.source.path, line.number, str(exc), line.text[: limits.RAW_KEPT])
    if isinstance(value, limits.OverLimit):
        return Reject(line.source.path, line.number, value.reason, value.raw)
    mapped = map_value(MAPPERS[line.source.format], line.source, line.number, value, line.text)
    # a line is one position: the papers a line's paper carries give edges only
    return mapped[0] if isinstance(mapped, list) else mapped


def map_value(
    mapper: Mapper, source: SourceFile, position: int, value: Any, text: str | None
) -> Mapped:
    """A record from one parsed JSON value of a shape, or a Reject when it is not an object."""

    def raw() -> str:
        return text if text is not None else dumps(value)

    if not isinstance(value, dict):
        reason = f"expected a JSON object, got {type(value).__name__}"
        return Reject(source.path, position, reason, raw())
    return mapper(value, source, position, raw)

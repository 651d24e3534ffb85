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
from etl.extract import arxiv, crossref, json_io, openalex, openreview, pwc, semantic_scholar
from etl.extract.files import open_text, read_head_bytes
from etl.extract.readers import JsonLine, _Utf8Bytes, read_json_lines
from etl.extract.records import dumps
from etl.extract.shapes import ENVELOPES, FORMATS, SNIFF_BYTES, sniff_json
from etl.models import RawRecord, Reject, SourceFile

Record = RawRecord | Reject
Mapper = Callable[[dict[str, Any], SourceFile, int, Callable[[], str]], Record]
MAPPERS: dict[str, Mapper] = {
    "arxiv": arxiv.map_record,
    "openalex": openalex.map_record,
    "openreview": openreview.map_record,
    "semantic-scholar": semantic_scholar.map_record,
    "crossref": crossref.map_record,
    "pwc-papers": pwc.map_paper,
    "pwc-links": pwc.map_link,
}


def read_shape(source: SourceFile, encoding: str) -> Iterator[Record | JsonLine]:
    """The records of a file of one JSON shape (`source.format`)."""
    sniff = sniff_json(read_head_bytes(source.path, SNIFF_BYTES))
    if sniff.container == "jsonl":
        yield from read_json_lines(source, encoding)
        return
    prefix = sniff.record_prefix if sniff.shape == source.format else _prefix_for(source, sniff)
    mapper = MAPPERS[source.format]
    count = 0
    with open_text(Path(source.path), encoding) as handle:
        try:
            values = ijson.items(_Utf8Bytes(handle), prefix, use_float=True, multiple_values=True)
            for count, value in enumerate(values, 1):
                yield map_value(mapper, source, count, value, None)
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
    """One JSON Lines record of a shape (in a worker process): parsed, then mapped."""
    try:
        value = json_io.loads(line.text)
    except json.JSONDecodeError as exc:
        reason = f"invalid JSON: {exc.msg} at column {exc.colno}"
        return Reject(line.source.path, line.number, reason, line.text)
    except json_io.NumberTooLong as exc:
        return Reject(line.source.path, line.number, str(exc), line.text)
    return map_value(MAPPERS[line.source.format], line.source, line.number, value, line.text)


def map_value(
    mapper: Mapper, source: SourceFile, position: int, value: Any, text: str | None
) -> Record:
    """A record from one parsed JSON value of a shape, or a Reject when it is not an object."""

    def raw() -> str:
        return text if text is not None else dumps(value)

    if not isinstance(value, dict):
        reason = f"expected a JSON object, got {type(value).__name__}"
        return Reject(source.path, position, reason, raw())
    return mapper(value, source, position, raw)

"""What one record of input may cost, whatever the input: nesting depth, a record's size, a
field's size; and the one rule for text that both backends share.

Readers stream, so a file's size never decides memory; these limits bound what a single
record (a line, a CSV row, a JSON value) can take. A record past a limit becomes a Reject
with the reason (the rest of its file loads); input that cannot be read within them (one
JSON string larger than a record may be) fails its file alone. The defaults are far above
anything an honest paper list holds; `etl run --max-depth/--max-record-size/--max-field-size`
change them (the run sets them in every process with `use`).

A reader needs at most four things from here:

- `lines(handle)`: numbered lines, a line longer than a record given as `OverLimit`;
- `json_records(stream)`: the records of a JSON document (array items, object members),
  built from ijson's events with the limits applied while they are built;
- `check(value, text)`: why a value parsed some other way (`json.loads`) is past a limit;
- `storable(item)`: U+0000 and lone surrogates (`"\\ud800"` in JSON) made U+FFFD: PostgreSQL
  text cannot hold U+0000 and neither backend's driver can encode a lone surrogate, so both
  store the replacement and the two backends hold the same text.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TextIO

import ijson

from etl.models import RawRecord, Reject

RAW_KEPT = 10_000  # characters of an over-limit record kept in `rejects.raw`
NUL, NUL_REPLACEMENT = "\x00", "\ufffd"
# What no text column stores: U+0000, and a surrogate code point standing alone (JSON's
# "\ud800" escape parses to one; UTF-8, hence both drivers, cannot encode it).
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_READ = 1 << 16  # characters read at a time while skipping the rest of a long line


@dataclass(frozen=True)
class Limits:
    """The limits in force; each has a flag on `etl run`."""

    depth: int = 100  # levels of nesting (`--max-depth`)
    record_size: int = 16 * 2**20  # characters of one record as written (`--max-record-size`)
    field_size: int = 2**20  # characters of one value (`--max-field-size`)


DEFAULT = Limits()
_current = DEFAULT


def use(limits: Limits) -> None:
    """Use these limits for the rest of the process (a run sets them in each worker too)."""
    global _current
    _current = limits


def current() -> Limits:
    """The limits in use: the defaults unless a run set others."""
    return _current


class Readable(Protocol):
    """What ijson reads: a binary stream."""

    def read(self, size: int = -1, /) -> bytes: ...


class OverLimit(NamedTuple):
    """A record (or line) past a limit: why, and the start of it for `rejects.raw`."""

    reason: str
    raw: str


class LimitError(Exception):
    """Input that cannot be read within the limits at all; the reader fails its file."""


def depth_reason(limits: Limits) -> str:
    return f"nested deeper than {limits.depth} levels (--max-depth)"


def size_reason(size: int, limit: int) -> str:
    return f"record is over {limit:,} characters (about {size:,}; --max-record-size)"


def field_reason(name: str | None, size: int, limits: Limits) -> str:
    what = f"field {name!r}" if name else "a value"
    return f"{what} is {size:,} characters; the limit is {limits.field_size:,} (--max-field-size)"


def lines(
    handle: TextIO, limits: Limits | None = None, *, keep_ends: bool = False
) -> Iterator[tuple[int, str | OverLimit]]:
    """Numbered lines (1-based), without their endings unless `keep_ends`; a line longer than
    a record is read past in pieces, never held, and given as OverLimit with its start."""
    limit = (limits or _current).record_size
    number = 0
    while line := handle.readline(limit + 1):
        number += 1
        if len(line) <= limit or line.endswith(("\n", "\r")):
            yield number, line if keep_ends else line.rstrip("\r\n")
            continue
        size = len(line)
        while (more := handle.readline(_READ)) and not more.endswith(("\n", "\r")):
            size += len(more)
        size += len(more.rstrip("\r\n"))
        reason = f"line is over {limit:,} characters (read {size:,}; --max-record-size)"
        yield number, OverLimit(reason, line[:RAW_KEPT])


def check(value: Any, text: str | None = None, limits: Limits | None = None) -> str | None:
    """Why a parsed value is past the depth or field limit, or None. With the text it was
    parsed from, values that cannot be past either (few brackets, short text) cost nothing."""
    limits = limits or _current
    if text is not None:
        brackets = text.count("[") + text.count("{")
        if brackets <= limits.depth and len(text) <= limits.field_size:
            return None
    stack: list[tuple[Any, int, str | None]] = [(value, 1, None)]
    while stack:
        item, depth, name = stack.pop()
        if isinstance(item, str):
            if len(item) > limits.field_size:
                return field_reason(name, len(item), limits)
        elif isinstance(item, dict | list):
            if depth > limits.depth:
                return depth_reason(limits)
            children = item.items() if isinstance(item, dict) else ((name, v) for v in item)
            for key, child in children:
                if isinstance(key, str) and len(key) > limits.field_size:
                    return field_reason(None, len(key), limits)
                stack.append((child, depth + 1, key))
    return None


def json_records(
    stream: Readable, limits: Limits | None = None
) -> Iterator[tuple[str | None, Any | OverLimit]]:
    """The records of a JSON document, one at a time: the items of a top-level array, or the
    members of a top-level object as (key, value), a member whose value is an array giving
    each of its items. A record past a limit is read past, never held, and given as OverLimit.
    Raises LimitError when one value (a string or number) is larger than a record may be, and
    ijson's errors for JSON that does not parse."""
    limits = limits or _current
    guarded = _Guarded(stream, limits.record_size)
    events = ijson.basic_parse(guarded, use_float=True)
    first = next(events, None)
    if first is None or first[0] not in ("start_array", "start_map"):
        raise LimitError("not JSON: expected an array or an object")
    guarded.since = 0
    in_object = first[0] == "start_map"
    key: str | None = None
    in_list = False  # inside an array that is a member of the top-level object
    for event, value in events:
        guarded.since = 0
        if event in ("end_array", "end_map"):
            if not in_list:
                break
            in_list = False
        elif in_object and not in_list and event == "map_key":
            key = value
        elif in_object and not in_list and event == "start_array":
            in_list = True
        elif event in ("start_map", "start_array"):
            yield key, _record(events, event, 2 + in_list, limits, guarded)
        else:
            yield key, value  # a scalar where a record should be: the reader says so
    for _ in events:  # what follows the document: ijson refuses anything but white space
        pass


Events = Iterator[tuple[str, Any]]


def _record(events: Events, event: str, base: int, limits: Limits, guarded: _Guarded) -> Any:
    """Build one record from ijson's events, its container opened by `event` at document
    depth `base`; past a limit, OverLimit (what is left of the record is read past)."""
    root: Any = {} if event == "start_map" else []
    stack = [root]
    key: Any = None
    size = 2  # characters as written, about: 2 for each value's punctuation, and its text
    levels = limits.depth - base + 1  # levels the record may open, its own container included
    field, record = limits.field_size, limits.record_size
    if levels < 1:
        return _skip(events, guarded, 1, size, depth_reason(limits), root)
    for event, value in events:
        guarded.since = 0
        size += 2
        if event == "map_key":
            size += len(value)
            if len(value) > field:
                return _skip(
                    events, guarded, len(stack), size, field_reason(None, len(value), limits), root
                )
            key = value
            continue
        if event == "end_map" or event == "end_array":
            stack.pop()
            if not stack:
                return root
            continue
        if event == "start_map" or event == "start_array":
            if len(stack) >= levels:
                return _skip(events, guarded, len(stack) + 1, size, depth_reason(limits), root)
            new: Any = {} if event == "start_map" else []
        else:
            new = value
            if type(value) is str:
                size += len(value)
                if len(value) > field:
                    reason = field_reason(key, len(value), limits)
                    return _skip(events, guarded, len(stack), size, reason, root)
        parent = stack[-1]
        if type(parent) is list:
            parent.append(new)
        else:
            parent[key] = new
        if new is not value:
            stack.append(new)
        if size > record:
            return _skip(events, guarded, len(stack), size, None, root)
    return root  # the document ended inside the record: ijson raises before this


def _skip(
    events: Events, guarded: _Guarded, depth: int, size: int, reason: str | None, built: Any
) -> OverLimit:
    """Read past the rest of a record `depth` levels deep; the reason it is rejected (None:
    its size, counted to its end), with the start of what was built."""
    raw = _head(built)
    del built
    for event, value in events:
        guarded.since = 0
        size += 2
        if event == "start_map" or event == "start_array":
            depth += 1
        elif event == "end_map" or event == "end_array":
            depth -= 1
            if depth == 0:
                break
        elif type(value) is str:
            size += len(value)
    return OverLimit(reason or size_reason(size, guarded.limit), raw)


def _head(value: Any) -> str:
    """The start of a partly built value as JSON text, for `rejects.raw`."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:RAW_KEPT]
    except (ValueError, RecursionError):
        return ""


class _Guarded:
    """The byte stream ijson reads, stopped when one token (a string or number) has run past
    a record's size: ijson's parser holds a token whole, so it could not be bounded later."""

    def __init__(self, stream: Readable, limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.offset = 0
        self.since = 0  # bytes read since the parser last gave an event (the caller resets it)

    def read(self, size: int = -1) -> bytes:
        """The next chunk, unless the chunks read since the last event already hold more
        than a record (the parser then holds at most a record and a chunk)."""
        if self.since > self.limit:
            raise LimitError(
                f"one JSON value runs past {self.limit:,} bytes before byte {self.offset:,} "
                "(--max-record-size): the file cannot be read within it"
            )
        chunk = self.stream.read(size)
        self.offset += len(chunk)
        self.since += len(chunk)
        return chunk


def storable(item: RawRecord | Reject) -> RawRecord | Reject:
    """The record with every U+0000 and lone surrogate in its text made U+FFFD (the same on
    both backends), in the JSON text of `extra` too."""
    changes = {
        field.name: _replace_unstorable(getattr(item, field.name))
        for field in dataclasses.fields(item)
        if _has_unstorable(getattr(item, field.name))
    }
    extra = item.extra if isinstance(item, RawRecord) else None
    # `extra` is JSON written with ensure_ascii=False: U+0000 in it is the escape "\u0000",
    # a lone surrogate the character itself.
    if extra and ("\\u0000" in extra or UNSTORABLE.search(extra)):
        cleaned = _replace_in_json(json.loads(extra))
        changes["extra"] = json.dumps(cleaned, ensure_ascii=False, default=str)
    return dataclasses.replace(item, **changes) if changes else item


def storable_text(text: str) -> str:
    """The text with U+0000 and lone surrogates made U+FFFD."""
    return UNSTORABLE.sub(NUL_REPLACEMENT, text)


def _has_unstorable(value: Any) -> bool:
    if isinstance(value, str):
        return UNSTORABLE.search(value) is not None
    return isinstance(value, tuple) and any(_has_unstorable(v) for v in value)


def _replace_unstorable(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    return tuple(_replace_unstorable(v) for v in value)


def _replace_in_json(value: Any) -> Any:
    """A parsed JSON value with U+0000 and lone surrogates made U+FFFD in its strings and keys."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, list):
        return [_replace_in_json(v) for v in value]
    if isinstance(value, dict):
        return {_replace_in_json(k): _replace_in_json(v) for k, v in value.items()}
    return value

"""What input may cost, whatever the input: nesting depth, a record's size, a field's size,
the values one record holds; what a compressed file may expand to; how many rejects a file
may have; and the one rule for text that both backends share.

Readers stream, so a file's size never decides memory; these limits bound what a single
record (a line, a CSV row, a JSON value, a BibTeX entry, an XML record) can take. A record past
a limit becomes a Reject with the reason (the rest of its file loads); input that cannot be
read within them (one JSON string larger than a record may be) fails its file alone. The
defaults are far above anything an honest paper list holds; `etl run --max-*` flags change
them (the run sets them in every process with `use`).

A reader needs some of these:

- `lines(handle)`: numbered lines, a line longer than a record given as `OverLimit`;
- `json_records(stream)`: the records of a JSON document (array items, object members),
  built from ijson's events with the limits applied while they are built;
- `records_at(stream, prefix)`: the same for the records at one place of a document (an API
  response's `results`, a top-level array, each top-level value);
- `parse_line(text)`: one JSON Lines record parsed within the limits;
- `check(value, text)`: why a value parsed some other way is past a limit;
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

from etl.extract import json_io
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
    # strings, numbers, keys, lists and objects in one record (`--max-values`): what a record
    # costs in memory once parsed (an empty list is 3 characters, and 60 bytes held)
    values: int = 1_000_000
    expansion: int = 100  # times its stored size a compressed file may hold (`--max-expansion`)
    expanded_size: int = 64 * 2**30  # bytes a compressed file may hold (`--max-expanded-size`)
    rejects: int = 1_000  # a file's rejects, while they outnumber its records (`--max-rejects`)

    def for_records(self) -> tuple[int, int, int, int]:
        """The limits that decide which records are rejected (changing one reads every file
        again); the others decide only whether a file fails."""
        return (self.depth, self.record_size, self.field_size, self.values)

    def expanded_bound(self, stored: int) -> int:
        """Bytes a compressed file of `stored` bytes may hold: `expansion` times its size, but
        never less than EXPANSION_FLOOR (a small file of repeated lines compresses far better
        than a dump) nor more than `expanded_size`."""
        return min(self.expanded_size, max(EXPANSION_FLOOR, self.expansion * stored))


# What a compressed file may always hold, whatever its ratio.
EXPANSION_FLOOR = 64 * 2**20


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


def values_reason(limits: Limits) -> str:
    return f"record holds over {limits.values:,} values (--max-values)"


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
    """Why a parsed value is past the depth, field or values limit, or None. With the text it
    was parsed from, values that cannot be past any (few brackets, short text) cost nothing."""
    limits = limits or _current
    if text is not None:
        brackets = text.count("[") + text.count("{")
        if (
            brackets <= limits.depth
            and len(text) <= limits.field_size
            and most_values(text) <= limits.values
        ):
            return None
    stack: list[tuple[Any, int, str | None]] = [(value, 1, None)]
    count = 0
    while stack:
        item, depth, name = stack.pop()
        count += 1
        if count > limits.values:
            return values_reason(limits)
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
                count += isinstance(item, dict)  # a key is held too
                stack.append((child, depth + 1, key))
    return None


def most_values(text: str) -> int:
    """The most values (and keys) a JSON text can hold: each follows a comma, a colon or an
    opening bracket, or is a bracketed value itself (strings may hold some of them too)."""
    brackets = text.count("[") + text.count("{")
    return text.count(",") + text.count(":") + 2 * brackets + 1


def parse_line(text: str, limits: Limits | None = None) -> Any | OverLimit:
    """One JSON Lines record parsed (etl.extract.json_io.loads), or OverLimit when it is past
    the depth, field or values limit. A line that may hold more values than a record may is
    read from ijson's events first, nothing built, so that it is never parsed whole.
    Raises what json_io.loads raises for text that does not parse."""
    limits = limits or _current
    if most_values(text) > limits.values:
        reason = _scan(text, limits)
        if reason is not None:
            return OverLimit(reason, text[:RAW_KEPT])
    try:
        value = json_io.loads(text)
    except RecursionError:  # the C parser stops far past any depth limit, holding nothing
        return OverLimit(depth_reason(limits), text[:RAW_KEPT])
    reason = check(value, text, limits)
    return value if reason is None else OverLimit(reason, text[:RAW_KEPT])


def _scan(text: str, limits: Limits) -> str | None:
    """Why a JSON text is past the depth, field or values limit, from its events (nothing is
    built); "invalid JSON" when ijson cannot read it (a line this large is read strictly)."""
    backend = ijson
    while True:
        try:
            stream = json_io.Utf8Json(_Slices(text))  # never the whole text encoded at once
            return _scanned(backend.basic_parse(stream, use_float=True), limits)
        except ijson.JSONError as exc:
            if "integer overflow" in str(exc) and backend is ijson:  # Python reads those
                backend = ijson.get_backend("python")
                continue
            return f"invalid JSON: {exc}"


class _Slices:
    """A string read as a text stream, a slice at a time (io.StringIO would copy it whole)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def read(self, size: int = -1) -> str:
        end = len(self.text) if size < 0 else self.at + size
        piece, self.at = self.text[self.at : end], min(end, len(self.text))
        return piece


def _scanned(events: Events, limits: Limits) -> str | None:
    """The first limit the events pass, or None."""
    depth = count = 0
    key: str | None = None
    for event, value in events:
        if event == "end_map" or event == "end_array":
            depth -= 1
            continue
        count += 1
        if count > limits.values:
            return values_reason(limits)
        if event == "start_map" or event == "start_array":
            depth += 1
            if depth > limits.depth:
                return depth_reason(limits)
        elif event == "map_key":
            key = value
            if len(value) > limits.field_size:
                return field_reason(None, len(value), limits)
        elif type(value) is str and len(value) > limits.field_size:
            return field_reason(key, len(value), limits)
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
        elif key is not None and len(key) > limits.field_size:  # a record's id: not held
            if event in ("start_map", "start_array"):
                _pass(events, guarded)
            reason = f"its key is {len(key):,} characters; the limit is {limits.field_size:,}"
            yield key[:RAW_KEPT], OverLimit(f"{reason} (--max-field-size)", key[:RAW_KEPT])
        elif in_object and not in_list and event == "start_array":
            in_list = True
        elif event in ("start_map", "start_array"):
            yield key, _record(events, event, 2 + in_list, limits, guarded)
        else:
            yield key, value  # a scalar where a record should be: the reader says so
    for _ in events:  # what follows the document: ijson refuses anything but white space
        pass


Events = Iterator[tuple[str, Any]]


def records_at(stream: Readable, prefix: str, limits: Limits | None = None) -> Iterator[Any]:
    """The values at one place of a JSON text, one at a time, as ijson's `items(prefix)` gives
    them (`item`: a top-level array's items; `results.item`: those of the `results` member;
    `message`: that member; "": each top-level value), each built within the limits: a record
    past one is read past, never held, and given as OverLimit. Whatever is not on the way to
    the records (an envelope's `meta`) is read past without being built. Raises LimitError
    and ijson's errors as `json_records` does."""
    limits = limits or _current
    guarded = _Guarded(stream, limits.record_size)
    events = ijson.basic_parse(guarded, use_float=True, multiple_values=True)
    wanted = prefix.split(".") if prefix else []
    base = len(wanted) + 1  # the document depth of a record's own container
    path: list[str] = []  # where the next value goes: each open container's key, or "item"
    for event, value in events:
        guarded.since = 0
        if event == "map_key":
            path[-1] = value
        elif event == "end_map" or event == "end_array":
            path.pop()
        elif path == wanted:
            opens = event == "start_map" or event == "start_array"
            yield _record(events, event, base, limits, guarded) if opens else value
        elif event == "start_map" or event == "start_array":
            if len(path) < len(wanted) and wanted[: len(path)] == path:
                path.append("" if event == "start_map" else "item")
            else:
                _pass(events, guarded)


def _pass(events: Events, guarded: _Guarded) -> None:
    """Read past the rest of a container just opened, holding nothing of it."""
    depth = 1
    for event, _value in events:
        guarded.since = 0
        if event == "start_map" or event == "start_array":
            depth += 1
        elif event == "end_map" or event == "end_array":
            depth -= 1
            if depth == 0:
                return


def _record(events: Events, event: str, base: int, limits: Limits, guarded: _Guarded) -> Any:
    """Build one record from ijson's events, its container opened by `event` at document
    depth `base`; past a limit, OverLimit (what is left of the record is read past)."""
    root: Any = {} if event == "start_map" else []
    stack = [root]
    key: Any = None
    size = 2  # characters as written, about: 2 for each value's punctuation, and its text
    levels = limits.depth - base + 1  # levels the record may open, its own container included
    field, record, most = limits.field_size, limits.record_size, limits.values
    count = 1  # values and keys held
    if levels < 1:
        return _skip(events, guarded, 1, size, depth_reason(limits), root)
    for event, value in events:
        guarded.since = 0
        size += 2
        if event == "end_map" or event == "end_array":
            stack.pop()
            if not stack:
                return root
            continue
        count += 1
        opens = event == "start_map" or event == "start_array"
        if count > most:
            return _skip(events, guarded, len(stack) + opens, size, values_reason(limits), root)
        if event == "map_key":
            size += len(value)
            if len(value) > field:
                return _skip(
                    events, guarded, len(stack), size, field_reason(None, len(value), limits), root
                )
            key = value
            continue
        if opens:
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

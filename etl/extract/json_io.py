"""JSON as the readers parse it and as `papers.extra` and `rejects.raw` hold it.

`extra` must always be JSON that both databases' JSON functions read, or one record breaks
every `json_extract(extra, ...)` over the table. Python's `json` reads `NaN`, `Infinity` and
`1e999999` (a float that overflows) and would write them back as `NaN`/`Infinity`, which is
not JSON: such numbers are kept as strings instead, spelled as in the input where the input
was parsed here (`"1e999999"`, `"-Infinity"`), else as `"Infinity"`, `"-Infinity"`, `"NaN"`.
An integer longer than Python converts (4,300 digits) is `NumberTooLong`, which a reader
makes a reject.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Protocol


class NumberTooLong(ValueError):
    """A JSON integer with more digits than Python converts to int."""


def loads(text: str) -> Any:
    """A JSON text parsed: non-finite numbers as strings (as written), never as floats.

    json.JSONDecodeError if it does not parse; NumberTooLong for an integer too long."""
    try:
        return json.loads(text, parse_constant=str, parse_float=_finite_or_text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # int(): "Exceeds the limit (4300 digits) for integer string ..."
        raise NumberTooLong(
            f"a number of more than {_int_digits_limit():,} digits, which is not read"
        ) from exc


def dumps(value: Any) -> str:
    """A value as JSON text that is valid JSON: non-finite floats written as strings."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere (ijson's floats): rare, so walk it then
        return json.dumps(_finite(value), ensure_ascii=False, default=str)


def _finite_or_text(text: str) -> float | str:
    number = float(text)
    return number if math.isfinite(number) else text


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def _int_digits_limit() -> int:
    return sys.get_int_max_str_digits() or 4300


# A JSON escape of a surrogate: a high one with the low one that pairs it, or either alone.
# `\\` pairs are matched too, so that `\\ud800` (a backslash, then text) is never read as one.
_HIGH, _LOW = r"\\u[dD][89abAB][0-9a-fA-F]{2}", r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_SURROGATE_ESCAPE = rf"\\\\|{_HIGH}(?:{_LOW})?|{_LOW}"
SURROGATE_ESCAPE_RE = re.compile(_SURROGATE_ESCAPE)
_HIGH_RE = re.compile(_HIGH)
_ANY_SURROGATE_RE = re.compile(r"\\u[dD][89a-fA-F]")
SURROGATE_ESCAPE_BYTES_RE = re.compile(_SURROGATE_ESCAPE.encode("ascii"))
_ESCAPE_TAIL = 12  # characters of a surrogate pair's escape, held back until the next chunk


def paired_escapes(text: str) -> str:
    """JSON text with each lone surrogate escape (`"\\ud800"`) made `\\ufffd`, the one rule for
    text (etl.extract.limits): ijson's C parser cannot decode one and fails the whole file."""
    if not _ANY_SURROGATE_RE.search(text):  # nearly always: no callback per `\\` pair
        return text
    return SURROGATE_ESCAPE_RE.sub(_keep_pairs, text)


def paired_escapes_bytes(data: bytes) -> bytes:
    """`paired_escapes` on UTF-8 bytes (the head a file's shape is sniffed from)."""
    return SURROGATE_ESCAPE_BYTES_RE.sub(
        lambda m: m.group(0) if len(m.group(0)) in (2, 12) else b"\\ufffd", data
    )


def _keep_pairs(match: re.Match[str]) -> str:
    return match.group(0) if len(match.group(0)) in (2, 12) else "\\ufffd"


class TextSource(Protocol):
    """What Utf8Json reads: a text stream (a file, or a string read a slice at a time)."""

    def read(self, size: int = -1, /) -> str: ...


class Utf8Json:
    """A JSON text stream read as UTF-8 bytes, which is what ijson parses (whatever the file's
    codec), lone surrogate escapes made `\\ufffd` on the way (`paired_escapes`).

    A chunk is cut before a backslash near its end, at an even count of backslashes, and the
    rest held for the next chunk: no escape is split and `\\\\` pairs stay pairs."""

    def __init__(self, handle: TextSource) -> None:
        self.handle = handle
        self.held = ""

    def read(self, size: int = -1) -> bytes:
        while True:
            chunk = self.handle.read(size)
            text = self.held + chunk
            if not chunk or size < 0:  # the end: nothing more to wait for
                self.held = ""
                return paired_escapes(text).encode("utf-8")
            cut = _cut(text)
            text, self.held = text[:cut], text[cut:]
            if text:  # (an empty read would be the end of the stream to ijson)
                return paired_escapes(text).encode("utf-8")


def _cut(text: str) -> int:
    """Where to cut a chunk so that no escape (nor surrogate pair) is split: before the first
    backslash of its last characters (before a high surrogate's escape just before it),
    less one when an odd count of backslashes comes just before it."""
    start = text.find("\\", max(len(text) - _ESCAPE_TAIL, 0))
    if start < 0:
        return len(text)
    if _HIGH_RE.fullmatch(text, max(start - 6, 0), start):  # its low half may follow
        start -= 6
    before = text[:start]
    return start - (len(before) - len(before.rstrip("\\"))) % 2

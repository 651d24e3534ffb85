"""Which shape of input a file holds, decided by its content (its name only breaks ties).

Shapes: the paper lists (`text`, `json`, `jsonl`, `csv`) and the metadata services and dumps
people hold (`arxiv`, `openalex`, `openreview`, `semantic-scholar`, `crossref`, `dblp`,
`bibtex`, `pwc-papers`, `pwc-links`). JSON shapes are told apart by the keys of the first
records, wherever the service puts them (a JSON Lines stream, an array, or an API response
such as OpenAlex's `results` or Crossref's `message.items`).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from etl.errors import SourceError
from etl.extract import json_io
from etl.extract.files import content_suffix, detect_format

FORMATS = {
    "text": "a plain-text abstract list",
    "json": "JSON records (an array, or an object of records)",
    "jsonl": "JSON Lines records",
    "csv": "CSV or TSV records",
    "arxiv": "the arXiv metadata snapshot",
    "openalex": "OpenAlex works",
    "openreview": "OpenReview notes (API v1 or v2)",
    "semantic-scholar": "Semantic Scholar papers (Graph API or datasets)",
    "crossref": "Crossref works",
    "dblp": "DBLP XML",
    "bibtex": "BibTeX",
    "pwc-papers": "the Papers with Code archive's papers (papers-with-abstracts.json)",
    "pwc-links": "the Papers with Code archive's code links (links-between-papers-and-code.json)",
}
JSON_SHAPES = frozenset(
    {"arxiv", "openalex", "openreview", "semantic-scholar", "crossref", "pwc-papers", "pwc-links"}
)
# Where API responses keep their records: (key path, JSON shapes that use it).
ENVELOPES = (
    ("results", "openalex"),
    ("data", "semantic-scholar"),
    ("notes", "openreview"),
    ("message.items", "crossref"),
    ("items", "crossref"),
    ("message", "crossref"),
)
SNIFF_BYTES = 1 << 20  # enough for the first records of any of them
# nesting read for a shape: records of every known shape name theirs within a few levels
SNIFF_DEPTH = 16
MAX_EVENTS = 200_000
BIBTEX_ENTRY_RE = re.compile(r"^\s*@\s*[A-Za-z]+\s*[{(]")
DBLP_RE = re.compile(
    r"<(?:dblp|dblpperson)\b|<(?:article|inproceedings|incollection|proceedings|phdthesis|"
    r"mastersthesis|book|www)\s[^>]*\bkey\s*="
)


def expected() -> str:
    """The shapes etl reads, for messages about a file that is none of them."""
    return "; ".join(f"{name} ({what})" for name, what in FORMATS.items())


def unrecognised(path: str, what: str) -> SourceError:
    """The error for a file whose shape is none etl reads."""
    return SourceError(
        path,
        f"{what}: not a shape etl reads. Expected one of: {expected()}. "
        "If it is one of them, name it with --source-format NAME",
    )


def detect_shape(path: Path, head: str, head_bytes: bytes) -> str:
    """The shape of a file from its first characters (and bytes); SourceError when it is XML
    or BibTeX-like but not a shape etl reads."""
    name = str(path)
    stripped = head.lstrip("\ufeff \t\r\n")
    suffix = content_suffix(path)
    if stripped.startswith("<"):
        if DBLP_RE.search(head):
            return "dblp"
        raise unrecognised(name, "XML that is not DBLP's (no <dblp> or keyed record elements)")
    if suffix in (".bib", ".bibtex") or _looks_like_bibtex(head):
        return "bibtex"
    if suffix == ".xml":
        raise unrecognised(name, "a .xml file that does not start with XML")
    basic = detect_format(path, head)
    if basic in ("json", "jsonl"):
        return sniff_json(head_bytes).shape or basic
    return basic


def _looks_like_bibtex(head: str) -> bool:
    """The first line that is not blank or a `%` comment opens a BibTeX entry (`@article{`)."""
    for line in head.splitlines():
        text = line.strip()
        if text and not text.startswith("%"):
            return bool(BIBTEX_ENTRY_RE.match(text))
    return False


@dataclass
class JsonSniff:
    """What the first bytes of a JSON file say: how records are held, and their shape."""

    container: str = "json"  # "json" (one value) or "jsonl" (a stream of values)
    top: str = ""  # "map" or "array": the type of the (first) top-level value
    top_keys: set[str] = field(default_factory=set)
    record_prefix: str = "item"  # ijson prefix of the records in a JSON value
    shape: str | None = None


def sniff_json(head: bytes) -> JsonSniff:
    """Where the records of a JSON or JSON Lines head are, and which shape they have.

    Read from ijson's basic events, with prefixes built here for the first SNIFF_DEPTH
    levels only: ijson's own prefixes grow with the nesting, so a file nested 100,000 levels
    deep would cost gigabytes before its record is rejected (etl.extract.limits)."""
    sniff, keys, values, overflow = _sniff_events(head, ijson.basic_parse)
    if overflow:  # the C parser stops at an integer past 64 bits, which Python reads
        sniff, keys, values, _ = _sniff_events(head, ijson.get_backend("python").basic_parse)
    sniff.top_keys = keys.get("", set())
    for prefix in _record_prefixes(sniff):
        shape = classify(keys.get(prefix, set()), values, prefix)
        if shape:
            sniff.record_prefix, sniff.shape = prefix, shape
            return sniff
    if sniff.container == "json" and sniff.top == "map" and "message-type" in sniff.top_keys:
        sniff.shape = "crossref"
        sniff.record_prefix = "message.items.item" if "message.items" in keys else "message"
    return sniff


def _sniff_events(
    head: bytes, parse: Callable[..., Any]
) -> tuple[JsonSniff, dict[str, set[str]], dict[str, str], bool]:
    """What the events of a head show: the sniff so far, the keys and first strings by
    prefix, and whether parsing stopped at an integer too large for the parser."""
    sniff = JsonSniff()
    keys: dict[str, set[str]] = {}
    values: dict[str, str] = {}
    open_: list[tuple[bool, str]] = []  # (is a map, its prefix) of each open container
    key: list[str] = []  # the current key of each open container ("" in an array)
    tops = 0
    overflow = False

    def here() -> str:
        """The ijson prefix of the value being read."""
        if not open_:
            return ""
        is_map, prefix = open_[-1]
        part = key[-1] if is_map else "item"
        return f"{prefix}.{part}" if prefix else part

    try:
        # A lone surrogate escape would fail ijson's UTF-8 decoding: the one rule for text.
        paired = json_io.paired_escapes_bytes(head)
        events = parse(io.BytesIO(paired), multiple_values=True, use_float=True)
        for count, (event, value) in enumerate(events):
            if count > MAX_EVENTS or len(open_) > SNIFF_DEPTH:
                break
            if event in ("start_map", "start_array"):
                if not open_:
                    tops += 1
                    if tops == 1:
                        sniff.top = "map" if event == "start_map" else "array"
                    else:
                        sniff.container = "jsonl"
                open_.append((event == "start_map", here()))
                key.append("")
            elif event in ("end_map", "end_array"):
                open_.pop()
                key.pop()
            elif event == "map_key":
                keys.setdefault(open_[-1][1], set()).add(value)
                key[-1] = value
            elif event == "string":
                prefix = here()
                if prefix.count(".") <= 3:
                    values.setdefault(prefix, value)
    except ijson.JSONError as exc:
        # The head ends inside a record, or the file is not JSON: decided on what was seen.
        overflow = "integer overflow" in str(exc)
    except ValueError:
        pass  # an integer past Python's digit limit: decided on what was seen
    return sniff, keys, values, overflow


def _record_prefixes(sniff: JsonSniff) -> Iterable[str]:
    """Where records may be, most likely first."""
    if sniff.container == "jsonl" or sniff.top == "map":
        yield ""  # a stream of records, or one record
    if sniff.top == "array":
        yield "item"
    if sniff.top == "map":
        for path, _shape in ENVELOPES:
            yield path if path == "message" else path + ".item"


def classify(keys: set[str], values: dict[str, str], prefix: str = "") -> str | None:
    """The shape of records with these keys (values: first strings by ijson prefix)."""
    if not keys:
        return None
    at = f"{prefix}." if prefix else ""
    record_id = values.get(at + "id", "")
    if "authors_parsed" in keys or {"submitter", "versions", "categories"} <= keys:
        return "arxiv"
    if "abstract_inverted_index" in keys or "authorships" in keys:
        return "openalex"
    if record_id.startswith("https://openalex.org/W"):
        return "openalex"
    if "content" in keys and keys & {"forum", "invitation", "invitations", "replyto"}:
        return "openreview"
    if keys & {"paperId", "externalIds", "externalids", "corpusid", "corpusId"}:
        return "semantic-scholar"
    if "DOI" in keys and keys & {"container-title", "issued", "published", "published-print"}:
        return "crossref"
    if "paper_url" in keys and "repo_url" in keys:
        return "pwc-links"
    if "paper_url" in keys and keys & {"arxiv_id", "url_abs", "tasks", "methods", "proceeding"}:
        return "pwc-papers"
    return None

"""The Papers with Code archive: `papers-with-abstracts.json` (papers with the tasks and
methods the site listed for them) and `links-between-papers-and-code.json` (one record per
paper and repository).

Listed tasks and methods are kept as the archive says them (`listed`), apart from what the
transform finds. A paper's code links are one record: the links file's records are grouped
by paper on disk (a temporary SQLite file), then each paper is handed over with all of its
repositories, at its first record's position. Memory holds one paper's records, however the
file orders them; a paper whose records together are past the record size or values limit
is a reject.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ijson

from etl.errors import SourceError
from etl.extract import json_io, limits
from etl.extract.files import open_text, read_head_bytes
from etl.extract.readers import _Utf8Bytes
from etl.extract.records import (
    as_dict,
    as_list,
    build,
    dumps,
    is_author,
    text,
    unmapped,
    venue_of,
    year_of,
)
from etl.extract.shapes import SNIFF_BYTES, sniff_json
from etl.models import RawRecord, Reject, SourceFile

PAPER_MAPPED = (
    "paper_url",
    "arxiv_id",
    "title",
    "abstract",
    "url_abs",
    "url_pdf",
    "authors",
    "tasks",
    "methods",
    "proceeding",
)
LINK_MAPPED = ("paper_url", "paper_title", "paper_arxiv_id", "paper_url_abs", "paper_url_pdf")
REPO_FIELDS = ("repo_url", "is_official", "mentioned_in_paper", "mentioned_in_github", "framework")
PAPER_PAGE = "/paper/"
BATCH_CHARS = 8 * 2**20  # characters of records written to the grouping file at a time


def map_paper(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one record of papers-with-abstracts.json."""
    proceeding = text(value.get("proceeding"))
    venue, year, _ = venue_of(proceeding.replace("-", " ") if proceeding else None)
    listed: list[tuple[str, str, str | None]] = [
        ("task", name, None) for name in _names(value.get("tasks"))
    ]
    for method in as_list(value.get("methods")):
        method = as_dict(method)
        name = text(method.get("name"))
        if name:
            rest = {k: v for k, v in method.items() if k != "name"}
            listed.append(("method", name, json.dumps(rest, ensure_ascii=False) if rest else None))
    extra = unmapped(value, PAPER_MAPPED)
    if proceeding:
        extra["proceeding"] = proceeding
    return build(
        source,
        position,
        raw,
        title=text(value.get("title")),
        abstract=text(value.get("abstract")),
        authors=[a for a in _names(value.get("authors")) if is_author(a)],
        links=[
            ("url", text(value.get("url_abs")) or ""),
            ("pdf", text(value.get("url_pdf")) or ""),
            ("paperswithcode", text(value.get("paper_url")) or ""),
        ],
        venue=venue,
        year=year or year_of(value.get("date")),
        ids=[("pwc", _slug(value.get("paper_url"))), ("arxiv", text(value.get("arxiv_id")) or "")],
        listed=listed,
        extra=extra,
    )


def map_link(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one record of links-between-papers-and-code.json."""
    return map_links([value], source, position, raw)


def map_links(
    values: list[dict[str, Any]], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from the records of one paper's repositories (at least one)."""
    first = values[0]
    repositories = [{k: v for k, v in item.items() if k in REPO_FIELDS} for item in values]
    links = [
        ("url", text(first.get("paper_url_abs")) or ""),
        ("pdf", text(first.get("paper_url_pdf")) or ""),
        ("paperswithcode", text(first.get("paper_url")) or ""),
    ]
    for repository in repositories:
        official = repository.get("is_official") is True
        links.append(
            ("official code" if official else "code", text(repository.get("repo_url")) or "")
        )
    extra = unmapped(first, (*LINK_MAPPED, *REPO_FIELDS))
    extra["repositories"] = repositories
    return build(
        source,
        position,
        raw,
        title=text(first.get("paper_title")),
        abstract=None,
        links=links,
        ids=[
            ("pwc", _slug(first.get("paper_url"))),
            ("arxiv", text(first.get("paper_arxiv_id")) or ""),
        ],
        extra=extra,
    )


def read_links(source: SourceFile, encoding: str) -> Iterator[RawRecord | Reject]:
    """The links file, one record per paper with all of its repositories, at the paper's
    first position (see above)."""
    with _Groups() as groups:
        for position, value in _values(source, encoding):
            if isinstance(value, Reject):
                yield value
            elif not isinstance(value, dict):
                reason = f"expected a JSON object, got {type(value).__name__}"
                yield Reject(source.path, position, reason, dumps(value))
            else:
                groups.add(_paper_key(value), position, dumps(value))
        yield from groups.papers(source)


class _Groups:
    """Each paper's records, grouped on disk (a temporary SQLite file that SQLite sorts in
    bounded memory): the file may list a paper's repositories anywhere, and memory holds one
    paper's records at a time, whatever the file holds."""

    def __enter__(self) -> _Groups:
        self.folder = tempfile.TemporaryDirectory(prefix="etl-links-")
        self.db = sqlite3.connect(Path(self.folder.name) / "links.db")
        self.db.executescript(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;"
            "PRAGMA cache_size = -8000;"  # KB: what SQLite holds before sorting on disk
            "CREATE TABLE paper (key BLOB PRIMARY KEY, first INTEGER NOT NULL) WITHOUT ROWID;"
            "CREATE TABLE link (key BLOB NOT NULL, position INTEGER NOT NULL, record TEXT);"
        )
        self.rows: list[tuple[bytes, int, str]] = []
        self.held = 0
        return self

    def __exit__(self, *_: object) -> None:
        self.db.close()
        self.folder.cleanup()

    def add(self, key: bytes, position: int, record: str) -> None:
        """One record of a paper, as JSON text."""
        self.rows.append((key, position, record))
        self.held += len(record)
        if len(self.rows) >= 1_000 or self.held > BATCH_CHARS:
            self._write()

    def _write(self) -> None:
        self.db.executemany("INSERT OR IGNORE INTO paper VALUES (?, ?)", (r[:2] for r in self.rows))
        self.db.executemany("INSERT INTO link VALUES (?, ?, ?)", self.rows)
        self.rows, self.held = [], 0

    def papers(self, source: SourceFile) -> Iterator[RawRecord | Reject]:
        """A record per paper, in the order of their first records; a paper whose records
        together are past the record size or values limit is a Reject."""
        self._write()
        rows = self.db.execute(
            "SELECT link.key, link.position, link.record FROM link JOIN paper USING (key) "
            "ORDER BY paper.first, link.position"
        )
        group = _Group()
        for key, position, record in rows:
            if key != group.key:
                if group.key is not None:
                    yield group.result(source)
                group = _Group(key)
            group.add(position, record)
        if group.key is not None:
            yield group.result(source)


class _Group:
    """One paper's records as they are read back, held while within the limits."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key
        self.items: list[tuple[int, dict[str, Any]]] = []
        self.first = 0
        self.count = self.size = self.values = 0
        self.raw: list[str] = []  # the start of its records' text, for a reject

    def add(self, position: int, record: str) -> None:
        chosen = limits.current()
        self.first = self.first or position
        self.count += 1
        self.size += len(record)
        self.values += limits.most_values(record)
        if sum(map(len, self.raw)) < limits.RAW_KEPT:
            self.raw.append(record)
        if self.size <= chosen.record_size and self.values <= chosen.values:
            self.items.append((position, json.loads(record)))
        else:
            self.items = []  # past a limit: nothing more is held

    def result(self, source: SourceFile) -> RawRecord | Reject:
        """The paper's record, or why its records together are past a limit."""
        chosen = limits.current()
        if self.size > chosen.record_size or self.values > chosen.values:
            what = (
                limits.size_reason(self.size, chosen.record_size)
                if self.size > chosen.record_size
                else limits.values_reason(chosen)
            )
            reason = f"the paper's {self.count:,} records together: {what}"
            return Reject(source.path, self.first, reason, "\n".join(self.raw)[: limits.RAW_KEPT])
        return _grouped(self.items, source)


def _grouped(group: list[tuple[int, dict[str, Any]]], source: SourceFile) -> RawRecord | Reject:
    """One paper's records (position, record) as one RawRecord, at its first position."""
    items = [item for _, item in group]
    return map_links(items, source, group[0][0], lambda: dumps(items))


def _values(source: SourceFile, encoding: str) -> Iterator[tuple[int, Any]]:
    """(position, parsed record, or Reject) of a JSON array or JSON Lines file, each record
    read within the limits."""
    sniff = sniff_json(read_head_bytes(source.path, SNIFF_BYTES))
    with open_text(Path(source.path), encoding) as handle:
        if sniff.container == "jsonl":
            for number, line in limits.lines(handle):
                if isinstance(line, limits.OverLimit):
                    yield number, Reject(source.path, number, line.reason, line.raw)
                elif line.strip():
                    yield number, _parsed_line(source, number, line)
            return
        prefix = "item" if sniff.top == "array" else ""
        count = 0
        try:
            for count, value in enumerate(limits.records_at(_Utf8Bytes(handle), prefix), 1):
                if isinstance(value, limits.OverLimit):
                    value = Reject(source.path, count, value.reason, value.raw)
                yield count, value
        except limits.LimitError as exc:
            raise SourceError(source.path, f"{exc} (after record {count})") from exc
        except ijson.JSONError as exc:
            raise SourceError(
                source.path, f"JSON does not parse after record {count}: {exc}"
            ) from exc


def _parsed_line(source: SourceFile, number: int, line: str) -> Any:
    """One JSON Lines record parsed within the limits, or a Reject saying why not."""
    try:
        value = limits.parse_line(line)
    except (json.JSONDecodeError, json_io.NumberTooLong) as exc:
        reason = f"invalid JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        return Reject(source.path, number, reason, line[: limits.RAW_KEPT])
    if isinstance(value, limits.OverLimit):
        return Reject(source.path, number, value.reason, value.raw)
    return value


def _paper_key(value: Any) -> bytes:
    """What groups a paper's records: its page on the site (else its title), hashed small."""
    record = as_dict(value)
    name = text(record.get("paper_url")) or text(record.get("paper_title")) or dumps(value)
    return hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()


def _slug(paper_url: Any) -> str:
    """The paper's name on the site, from its page URL (`.../paper/attention-is-all-you`)."""
    url = text(paper_url) or ""
    return url.split(PAPER_PAGE, 1)[1].strip("/") if PAPER_PAGE in url else ""


def _names(value: Any) -> list[str]:
    """Strings of a list field."""
    return [t for t in (text(x) for x in as_list(value)) if t]

"""The Papers with Code archive: `papers-with-abstracts.json` (papers with the tasks and
methods the site listed for them) and `links-between-papers-and-code.json` (one record per
paper and repository).

Listed tasks and methods are kept as the archive says them (`listed`), apart from what the
transform finds. A paper's code links are one record: the links file is read twice, first
to count each paper's repositories, then to hand each paper over once all of them are seen
(memory holds only the papers whose repositories are not yet all read, few when the file
lists a paper's repositories together, as the archive does).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ijson

from etl.errors import SourceError
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
    """The links file, one record per paper with all of its repositories (see above)."""
    remaining: dict[bytes, int] = {}
    for _, value in _values(source, encoding):
        key = _paper_key(value)
        remaining[key] = remaining.get(key, 0) + 1
    pending: dict[bytes, list[tuple[int, dict[str, Any]]]] = {}
    for position, value in _values(source, encoding):
        if not isinstance(value, dict):
            reason = f"expected a JSON object, got {type(value).__name__}"
            yield Reject(source.path, position, reason, dumps(value))
            continue
        key = _paper_key(value)
        group = pending.setdefault(key, [])
        group.append((position, value))
        remaining[key] -= 1
        if remaining[key] == 0:
            del pending[key], remaining[key]
            yield _grouped(group, source)
    for group in pending.values():  # the file changed between the passes: what is left
        yield _grouped(group, source)


def _grouped(group: list[tuple[int, dict[str, Any]]], source: SourceFile) -> RawRecord | Reject:
    """One paper's records (position, record) as one RawRecord, at its first position."""
    items = [item for _, item in group]
    return map_links(items, source, group[0][0], lambda: dumps(items))


def _values(source: SourceFile, encoding: str) -> Iterator[tuple[int, Any]]:
    """(position, parsed record) of a JSON array or JSON Lines file."""
    sniff = sniff_json(read_head_bytes(source.path, SNIFF_BYTES))
    with open_text(Path(source.path), encoding) as handle:
        if sniff.container == "jsonl":
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        yield number, json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise SourceError(
                            source.path, f"invalid JSON: {exc.msg}", line=number
                        ) from exc
            return
        prefix = "item" if sniff.top == "array" else ""
        count = 0
        try:
            items = ijson.items(_Utf8Bytes(handle), prefix, use_float=True, multiple_values=True)
            for count, value in enumerate(items, 1):
                yield count, value
        except ijson.JSONError as exc:
            raise SourceError(
                source.path, f"JSON does not parse after record {count}: {exc}"
            ) from exc


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

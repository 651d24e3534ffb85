"""Mapping records with varying field names onto RawRecord; everything else is kept as JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from etl.models import RawRecord, Reject

MAX_ABSTRACT_CHARS = 100_000
MAX_TITLE_CHARS = 2_000

TITLE_FIELDS = ("title", "papertitle", "name", "headline")
ABSTRACT_FIELDS = ("abstract", "summary", "paperabstract", "description", "abs")
AUTHOR_FIELDS = ("authors", "author", "authorlist", "authornames", "creators")
KEYWORD_FIELDS = ("keywords", "keyword", "tags", "subjects", "topics")
STATUS_FIELDS = ("status", "track", "decision", "type", "session", "presentation")
ID_FIELDS = ("id", "paperid", "uid", "openreviewid", "forumid", "doi", "arxivid", "key")
VENUE_FIELDS = ("venue", "conference", "booktitle", "journal")
YEAR_FIELDS = ("year", "conferenceyear", "publicationyear")
# Record fields that hold links, by normalised field name.
LINK_FIELDS = (
    "github",
    "githuburl",
    "githublink",
    "code",
    "codeurl",
    "codelink",
    "repository",
    "repositoryurl",
    "repo",
    "repourl",
    "sourcecode",
    "project",
    "projectpage",
    "projecturl",
    "homepage",
    "website",
    "webpage",
    "page",
    "pdf",
    "pdfurl",
    "pdflink",
    "arxiv",
    "arxivurl",
    "arxivlink",
    "openreview",
    "openreviewurl",
    "forum",
    "url",
    "link",
    "paperurl",
    "doiurl",
    "video",
    "videourl",
    "slides",
    "poster",
    "data",
    "dataset",
    "dataseturl",
)


@lru_cache(maxsize=1024)  # a file's field names repeat on every record
def field_key(name: str) -> str:
    """Normalise a field name so `Code URL`, `code_url` and `codeUrl` compare equal."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def record_from_mapping(
    data: Mapping[str, Any],
    *,
    source: str,
    position: int,
    venue: str | None,
    year: int | None,
    raw: str,
    source_id: str | None = None,
) -> RawRecord | Reject:
    """Build a RawRecord from a JSON object or CSV row, or a Reject saying what is wrong."""
    fields = {field_key(k): (k, v) for k, v in data.items() if isinstance(k, str)}
    used: set[str] = set()

    def take(names: tuple[str, ...]) -> Any:
        for name in names:
            if name in fields and _present(fields[name][1]):
                used.add(name)
                return fields[name][1]
        return None

    title = _text(take(TITLE_FIELDS))
    abstract = _text(take(ABSTRACT_FIELDS))
    if not title and not abstract:
        return Reject(source, position, "record has neither a title nor an abstract", raw)
    if abstract and len(abstract) > MAX_ABSTRACT_CHARS:
        return Reject(
            source,
            position,
            f"abstract is {len(abstract):,} characters; the limit is {MAX_ABSTRACT_CHARS:,}",
            raw[:10_000],
        )
    if title and len(title) > MAX_TITLE_CHARS:
        return Reject(
            source,
            position,
            f"title is {len(title):,} characters; the limit is {MAX_TITLE_CHARS:,}",
            raw[:10_000],
        )
    authors = split_names(take(AUTHOR_FIELDS))
    keywords = split_names(take(KEYWORD_FIELDS))
    status = _text(take(STATUS_FIELDS))
    record_id = _text(take(ID_FIELDS)) or source_id
    record_venue = _text(take(VENUE_FIELDS))
    record_year = parse_year(take(YEAR_FIELDS))
    links: list[tuple[str, str]] = []
    for key in LINK_FIELDS:
        if key in fields:
            name, value = fields[key]
            for url in _strings(value):
                links.append((name, url))
            used.add(key)
    if source_id and re.match(r"(?i)^(https?://|www\.)", source_id):
        links.append(("key", source_id))
    extra = {fields[k][0]: fields[k][1] for k in fields if k not in used}
    return RawRecord(
        source=source,
        position=position,
        venue=venue or _venue_name(record_venue),
        year=year if year is not None else record_year,
        title=title,
        abstract=abstract,
        authors=authors,
        keywords=keywords,
        links=tuple(links),
        status=status,
        source_id=record_id,
        extra=json.dumps(extra, ensure_ascii=False, default=str) if extra else None,
    )


def split_names(value: Any) -> tuple[str, ...]:
    """Authors or keywords from a list, or from one string joined by `;`, `,` or ` and `."""
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        items: list[str] = []
        for item in value:
            if isinstance(item, Mapping):
                item = (
                    item.get("name")
                    or item.get("fullname")
                    or " ".join(
                        str(item[k]) for k in ("given", "family", "first", "last") if item.get(k)
                    )
                )
            text = _text(item)
            if text:
                items.append(text)
        return tuple(dict.fromkeys(items))
    text = _text(value) or ""
    separator = ";" if ";" in text else ("|" if "|" in text else ",")
    parts = [p for chunk in text.split(separator) for p in re.split(r"\s+and\s+", chunk)]
    return tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))


def parse_year(value: Any) -> int | None:
    """A four-digit year from a number or any text that contains one."""
    if isinstance(value, int) and 1900 <= value <= 2100:
        return value
    match = re.search(r"\b(19|20)\d{2}\b", str(value)) if value is not None else None
    return int(match.group(0)) if match else None


def _venue_name(value: str | None) -> str | None:
    """The venue name without a year in it (`ICLR 2025` -> `ICLR`)."""
    if not value:
        return None
    name = re.sub(r"\b(19|20)\d{2}\b", "", value).strip(" -_,")
    return name or None


def _present(value: Any) -> bool:
    return value not in (None, "", [], {})


def _text(value: Any) -> str | None:
    """A stripped string, or None for empty values; lists are joined."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        value = " ".join(str(v) for v in value if v is not None)
    text = str(value).strip()
    return text or None


def _strings(value: Any) -> list[str]:
    """The URL strings in a link field (a string, a list, or a mapping of them)."""
    if isinstance(value, str):
        return [v for v in re.split(r"[\s,;]+", value.strip()) if v]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, Mapping):
        return [s for item in value.values() for s in _strings(item)]
    return []

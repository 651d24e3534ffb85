"""Mapping records with varying field names onto RawRecord; everything else is kept as JSON."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from etl.extract import json_io
from etl.extract.venues import parse_venue
from etl.models import RawRecord, Reject

MAX_ABSTRACT_CHARS = 100_000
MAX_TITLE_CHARS = 2_000
# Works one record may cite: far above any paper's reference list (the record-size and
# value limits bound a record's memory before this; this bounds the edges it writes).
MAX_REFERENCES = 20_000

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
    "site",
    "oa",
    "urlpaper",
    "supp",
    "supplementary",
)
# Fields that hold one link per author (`;`-joined, aligned with the authors), as OpenReview
# exports' `homepage` does: author links, never the paper's project page.
AUTHOR_LINK_FIELDS = ("homepage", "homepages", "authorhomepage", "authorhomepages", "authorurls")
# A field not otherwise mapped whose text holds one of these is searched for code links too.
CODE_HOST_HINTS = ("github.com", "gitlab.com", "bitbucket.org", "huggingface.co", "codeberg.org")


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
    venue_given: bool = False,
    year_given: bool = False,
) -> RawRecord | Reject:
    """Build a RawRecord from a JSON object or CSV row, or a Reject saying what is wrong.

    `venue` and `year` are the file's (from its header or name): the record's own beat them,
    unless the user gave them (`venue_given`, `year_given`).
    """
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
    authors = split_names(take(AUTHOR_FIELDS), unique=False)
    keywords = split_names(take(KEYWORD_FIELDS))
    status = _text(take(STATUS_FIELDS))
    record_id = _text(take(ID_FIELDS)) or source_id
    record_venue, venue_year, venue_rest = parse_venue(_text(take(VENUE_FIELDS)) or "")
    record_year = parse_year(take(YEAR_FIELDS)) or venue_year
    not_links: set[str] = set()
    author_links = _author_links(fields, used, not_links, len(authors))
    links: list[tuple[str, str]] = []
    for key in LINK_FIELDS:
        if key in fields and key not in used and key not in not_links:
            name, value = fields[key]
            for url in _strings(value):
                links.append((name, url))
            used.add(key)
    if source_id and re.match(r"(?i)^(https?://|www\.)", source_id):
        links.append(("key", source_id))
    extra = {fields[k][0]: fields[k][1] for k in fields if k not in used}
    mentions = tuple(
        (name, value)
        for name, value in extra.items()
        if isinstance(value, str) and any(hint in value.lower() for hint in CODE_HOST_HINTS)
    )
    return RawRecord(
        source=source,
        position=position,
        venue=venue if venue_given or not record_venue else record_venue,
        year=year if year_given or record_year is None else record_year,
        title=title,
        abstract=abstract,
        authors=authors,
        keywords=keywords,
        links=tuple(links),
        status=status or venue_rest,
        source_id=record_id,
        extra=json_io.dumps(extra) if extra else None,
        author_links=author_links,
        code_mentions=mentions,
    )


def _author_links(
    fields: dict[str, tuple[str, Any]], used: set[str], not_links: set[str], author_count: int
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per-author link fields whose values line up with the author slots (marked used).

    A `homepage` with one value per author is the authors'; one value for a paper of several
    authors is the paper's (left to the link fields); a `;`-joined list that does not line up
    with the authors is kept in `extra` only.
    """
    found = []
    for key in AUTHOR_LINK_FIELDS:
        if key not in fields:
            continue
        name, value = fields[key]
        if isinstance(value, list | tuple):
            values = tuple("" if v is None else str(v).strip() for v in value)
        elif isinstance(value, str):
            values = tuple(v.strip() for v in value.split(";"))
        else:
            continue
        if author_count and len(values) == author_count:
            found.append((name, values))
            used.add(key)
        elif len(values) > 1:
            not_links.add(key)
    return tuple(found)


def split_names(value: Any, *, unique: bool = True) -> tuple[str, ...]:
    """Authors or keywords from a list, or from one string joined by `;`, `,` or ` and `.

    Authors keep every slot (`unique=False`): a list naming someone twice stores them twice,
    so that stored author slots always equal those in the input.
    """
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
        return tuple(dict.fromkeys(items)) if unique else tuple(items)
    text = _text(value) or ""
    separator = ";" if ";" in text else ("|" if "|" in text else ",")
    chunks = text.split(separator)
    # `A, B and C` names three; in a `;`- or `|`-joined list, each part is one slot as written
    parts = chunks if separator != "," else [p for c in chunks for p in re.split(r"\s+and\s+", c)]
    names = [p.strip() for p in parts if p.strip()]
    return tuple(dict.fromkeys(names)) if unique else tuple(names)


def parse_year(value: Any) -> int | None:
    """A four-digit year from a number or any text that contains one."""
    if isinstance(value, int) and 1900 <= value <= 2100:
        return value
    match = re.search(r"\b(19|20)\d{2}\b", str(value)) if value is not None else None
    return int(match.group(0)) if match else None


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
    """The strings of a link field (a string, a list, or a mapping of them), whole: the
    transform finds the links in each (Markdown, several joined by `;`, spaces in a URL)."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, Mapping):
        return [s for item in value.values() for s in _strings(item)]
    return []

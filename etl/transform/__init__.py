"""Transform stage: pure functions from a raw record to a paper bundle (no I/O of any kind).

Public entry point: `transform(record, taxonomy)`.
"""

from __future__ import annotations

import json
from dataclasses import replace

from etl.models import Paper, PaperBundle, RawRecord
from etl.transform.acronyms import find_acronyms
from etl.transform.clean import clean_text, emphasized
from etl.transform.ids import content_hash, identify, ordered_external, source_keys
from etl.transform.links import collect_links, external_ids, make_link
from etl.transform.methods import find_methods
from etl.transform.topics import Taxonomy, load_taxonomy, topics_and_tasks

__all__ = ["Taxonomy", "load_taxonomy", "transform"]


def transform(record: RawRecord, taxonomy: Taxonomy) -> PaperBundle:
    """Clean a record's text and find its links, methods, acronyms, topics and tasks."""
    raw_abstract = record.abstract or ""
    abstract = clean_text(raw_abstract)
    title = clean_text(record.title) if record.title else None
    # each text read apart (the method finder reads the abstract's definitions again, cached)
    acronyms = find_acronyms(title or "", abstract)
    # the title is read as a title, not as the abstract's first sentence
    methods = find_methods(abstract, emphasized(raw_abstract), acronyms, title)
    texts = {"title": record.title or "", "abstract": raw_abstract}
    silent: list[str] = []
    links = collect_links(
        {k: v for k, v in texts.items() if v}, record.links, silent, record.code_mentions
    )
    topics, tasks = topics_and_tasks(abstract, taxonomy, title=title)
    external = ordered_external([*source_keys(record.ids), *external_ids(links, record.source_id)])
    pid, keys = identify(abstract, title, external, record.authors, record.year)
    paper = Paper(
        id=pid,
        venue=record.venue,
        year=record.year,
        title=title,
        abstract=abstract,
        abstract_raw=raw_abstract,
        status=record.status,
        keywords=record.keywords,
        extra=_with_silent_fields(record, silent),
        method_names=" ".join(dict.fromkeys(m.name for m in methods)),
        title_raw=record.title,
    )
    homepages = _author_homepages(record)
    # Venue, year and status are the sighting's, not the paper's content: a paper seen in
    # two lists is the same content however each list labels it.
    content = replace(paper, venue=None, year=None, status=None)
    return PaperBundle(
        paper=paper,
        source=record.source,
        position=record.position,
        authors=record.authors,
        links=links,
        methods=methods,
        acronyms=acronyms,
        topics=topics,
        tasks=tasks,
        content_hash=content_hash(
            (content, record.authors, homepages, links, methods, acronyms, topics, tasks)
            + ((record.listed,) if record.listed else ())
        ),
        keys=keys,
        author_homepages=homepages,
        listed=record.listed,
    )


def _with_silent_fields(record: RawRecord, silent: list[str]) -> str | None:
    """The record's `extra`, plus the link fields that gave no link (kept, never dropped)."""
    if not silent:
        return record.extra
    extra = json.loads(record.extra) if record.extra else {}
    for name in dict.fromkeys(silent):
        values = [value for field, value in record.links if field == name]
        extra[name] = values[0] if len(values) == 1 else values
    return json.dumps(extra, ensure_ascii=False)


def _author_homepages(record: RawRecord) -> tuple[str | None, ...]:
    """Each author slot's homepage (normalised), from per-author link fields; () if none."""
    if not record.author_links:
        return ()
    pages: list[str | None] = [None] * len(record.authors)
    for name, values in record.author_links:
        for slot, value in enumerate(values[: len(pages)]):
            if pages[slot] is None and value:
                link = make_link(value, name)
                pages[slot] = link.url if link else value
    return tuple(pages) if any(pages) else ()

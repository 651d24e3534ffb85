"""Transform stage: pure functions from raw records to paper bundles (no I/O of any kind).

Public entry points: `transform_records(records, taxonomy)` and `transform(record,
taxonomy)`, a batch of one. The work is in two phases: each record is read on its own
(cleaning, acronyms, methods, links, the rules' evidence for topics and tasks, its words as
ids), then the batch is finished together (the tagger's learned scores in one product for
the whole batch, then each paper's topics and tasks, ids and content hash). Nothing a paper
gets depends on the batch it came in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from etl.models import (
    Acronym,
    Link,
    MethodMention,
    Paper,
    PaperBundle,
    RawRecord,
    TaskHit,
    TopicHit,
)
from etl.transform.acronyms import find_acronyms
from etl.transform.clean import clean_text, emphasized
from etl.transform.ids import content_hash, identify, ordered_external, source_keys
from etl.transform.links import collect_links, external_ids, make_link
from etl.transform.methods import find_methods
from etl.transform.methods.established import demote_established
from etl.transform.references import reference_values
from etl.transform.topics import LabelReading, Taxonomy, label_batch, load_taxonomy, read_labels

__all__ = ["Taxonomy", "load_taxonomy", "transform", "transform_records"]


class Reading(NamedTuple):
    """What the first phase finds in one record: all but its topics, tasks, ids and hash."""

    record: RawRecord
    abstract: str
    title: str | None
    acronyms: tuple[Acronym, ...]
    methods: tuple[MethodMention, ...]
    links: tuple[Link, ...]
    silent: list[str]  # link fields that gave no link
    labels: LabelReading


def transform(record: RawRecord, taxonomy: Taxonomy) -> PaperBundle:
    """Clean a record's text and find its links, methods, acronyms, topics and tasks."""
    return transform_records([record], taxonomy)[0]


def transform_records(records: Sequence[RawRecord], taxonomy: Taxonomy) -> list[PaperBundle]:
    """`transform` of each record, the batch's shared work done once."""
    readings = [read_record(record, taxonomy) for record in records]
    labels = label_batch([reading.labels for reading in readings], taxonomy)
    return [
        finish(reading, topics, tasks)
        for reading, (topics, tasks) in zip(readings, labels, strict=True)
    ]


def read_record(record: RawRecord, taxonomy: Taxonomy) -> Reading:
    """The first phase: what one record says, read on its own."""
    raw_abstract = record.abstract or ""
    abstract = clean_text(raw_abstract)
    title = clean_text(record.title) if record.title else None
    # each text read apart (the method finder reads the abstract's definitions again, cached)
    acronyms = find_acronyms(title or "", abstract)
    # the title is read as a title, not as the abstract's first sentence
    # a name in use before the paper's year is the paper's mention, not its own
    methods = demote_established(
        find_methods(abstract, emphasized(raw_abstract), acronyms, title), record.year
    )
    texts = {"title": record.title or "", "abstract": raw_abstract}
    silent: list[str] = []
    links = collect_links(
        {k: v for k, v in texts.items() if v}, record.links, silent, record.code_mentions
    )
    labels = read_labels(abstract, taxonomy, title)
    return Reading(record, abstract, title, acronyms, methods, links, silent, labels)


def finish(
    reading: Reading, topics: tuple[TopicHit, ...], tasks: tuple[TaskHit, ...]
) -> PaperBundle:
    """The second phase for one paper, once its topics and tasks are known: ids and hash."""
    record, abstract, title, acronyms, methods, links, silent, _ = reading
    raw_abstract = record.abstract or ""
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
    references = reference_values(record.references, keys)
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
            # only where given, so the hashes of records without them stay as they were
            + ((references, record.cited_by_count) if references or record.cited_by_count else ())
        ),
        keys=keys,
        author_homepages=homepages,
        listed=record.listed,
        references=references,
        cited_by_count=record.cited_by_count,
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

"""Transform stage: pure functions from a raw record to a paper bundle (no I/O of any kind).

Public entry point: `transform(record, taxonomy)`.
"""

from __future__ import annotations

from etl.models import Paper, PaperBundle, RawRecord
from etl.transform.acronyms import find_acronyms
from etl.transform.clean import clean_text, emphasized
from etl.transform.ids import content_hash, paper_id
from etl.transform.links import collect_links
from etl.transform.methods import find_methods
from etl.transform.topics import Taxonomy, assign_topics, load_taxonomy

__all__ = ["Taxonomy", "load_taxonomy", "transform"]


def transform(record: RawRecord, taxonomy: Taxonomy) -> PaperBundle:
    """Clean a record's text and find its links, methods, acronyms and topics."""
    raw_abstract = record.abstract or ""
    abstract = clean_text(raw_abstract)
    title = clean_text(record.title) if record.title else None
    full_text = f"{title}. {abstract}" if title else abstract
    # each text read apart (the method finder reads the abstract's definitions again, cached)
    acronyms = find_acronyms(title or "", abstract)
    # the title is read as a title, not as the abstract's first sentence
    methods = find_methods(abstract, emphasized(raw_abstract), acronyms, title)
    texts = {"title": record.title or "", "abstract": raw_abstract}
    links = collect_links({k: v for k, v in texts.items() if v}, record.links)
    topics = assign_topics(full_text, taxonomy)
    paper = Paper(
        id=paper_id(abstract, title),
        venue=record.venue,
        year=record.year,
        title=title,
        abstract=abstract,
        abstract_raw=raw_abstract,
        status=record.status,
        keywords=record.keywords,
        extra=record.extra,
        method_names=" ".join(dict.fromkeys(m.name for m in methods)),
    )
    return PaperBundle(
        paper=paper,
        source=record.source,
        position=record.position,
        authors=record.authors,
        links=links,
        methods=methods,
        acronyms=acronyms,
        topics=topics,
        content_hash=content_hash((paper, record.authors, links, methods, acronyms, topics)),
    )

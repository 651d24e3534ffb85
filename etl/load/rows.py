"""A transformed paper as plain values: what the writer needs, in the order it writes them.

Worker processes send their results to the loading process through pickle. Frozen dataclasses
cost about 100 µs per paper to unpickle there, on the one process every batch goes through;
a named tuple of plain tuples and strings costs under 10 µs. So each bundle is flattened where
it was made (`paper_rows`, pure, run in the worker) and the writer reads these rows directly.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from etl.models import PaperBundle

# (url, host, kind, repo_owner, repo_name, found_in)
LinkValues = tuple[str, str, str, str | None, str | None, str]
# (name, kind, role, surface, aliases, keys)
MethodValues = tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]]
# (slug, score, evidence as "a, b")
TopicValues = tuple[str, float, str]

# The columns of `papers` that a paper's content decides, in the order of `PaperRows`.
PAPER_COLUMNS = (
    "id",
    "venue",
    "year",
    "title",
    "abstract",
    "abstract_raw",
    "status",
    "keywords",
    "extra",
    "method_names",
    "content_hash",
)


class PaperRows(NamedTuple):
    """One paper's values for `papers` (the first eleven fields) and for its child tables."""

    id: str
    venue: str | None
    year: int | None
    title: str | None
    abstract: str
    abstract_raw: str
    status: str | None
    keywords: str | None  # JSON array
    extra: str | None
    method_names: str
    content_hash: str
    position: int
    authors: tuple[str, ...]
    links: tuple[LinkValues, ...]
    methods: tuple[MethodValues, ...]
    acronyms: tuple[tuple[str, str], ...]
    topics: tuple[TopicValues, ...]

    def paper_values(self) -> tuple[object, ...]:
        """The values of PAPER_COLUMNS."""
        return self[: len(PAPER_COLUMNS)]


def paper_rows(bundle: PaperBundle) -> PaperRows:
    """Flatten a bundle into plain values (pure: runs in the worker that made the bundle)."""
    paper = bundle.paper
    keywords = json.dumps(list(paper.keywords), ensure_ascii=False) if paper.keywords else None
    return PaperRows(
        paper.id,
        paper.venue,
        paper.year,
        paper.title,
        paper.abstract,
        paper.abstract_raw,
        paper.status,
        keywords,
        paper.extra,
        paper.method_names,
        bundle.content_hash,
        bundle.position,
        bundle.authors,
        tuple(
            (link.url, link.host, link.kind, link.repo_owner, link.repo_name, link.found_in)
            for link in bundle.links
        ),
        tuple((m.name, m.kind, m.role, m.surface, m.aliases, m.keys) for m in bundle.methods),
        tuple((a.acronym, a.expansion) for a in bundle.acronyms),
        tuple((t.slug, t.score, ", ".join(t.evidence)) for t in bundle.topics),
    )

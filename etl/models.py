"""Typed records the stages hand to each other (frozen, so a stage cannot alter another's data)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import NamedTuple

# The kinds of change event a load records (`change_events.kind`); a run that is a first load or
# a full refresh records itself as one event of its own kind instead of one per paper.
QUIET_CHANGE_KINDS = ("first_load", "full_refresh")
CHANGE_KINDS = (
    "paper_added",
    "paper_removed",
    "paper_changed",
    "sighting_added",
    "sighting_removed",
    "link_added",
    "link_removed",
    *QUIET_CHANGE_KINDS,
)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One input file, identified and fingerprinted before it is parsed."""

    path: str
    format: str  # its shape: "text", "json", "jsonl", "csv", "arxiv" ... (etl.extract.shapes)
    checksum: str
    size: int
    mtime_ns: int
    encoding: str
    venue: str | None
    year: int | None
    # Whether venue and year were given by the user (`--venue`, `--year`): they then beat the
    # record's own; guessed from a header or file name, the record's own beat them.
    venue_given: bool = False
    year_given: bool = False


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One paper as the extractor read it: fields mapped to known names, the rest kept."""

    source: str
    position: int  # 1-based line number (text, JSON Lines, CSV) or record number (JSON)
    venue: str | None
    year: int | None
    title: str | None = None
    abstract: str | None = None
    authors: tuple[str, ...] = ()  # one per author slot, in order, repeats kept
    keywords: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # (field name, URL as written)
    # Per-author link fields (`homepage` joined by `;`, aligned with the authors): the field
    # name and one value per author slot ("" where an author has none).
    author_links: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Other fields (kept in `extra` too) whose text names a code host: searched for
    # repositories only (`bibtex` with a `note = {code: github.com/...}`).
    code_mentions: tuple[tuple[str, str], ...] = ()
    status: str | None = None
    source_id: str | None = None
    extra: str | None = None  # JSON text of fields the extractor does not understand
    # Ids the source gives for the paper, as (kind, value as written): kinds `doi`, `arxiv`,
    # `openreview`, `s2`, `s2corpus`, `openalex`, `dblp`, `pwc` (see etl.transform.ids).
    ids: tuple[tuple[str, str], ...] = ()
    # Tasks and methods the source itself lists for the paper (the Papers with Code
    # archive): (kind `task` or `method`, name, JSON of what else it says, or None).
    listed: tuple[tuple[str, str, str | None], ...] = ()
    # The works the paper cites, as (kind, value as written): an id kind as in `ids`, or
    # `text` for a reference the source gives only as text (etl.transform.references).
    references: tuple[tuple[str, str], ...] = ()
    cited_by_count: int | None = None  # how many works cite it, as the source counts them


@dataclass(frozen=True, slots=True)
class Reject:
    """A record that could not become a paper, with the reason and its raw text."""

    source: str
    position: int
    reason: str
    raw: str


@dataclass(frozen=True, slots=True)
class Link:
    """A normalised URL, classified, with where it was found."""

    url: str
    host: str
    kind: str  # code, project, paper, data, other
    found_in: str  # "abstract", "title" or the record field name
    repo_owner: str | None = None
    repo_name: str | None = None


@dataclass(frozen=True, slots=True)
class MethodMention:
    """A named artifact in a paper: what it is called, what kind, and whether the paper made it."""

    name: str
    kind: str
    role: str  # "introduced" or "mentioned"
    surface: str  # the form as written
    aliases: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()  # normalised name and aliases: spellings that merge into one method


@dataclass(frozen=True, slots=True)
class Acronym:
    """An acronym defined in a paper's text."""

    acronym: str
    expansion: str


@dataclass(frozen=True, slots=True)
class TopicHit:
    """A topic assigned to a paper, with the score and the terms that matched."""

    slug: str
    score: float
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Topic:
    """A node of the taxonomy."""

    slug: str
    name: str
    parent: str | None
    terms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Task:
    """A task papers address (image captioning, named entity recognition), under a topic."""

    name: str
    topic: str
    terms: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()  # benchmarks that are its standard test


@dataclass(frozen=True, slots=True)
class TaskHit:
    """A task a paper addresses, with the score and the terms that matched."""

    name: str
    score: float
    evidence: tuple[str, ...]


# (the cited work's key: an identity key, or `ref:` and a hash of its text; the text where
# the reference gives no usable id, else None)
ReferenceValues = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class Paper:
    """The paper row: cleaned and original text plus the fields kept from the source."""

    id: str
    venue: str | None
    year: int | None
    title: str | None
    abstract: str
    abstract_raw: str
    status: str | None
    keywords: tuple[str, ...]
    extra: str | None
    method_names: str
    title_raw: str | None = None


@dataclass(frozen=True, slots=True)
class PaperBundle:
    """A paper and everything the transform found in it, ready to load."""

    paper: Paper
    source: str
    position: int
    authors: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    methods: tuple[MethodMention, ...] = ()
    acronyms: tuple[Acronym, ...] = ()
    topics: tuple[TopicHit, ...] = ()
    tasks: tuple[TaskHit, ...] = ()
    content_hash: str = ""
    keys: tuple[str, ...] = ()  # identity keys (see etl.transform.ids.identity_keys)
    author_homepages: tuple[str | None, ...] = ()  # aligned with authors
    listed: tuple[tuple[str, str, str | None], ...] = ()  # as RawRecord.listed
    references: tuple[ReferenceValues, ...] = ()  # the cited works (etl.transform.references)
    cited_by_count: int | None = None  # as RawRecord.cited_by_count


# (url, host, kind, repo_owner, repo_name, found_in)
LinkValues = tuple[str, str, str, str | None, str | None, str]
# (name, kind, role, surface, aliases, keys)
MethodValues = tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]]
# (slug, score, evidence as "a, b")
TopicValues = tuple[str, float, str]
# (task name, score, evidence as "a, b")
TaskValues = tuple[str, float, str]


# PaperRows fields a sighting stores as columns of its own rather than in its record's JSON.
SIGHTING_COLUMNS = ("venue", "year", "status", "content_hash", "position")


class PaperRows(NamedTuple):
    """A bundle as plain values: the paper's columns (named as in `papers`), then its children.

    Transform workers send their results to the loading process through pickle, and the one
    process every batch goes through pays for unpickling them. A named tuple of plain tuples
    and strings is the cheapest shape to pickle: several times cheaper than the bundle's frozen
    dataclasses, and cheaper than a slotted dataclass or nested named tuples
    (benchmarks/bench_rows.py; figures in benchmarks/HISTORY.md). So workers flatten each
    bundle (`from_bundle`) and the writer reads these rows directly, unpacking the children's
    plain tuples into named variables.
    """

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
    title_raw: str | None
    content_hash: str
    position: int
    authors: tuple[str, ...]
    links: tuple[LinkValues, ...]
    methods: tuple[MethodValues, ...]
    acronyms: tuple[tuple[str, str], ...]
    topics: tuple[TopicValues, ...]
    tasks: tuple[TaskValues, ...] = ()
    keys: tuple[str, ...] = ()
    author_homepages: tuple[str | None, ...] = ()
    listed: tuple[tuple[str, str, str | None], ...] = ()  # what the source lists (RawRecord)
    references: tuple[ReferenceValues, ...] = ()  # the works it cites (etl.load.citations)
    cited_by_count: int | None = None  # how many cite it, as the source counts them

    def record_json(self) -> str:
        """The record's own values as stored with its sighting (`paper_sources.record`):
        everything but its venue, year, status, content hash and position, which are columns
        of their own, and its references and citation count (`citations` rows and
        `paper_sources.cited_by_count`: kept once)."""
        values = self._asdict()
        for name in (*SIGHTING_COLUMNS, "references", "cited_by_count"):
            del values[name]
        return json.dumps(values, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_record_json(
        cls,
        text: str,
        venue: str | None,
        year: int | None,
        status: str | None,
        content_hash: str,
        position: int,
    ) -> PaperRows:
        """A sighting's record as the writer stored it (`record_json`)."""
        v = json.loads(text)
        return cls(
            v["id"],
            venue,
            year,
            v["title"],
            v["abstract"],
            v["abstract_raw"],
            status,
            v["keywords"],
            v["extra"],
            v["method_names"],
            v["title_raw"],
            content_hash,
            position,
            tuple(v["authors"]),
            tuple(tuple(link) for link in v["links"]),
            tuple(
                (name, kind, role, surface, tuple(aliases), tuple(keys))
                for name, kind, role, surface, aliases, keys in v["methods"]
            ),
            tuple((acronym, expansion) for acronym, expansion in v["acronyms"]),
            tuple((slug, score, evidence) for slug, score, evidence in v["topics"]),
            tuple((name, score, evidence) for name, score, evidence in v["tasks"]),
            tuple(v["keys"]),
            tuple(v["author_homepages"]),
            tuple((kind, name, detail) for kind, name, detail in v["listed"]),
        )

    @property
    def sighting(self) -> tuple[str | None, int | None, str | None]:
        """Venue, year and status as this record gives them: facts of the sighting."""
        return (self.venue, self.year, self.status)

    @classmethod
    def from_bundle(cls, bundle: PaperBundle) -> PaperRows:
        """Flatten a bundle into plain values."""
        paper = bundle.paper
        keywords = json.dumps(list(paper.keywords), ensure_ascii=False) if paper.keywords else None
        return cls(
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
            paper.title_raw,
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
            tuple((t.name, t.score, ", ".join(t.evidence)) for t in bundle.tasks),
            bundle.keys,
            bundle.author_homepages,
            bundle.listed,
            bundle.references,
            bundle.cited_by_count,
        )


@dataclass(frozen=True, slots=True)
class SourceReport:
    """What happened to one source in a run."""

    path: str
    format: str
    status: str  # "loaded", "unchanged" (skipped), "failed", "ignored", "pruned"
    records: int = 0
    rejects: int = 0
    message: str | None = None
    moved_from: str | None = None  # the gone source this file is, moved (and maybe edited)


@dataclass(frozen=True, slots=True)
class RunReport:
    """The result of `etl run`, printed by the CLI and stored in `runs`."""

    run_id: int
    status: str
    sources: tuple[SourceReport, ...]
    papers_inserted: int
    papers_updated: int
    papers_unchanged: int
    papers_removed: int
    links: int
    methods: int
    rejects: int
    seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)
    database: str = ""

    @property
    def sources_loaded(self) -> int:
        """Sources read and written in this run."""
        return sum(1 for s in self.sources if s.status == "loaded")

    @property
    def sources_skipped(self) -> int:
        """Sources skipped because their checksum had not changed."""
        return sum(1 for s in self.sources if s.status == "unchanged")

    @property
    def sources_failed(self) -> int:
        """Sources that could not be read at all."""
        return sum(1 for s in self.sources if s.status == "failed")

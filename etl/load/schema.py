"""The one schema definition: SQLAlchemy Core tables, Alembic's target metadata.

Search structures that differ by dialect (an FTS5 table on SQLite, a `tsvector` column with a
GIN index on PostgreSQL) are created by migration 0001 (its own copy of `sql/*/search.sql`)
and are not part of this metadata; `SEARCH_OBJECTS` names them so Alembic's comparison
leaves them alone.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
)

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
SEARCH_OBJECTS = frozenset({"papers_fts", "search_vector", "ix_papers_search_vector"})

metadata = MetaData(naming_convention=NAMING_CONVENTION)


def include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Alembic filter: leave the dialect-specific search objects (made from sql/) alone."""
    return name not in SEARCH_OBJECTS and not (name or "").startswith("papers_fts")


# An integer surrogate key: INTEGER PRIMARY KEY (the rowid) on SQLite, BIGINT identity elsewhere.
SurrogateKey = BigInteger().with_variant(Integer(), "sqlite")


def _key() -> Column[int]:
    return Column("id", SurrogateKey, primary_key=True, autoincrement=True)


def _paper_ref() -> Column[int]:
    """The paper a row belongs to, by its row number: part of the row's key, deleted with the
    paper. `papers.pk` grows with every insert, so a load appends to the child tables' keys
    instead of writing all over them (as random content-hash ids would)."""
    return Column(
        "paper_pk",
        SurrogateKey,
        ForeignKey("papers.pk", ondelete="CASCADE"),
        nullable=False,
        primary_key=True,
        comment="the paper (papers.pk)",
    )


runs = Table(
    "runs",
    metadata,
    _key(),
    Column("started_at", DateTime, nullable=False),
    Column("finished_at", DateTime),
    Column(
        "status", Text, nullable=False, comment="running, succeeded, partial, failed, interrupted"
    ),
    Column("sources_loaded", Integer, nullable=False, default=0),
    Column("sources_skipped", Integer, nullable=False, default=0),
    Column("sources_failed", Integer, nullable=False, default=0),
    Column("papers_inserted", Integer, nullable=False, default=0),
    Column("papers_updated", Integer, nullable=False, default=0),
    Column("papers_unchanged", Integer, nullable=False, default=0),
    Column("papers_removed", Integer, nullable=False, default=0),
    Column("links", Integer, nullable=False, default=0),
    Column("methods", Integer, nullable=False, default=0),
    Column("rejects", Integer, nullable=False, default=0),
    Column("seconds", Float),
    Column("stage_seconds", Text, comment="JSON object: seconds per stage"),
    Column("options", Text, comment="JSON object: the options the run was given"),
    Column("message", Text),
    comment="One row per `etl run`.",
)

sources = Table(
    "sources",
    metadata,
    _key(),
    Column("path", Text, nullable=False, unique=True),
    Column("checksum", Text, nullable=False, comment="SHA-256 of the file's bytes"),
    Column("fingerprint", Text, nullable=False, comment="transform version and taxonomy hash"),
    Column("format", Text, nullable=False),
    Column("venue", Text),
    Column("year", Integer),
    Column("size_bytes", BigInteger, nullable=False),
    Column(
        "mtime_ns",
        BigInteger,
        comment="modification time when last read; unchanged size and time skip hashing",
    ),
    Column("record_count", Integer, nullable=False),
    Column("reject_count", Integer, nullable=False, default=0),
    Column("loaded_at", DateTime, nullable=False),
    Column("run_id", ForeignKey("runs.id"), nullable=False),
    comment="Each input file loaded.",
)

papers = Table(
    "papers",
    metadata,
    Column(
        "pk",
        SurrogateKey,
        primary_key=True,
        autoincrement=True,
        comment="internal row number (the full-text index's rowid)",
    ),
    Column("id", Text, nullable=False, unique=True, comment="stable id from the paper's content"),
    Column("venue", Text),
    Column("year", Integer),
    Column("title", Text),
    Column("abstract", Text, nullable=False, comment="abstract without markup"),
    Column("abstract_raw", Text, nullable=False, comment="abstract as written in the source"),
    Column("status", Text, comment="status or track from the source"),
    Column("keywords", Text, comment="JSON array"),
    Column("extra", Text, comment="JSON object of source fields the extractor does not map"),
    Column("method_names", Text, comment="names of the paper's methods, for search"),
    Column("content_hash", Text, nullable=False),
    Column("created_run_id", ForeignKey("runs.id"), nullable=False),
    Column("title_raw", Text, comment="title as written in the source"),
    Column("updated_run_id", ForeignKey("runs.id"), nullable=False),
    Index(None, "venue", "year"),
    comment="One row per distinct paper.",
)

paper_sources = Table(
    "paper_sources",
    metadata,
    _paper_ref(),
    Column("source_id", ForeignKey("sources.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "position",
        Integer,
        primary_key=True,
        comment="line (text, JSON Lines, CSV) or record number",
    ),
    Column(
        "run_id", ForeignKey("runs.id"), nullable=False, comment="the last run that saw it there"
    ),
    Column("venue", Text, comment="venue as this source gives it (canonical name)"),
    Column("year", Integer, comment="year as this source gives it"),
    Column("status", Text, comment="status or track as this source gives it"),
    Column(
        "content_hash",
        Text,
        nullable=False,
        comment="hash of the record's content (everything but venue, year and status)",
    ),
    Column(
        "record",
        Text,
        nullable=False,
        comment="JSON object: the record's own values (title, abstract, authors, links, "
        "identity keys, what the transform found); the paper is derived from its sightings'",
    ),
    Column(
        "cited_by_count",
        Integer,
        comment="how many works cite the paper, as this source counts them (OpenAlex "
        "cited_by_count, Semantic Scholar citationCount); not the database's own count",
    ),
    Index(None, "source_id", "run_id"),
    Index(None, "source_id", "position"),
    comment="Where each paper was seen: each sighting with the values its source gave. A "
    "paper's values are derived from all its sightings (docs: identity and reruns).",
)

paper_keys = Table(
    "paper_keys",
    metadata,
    _paper_ref(),
    Column(
        "key",
        Text,
        primary_key=True,
        comment="doi:, arxiv:, openreview:, openalex:, s2:, s2corpus:, dblp:, pwc:, abs: "
        "(abstract hash), title: (title hash), bib: (title, first author's family name and "
        "initial, year), text:",
    ),
    Index(None, "key"),
    comment="What identifies each paper; records are matched to papers through these.",
)

citations = Table(
    "citations",
    metadata,
    Column("paper_pk", SurrogateKey, primary_key=True, comment="the citing paper (papers.pk)"),
    Column("source_id", Integer, primary_key=True, comment="the sighting's source (sources.id)"),
    Column("position", Integer, primary_key=True, comment="the sighting's place in its source"),
    Column(
        "cited_key",
        Text,
        primary_key=True,
        comment="the cited work: an identity key (doi:, arxiv:, openalex:, s2:, s2corpus:, "
        "dblp:), or ref: and a hash of its text where the reference gives no usable id",
    ),
    Column(
        "cited_paper_pk",
        SurrogateKey,
        ForeignKey("papers.pk", ondelete="SET NULL"),
        index=True,
        comment="the cited paper (papers.pk) when the database holds it, else null",
    ),
    Column("raw", Text, comment="the reference as written, where it gives no usable id"),
    ForeignKeyConstraint(
        ["paper_pk", "source_id", "position"],
        ["paper_sources.paper_pk", "paper_sources.source_id", "paper_sources.position"],
        ondelete="CASCADE",
        onupdate="CASCADE",
    ),
    Index(None, "cited_key"),
    comment="Who cites whom: one row per reference a sighting gives (so an edge leaves with "
    "its file, and any load order gives the same rows); the cited paper is filled in when "
    "a paper holding the cited key is loaded, in the same run or a later one.",
)

identity_locks = Table(
    "identity_locks",
    metadata,
    Column("key", BigInteger, primary_key=True, autoincrement=False, comment="hashed key"),
    comment="Rows loaders lock (PostgreSQL) to decide one paper identity at a time.",
)

authors = Table(
    "authors",
    metadata,
    _key(),
    Column("name", Text, nullable=False, unique=True),
)

paper_authors = Table(
    "paper_authors",
    metadata,
    _paper_ref(),
    Column("position", Integer, primary_key=True, comment="1 for the first author"),
    Column("author_id", ForeignKey("authors.id"), nullable=False, index=True),
    Column("homepage", Text, comment="the author's link as this paper's source gives it"),
)

methods = Table(
    "methods",
    metadata,
    _key(),
    Column(
        "key", Text, nullable=False, unique=True, comment="normalised name the aliases merge on"
    ),
    Column("name", Text, nullable=False, comment="canonical name"),
    Column("kind", Text, nullable=False, comment="method, model, benchmark, dataset, loss ..."),
    comment="Named methods, models, benchmarks and datasets, one row per artifact.",
)

method_aliases = Table(
    "method_aliases",
    metadata,
    Column("key", Text, primary_key=True, comment="normalised alias"),
    Column("alias", Text, nullable=False),
    Column("method_id", ForeignKey("methods.id", ondelete="CASCADE"), nullable=False, index=True),
)

paper_methods = Table(
    "paper_methods",
    metadata,
    _paper_ref(),
    Column(
        "key",
        Text,
        primary_key=True,
        comment="the mention's normalised name (one row per paper and mention)",
    ),
    Column("name", Text, nullable=False, comment="the mention's name, as spelled"),
    Column("method_id", ForeignKey("methods.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("role", Text, nullable=False, comment="introduced or mentioned"),
    Column("surface", Text, nullable=False, comment="the form as written"),
    Column("kind", Text, nullable=False, comment="the kind the transform gave this mention"),
    Column(
        "aliases",
        Text,
        nullable=False,
        comment="JSON array of [key, name] pairs: every name the mention gives the artifact, "
        "its own first; methods are the groups of mentions these names join",
    ),
    Column(
        "position",
        Integer,
        nullable=False,
        comment="1 for the paper's first mention, in the order the text gives them",
    ),
    comment="Named artifacts each paper introduces or mentions, one row per mention. Two "
    "mentions of a paper may name one method (paper_method_roles gives one row per method).",
)

acronyms = Table(
    "acronyms",
    metadata,
    _paper_ref(),
    Column("acronym", Text, primary_key=True),
    Column("expansion", Text, primary_key=True),
    Index(None, "acronym"),
)

topics = Table(
    "topics",
    metadata,
    Column("slug", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("parent_slug", ForeignKey("topics.slug"), comment="the area a topic belongs to"),
    Column("terms", Text, comment="JSON array of the terms that signal the topic"),
)

paper_topics = Table(
    "paper_topics",
    metadata,
    _paper_ref(),
    Column("topic_slug", ForeignKey("topics.slug"), primary_key=True, index=True),
    Column("score", Float, nullable=False),
    Column("evidence", Text, nullable=False, comment="the terms that matched, comma separated"),
)

tasks = Table(
    "tasks",
    metadata,
    Column("name", Text, primary_key=True),
    Column(
        "topic_slug",
        ForeignKey("topics.slug"),
        nullable=False,
        index=True,
        comment="the topic the task belongs to",
    ),
    Column("terms", Text, comment="JSON array of the other names that signal the task"),
    comment="Tasks papers address (the taxonomy's [[task]] tables), each under a topic.",
)

paper_tasks = Table(
    "paper_tasks",
    metadata,
    _paper_ref(),
    Column("task_name", ForeignKey("tasks.name"), primary_key=True, index=True),
    Column("score", Float, nullable=False),
    Column("evidence", Text, nullable=False, comment="the names that matched, comma separated"),
)

links = Table(
    "links",
    metadata,
    _key(),
    Column("url", Text, nullable=False, unique=True, comment="normalised URL"),
    Column("host", Text, nullable=False),
    Column("kind", Text, nullable=False, comment="code, project, paper, data or other"),
    Column("repo_owner", Text),
    Column("repo_name", Text),
)

paper_links = Table(
    "paper_links",
    metadata,
    _paper_ref(),
    Column("link_id", ForeignKey("links.id", ondelete="CASCADE"), primary_key=True, index=True),
    Column("found_in", Text, nullable=False, comment="abstract, title or the record field"),
)

listed_terms = Table(
    "listed_terms",
    metadata,
    _key(),
    Column("key", Text, nullable=False, unique=True, comment="kind and name: task:X, method:X"),
    Column("kind", Text, nullable=False, comment="task or method"),
    Column("name", Text, nullable=False, comment="the name as the source writes it"),
    Column("detail", Text, comment="JSON object: what else the source says of it (first seen)"),
    comment="Tasks and methods as a source lists them for its papers (the Papers with Code "
    "archive), apart from those the transform finds.",
)

paper_listed_terms = Table(
    "paper_listed_terms",
    metadata,
    _paper_ref(),
    Column("term_id", ForeignKey("listed_terms.id"), primary_key=True, index=True),
    Column("position", Integer, nullable=False, comment="1 for the first the source lists"),
)

rejects = Table(
    "rejects",
    metadata,
    _key(),
    Column("run_id", ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("source_path", Text, nullable=False),
    Column("position", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("raw", Text, nullable=False),
    comment="Records that could not be loaded, with the reason and their raw text.",
)

change_events = Table(
    "change_events",
    metadata,
    _key(),
    Column("run_id", ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    # No foreign key to papers: a removed paper's events stay, and read by its id and label.
    Column("paper_pk", SurrogateKey, comment="the paper's row number when the event was made"),
    Column("paper_id", Text, index=True, comment="the paper's stable id (papers.id)"),
    Column("label", Text, comment="the paper's title (else its abstract's opening) at the time"),
    Column("venue", Text, comment="the paper's venue at the time"),
    Column("year", Integer, comment="the paper's year at the time"),
    Column(
        "kind",
        Text,
        nullable=False,
        comment="paper_added, paper_removed, paper_changed, sighting_added, sighting_removed, "
        "link_added, link_removed, first_load, full_refresh",
    ),
    Column(
        "field",
        Text,
        comment="what changed: title, abstract, authors, venue, year, status, id; the link's "
        "kind (code, project); source (a sighting's)",
    ),
    Column("old_value", Text, comment="the value before (at most 1,000 characters, then '…')"),
    Column("new_value", Text, comment="the value after (at most 1,000 characters, then '…')"),
    Column("created_at", DateTime, nullable=False),
    comment="What each run changed: one row per paper added, removed or changed, sighting or "
    "link added or removed.",
)

# Tables whose rows hang off a paper and are rewritten when the paper changes.
PAPER_CHILDREN = (
    paper_authors,
    paper_links,
    paper_methods,
    acronyms,
    paper_topics,
    paper_tasks,
    paper_listed_terms,
)

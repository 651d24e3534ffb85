"""Sightings carry venue, year and status; papers are matched through identity keys

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

- `paper_sources` gains `venue`, `year` and `status`: they are facts of each sighting (a
  paper rejected at one venue and accepted at another). `papers.venue`, `year` and `status`
  become values derived from the sightings; existing sightings take their paper's values.
- `paper_keys` (paper_pk, key): what identifies each paper (external ids, the hash of a
  substantive abstract, of the title). Existing papers get the keys of their stored title and
  abstract, so records loaded again find the papers they made and keep their ids. The keys
  are computed by the transform's own `identity_keys`, so that they are the keys new records
  get: a later change of how keys are computed needs a migration of its own to rekey.
- `papers.title_raw`: the title as written; `paper_authors.homepage`: an author's link.
"""

import hashlib
import re
import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
BATCH = 5_000
PROVENANCE = "Where each paper was seen."
SIGHTINGS = "Where each paper was seen: each sighting with its venue, year and status."


# How the transform computed a record's identity keys (etl/transform/ids.py), frozen with this
# revision: only the parts a stored paper's title and abstract need (no external ids).
NOT_WORD_RE = re.compile(r"[\W_]")


def content_key(text: str) -> str:
    """Text reduced to what identifies it: NFKD, casefold, every `[\\W_]` character removed."""
    return NOT_WORD_RE.sub("", unicodedata.normalize("NFKD", text).casefold())


PLACEHOLDER_ABSTRACTS = frozenset(
    content_key(text)
    for text in (
        "Part of", "N/A", "NA", "None", "Null", "TBA", "TBD", "Abstract", "No abstract",
        "No abstract available", "Abstract not available", "Abstract unavailable",
        "Coming soon", "To be announced", "To appear",
    )
)
PLACEHOLDER_TITLES = PLACEHOLDER_ABSTRACTS | frozenset(
    content_key(text)
    for text in ("Withdrawn", "Withdrawn paper", "Untitled", "No title", "Deleted", "Removed")
)
MIN_ABSTRACT_WORDS = 20
MIN_ABSTRACT_KEY_CHARS = 100


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def identity_keys(abstract: str, title: str | None) -> tuple[str, ...]:
    """`abs:` for a substantive abstract, else `text:` when there is no title; `title:`
    unless the title is a placeholder."""
    abstract_key = content_key(abstract)
    title_key = content_key(title) if title else ""
    if title_key in PLACEHOLDER_TITLES:
        title_key = ""
    strong = bool(abstract_key) and abstract_key not in PLACEHOLDER_ABSTRACTS and (
        len(abstract_key) >= MIN_ABSTRACT_KEY_CHARS or len(abstract.split()) >= MIN_ABSTRACT_WORDS
    )
    keys = []
    if strong:
        keys.append("abs:" + _digest(abstract_key))
    elif abstract_key and not title_key:
        keys.append("text:" + _digest(abstract_key))
    if title_key:
        keys.append("title:" + _digest(title_key))
    return tuple(keys)


def upgrade() -> None:
    # venue_summary reads the new columns; made again at the head
    drop_views_reading("papers", "paper_sources", "paper_authors")
    op.add_column(
        "papers", sa.Column("title_raw", sa.Text(), comment="title as written in the source")
    )
    for column in (
        sa.Column("venue", sa.Text(), comment="venue as this source gives it (canonical name)"),
        sa.Column("year", sa.Integer(), comment="year as this source gives it"),
        sa.Column("status", sa.Text(), comment="status or track as this source gives it"),
    ):
        op.add_column("paper_sources", column)
    op.add_column(
        "paper_authors",
        sa.Column(
            "homepage", sa.Text(), comment="the author's link as this paper's source gives it"
        ),
    )
    op.create_table(
        "paper_keys",
        sa.Column("paper_pk", ID, nullable=False, comment="the paper (papers.pk)"),
        sa.Column(
            "key",
            sa.Text(),
            nullable=False,
            comment="doi:, arxiv:, openreview:, abs: (abstract hash), title: (title hash), text:",
        ),
        sa.ForeignKeyConstraint(
            ["paper_pk"],
            ["papers.pk"],
            name=op.f("fk_paper_keys_paper_pk_papers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paper_pk", "key", name=op.f("pk_paper_keys")),
        comment="What identifies each paper; records are matched to papers through these.",
    )
    op.create_index(op.f("ix_paper_keys_key"), "paper_keys", ["key"])
    if op.get_bind().dialect.name == "postgresql":
        op.create_table_comment("paper_sources", SIGHTINGS, existing_comment=PROVENANCE)
    op.execute(  # each existing sighting takes its paper's values
        "UPDATE paper_sources SET "
        + ", ".join(
            f"{column} = (SELECT p.{column} FROM papers p WHERE p.pk = paper_sources.paper_pk)"
            for column in ("venue", "year", "status")
        )
    )
    _backfill_keys()


def _backfill_keys() -> None:
    """Keys of every stored paper, from its title and clean abstract (in batches)."""
    connection = op.get_bind()
    papers = sa.table("papers", sa.column("pk"), sa.column("title"), sa.column("abstract"))
    keys = sa.table("paper_keys", sa.column("paper_pk"), sa.column("key"))
    last = -1
    while True:
        rows = connection.execute(
            sa.select(papers.c.pk, papers.c.title, papers.c.abstract)
            .where(papers.c.pk > last)
            .order_by(papers.c.pk)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        values = [
            {"paper_pk": pk, "key": key}
            for pk, title, abstract in rows
            for key in identity_keys(abstract or "", title)
        ]
        if values:
            connection.execute(keys.insert(), values)
        last = rows[-1][0]


def downgrade() -> None:
    drop_views_reading("papers", "paper_sources", "paper_authors", "paper_keys")
    op.drop_index(op.f("ix_paper_keys_key"), table_name="paper_keys")
    op.drop_table("paper_keys")
    # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+ and PostgreSQL): a batch rebuild of
    # `papers` on SQLite would drop the full-text index's triggers with the old table.
    for table, column in (
        ("paper_authors", "homepage"),
        ("paper_sources", "status"),
        ("paper_sources", "year"),
        ("paper_sources", "venue"),
        ("papers", "title_raw"),
    ):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    if op.get_bind().dialect.name == "postgresql":
        op.create_table_comment("paper_sources", PROVENANCE, existing_comment=SIGHTINGS)


def drop_views_reading(*tables: str) -> None:
    """Drop the views the database holds that read these tables, directly or through other
    views, as its catalog lists them (a copy frozen with this revision: never edit)."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        rows = bind.exec_driver_sql(
            "WITH RECURSIVE reading(oid) AS ("
            " SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid"
            " WHERE r.ev_class <> d.refobjid AND d.refobjid IN (SELECT c.oid FROM pg_class c"
            " WHERE c.relname = ANY(%s) AND c.relnamespace = to_regnamespace(current_schema()))"
            " UNION SELECT r.ev_class FROM reading JOIN pg_depend d ON d.refobjid = reading.oid"
            " JOIN pg_rewrite r ON r.oid = d.objid WHERE r.ev_class <> d.refobjid)"
            " SELECT DISTINCT c.relname FROM pg_class c JOIN reading ON reading.oid = c.oid"
            " WHERE c.relkind = 'v'",
            (list(tables),),
        ).all()
        for (name,) in rows:
            bind.exec_driver_sql(f'DROP VIEW IF EXISTS "{name}" CASCADE')
        return
    views = dict(bind.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'view'").all())
    read = set(tables)
    dropped: set[str] = set()
    while True:
        found = {
            name
            for name, sql in views.items()
            if name not in dropped
            and any(re.search(rf"\b{re.escape(table)}\b", sql or "", re.I) for table in read)
        }
        if not found:
            break
        dropped |= found
        read |= found
    for name in sorted(dropped):
        bind.exec_driver_sql(f'DROP VIEW IF EXISTS "{name}"')

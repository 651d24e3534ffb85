"""Who cites whom: `citations`, and the sources' own citation counts

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07

`citations` holds one row per reference a sighting gives: the citing paper, the sighting
(source and position), the cited work's identity key (or `ref:` and a hash of the reference's
text where it gives no usable id, with that text in `raw`) and the cited paper once the
database holds one with that key. Its rows hang off their sighting (deleted and moved with
it), so an edge leaves with its file.

`paper_sources.cited_by_count` keeps the count of citing works a source gives (OpenAlex
`cited_by_count`, Semantic Scholar `citationCount`), apart from the database's own count.

Sightings loaded before this revision have no edges: a reload of their file gives them (the
run's fingerprint changes with the transform's version).
"""

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column(
        "paper_sources",
        sa.Column(
            "cited_by_count",
            sa.Integer(),
            nullable=True,
            comment="how many works cite the paper, as this source counts them (OpenAlex "
            "cited_by_count, Semantic Scholar citationCount); not the database's own count",
        ),
    )
    op.create_table(
        "citations",
        sa.Column("paper_pk", ID, nullable=False, comment="the citing paper (papers.pk)"),
        sa.Column(
            "source_id", sa.Integer(), nullable=False, comment="the sighting's source (sources.id)"
        ),
        sa.Column(
            "position", sa.Integer(), nullable=False, comment="the sighting's place in its source"
        ),
        sa.Column(
            "cited_key",
            sa.Text(),
            nullable=False,
            comment="the cited work: an identity key (doi:, arxiv:, openalex:, s2:, s2corpus:, "
            "dblp:), or ref: and a hash of its text where the reference gives no usable id",
        ),
        sa.Column(
            "cited_paper_pk",
            ID,
            nullable=True,
            comment="the cited paper (papers.pk) when the database holds it, else null",
        ),
        sa.Column("raw", sa.Text(), comment="the reference as written, where it gives no usable id"),
        sa.ForeignKeyConstraint(
            ["paper_pk", "source_id", "position"],
            ["paper_sources.paper_pk", "paper_sources.source_id", "paper_sources.position"],
            name="fk_citations_paper_pk_paper_sources",
            ondelete="CASCADE",
            onupdate="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["cited_paper_pk"],
            ["papers.pk"],
            name="fk_citations_cited_paper_pk_papers",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint(
            "paper_pk", "source_id", "position", "cited_key", name="pk_citations"
        ),
        comment="Who cites whom: one row per reference a sighting gives (so an edge leaves with "
        "its file, and any load order gives the same rows); the cited paper is filled in when "
        "a paper holding the cited key is loaded, in the same run or a later one.",
    )
    op.create_index("ix_citations_cited_key", "citations", ["cited_key"])
    op.create_index("ix_citations_cited_paper_pk", "citations", ["cited_paper_pk"])


def downgrade() -> None:
    # the views over citations (and so over cited_by_count): the others stay as they were
    drop_views_reading("citations")
    op.drop_index("ix_citations_cited_paper_pk", "citations")
    op.drop_index("ix_citations_cited_key", "citations")
    op.drop_table("citations")
    # ALTER TABLE ... DROP COLUMN in place (SQLite 3.35 on): a batch copy of the table would
    # have to drop every view reading paper_sources first
    op.drop_column("paper_sources", "cited_by_count")


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
    views = dict(
        bind.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'view'").all()
    )
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

"""Tasks and methods a source lists for its papers: `listed_terms`, `paper_listed_terms`

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-10

The Papers with Code archive lists tasks and methods for each paper. They are stored as the
source says them, apart from the tasks and methods the transform finds (`paper_tasks`,
`paper_methods`). The views are dropped first (`paper_overview`, `method_index` and
`task_index` gain what the source lists); migrations/env.py creates them again at the head.
"""

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


KEYS_BEFORE = "doi:, arxiv:, openreview:, abs: (abstract hash), title: (title hash), text:"
KEYS_NOW = (
    "doi:, arxiv:, openreview:, openalex:, s2:, s2corpus:, dblp:, pwc:, abs: "
    "(abstract hash), title: (title hash), bib: (title, first author, year), text:"
)


def _comment_keys(comment: str) -> None:
    """The comment on `paper_keys.key` (SQLite keeps no comments)."""
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "paper_keys", "key", existing_type=sa.Text(), existing_nullable=False, comment=comment
        )


def upgrade() -> None:
    drop_views_reading("papers")
    _comment_keys(KEYS_NOW)
    op.create_table(
        "listed_terms",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("key", sa.Text(), nullable=False, comment="kind and name: task:X, method:X"),
        sa.Column("kind", sa.Text(), nullable=False, comment="task or method"),
        sa.Column("name", sa.Text(), nullable=False, comment="the name as the source writes it"),
        sa.Column(
            "detail",
            sa.Text(),
            nullable=True,
            comment="JSON object: what else the source says of it (first seen)",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_listed_terms")),
        sa.UniqueConstraint("key", name=op.f("uq_listed_terms_key")),
        comment="Tasks and methods as a source lists them for its papers (the Papers with Code "
        "archive), apart from those the transform finds.",
    )
    op.create_table(
        "paper_listed_terms",
        sa.Column("paper_pk", ID, nullable=False, comment="the paper (papers.pk)"),
        sa.Column("term_id", ID, nullable=False),
        sa.Column(
            "position", sa.Integer(), nullable=False, comment="1 for the first the source lists"
        ),
        sa.ForeignKeyConstraint(
            ["paper_pk"],
            ["papers.pk"],
            name=op.f("fk_paper_listed_terms_paper_pk_papers"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["term_id"], ["listed_terms.id"], name=op.f("fk_paper_listed_terms_term_id_listed_terms")
        ),
        sa.PrimaryKeyConstraint("paper_pk", "term_id", name=op.f("pk_paper_listed_terms")),
    )
    op.create_index(op.f("ix_paper_listed_terms_term_id"), "paper_listed_terms", ["term_id"])


def downgrade() -> None:
    drop_views_reading("papers", "listed_terms", "paper_listed_terms")
    _comment_keys(KEYS_BEFORE)
    op.drop_index(op.f("ix_paper_listed_terms_term_id"), table_name="paper_listed_terms")
    op.drop_table("paper_listed_terms")
    op.drop_table("listed_terms")


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

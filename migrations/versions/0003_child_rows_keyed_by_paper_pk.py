"""Rows that hang off a paper refer to it by `papers.pk` (an increasing integer), not `papers.id`

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

The child tables' keys began with the paper's content-hash id, so each new paper wrote into
random pages of six indexes; once those outgrew the page cache, a large load slowed down with
every row. Keyed by `paper_pk`, new rows append at the end. Each table is rebuilt with the
same columns and keys, `paper_id` becoming `paper_pk` (and back on downgrade). The views read
these tables, so they are dropped first; migrations/env.py creates them again at the head.

Downgrading to 0002 leaves the database without views: sql/views/ holds only the current
views, which read `paper_pk`. `alembic upgrade head` creates them again.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from alembic import op


revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


@dataclass(frozen=True)
class PaperKey:
    """How child rows name their paper: the column, its type and the `papers` column it holds."""

    column: str
    type: sa.types.TypeEngine[object]
    papers_column: str
    comment: str | None


BY_PK = PaperKey("paper_pk", ID, "pk", "the paper (papers.pk)")
BY_ID = PaperKey("paper_id", sa.Text(), "id", None)


@dataclass(frozen=True)
class ChildTable:
    """A table of rows that hang off a paper, as 0001 made it apart from the paper column."""

    name: str
    columns: tuple[tuple[str, sa.types.TypeEngine[object], str | None], ...]  # all NOT NULL
    key_rest: tuple[str, ...]  # the primary key's columns after the paper's
    references: tuple[tuple[str, str, str | None], ...]  # (column, "table.column", ondelete)
    indexes: tuple[tuple[str, ...], ...]
    comment: str | None = None

    def create(self, key: PaperKey) -> None:
        """Create the table with `key` as its paper column (first, and first in the key)."""
        paper_fk = (key.column, f"papers.{key.papers_column}", "CASCADE")
        op.create_table(
            self.name,
            sa.Column(key.column, key.type, nullable=False, comment=key.comment),
            *(
                sa.Column(name, type_, nullable=False, comment=comment)
                for name, type_, comment in self.columns
            ),
            *(
                sa.ForeignKeyConstraint(
                    [column],
                    [target],
                    name=op.f(f"fk_{self.name}_{column}_{target.split('.')[0]}"),
                    ondelete=ondelete,
                )
                for column, target, ondelete in (paper_fk, *self.references)
            ),
            sa.PrimaryKeyConstraint(key.column, *self.key_rest, name=op.f(f"pk_{self.name}")),
            comment=self.comment,
        )
        for columns in self.indexes:
            op.create_index(op.f(f"ix_{self.name}_{'_'.join(columns)}"), self.name, list(columns))

    def rekey(self, old: PaperKey, new: PaperKey) -> None:
        """Rebuild the table with `new` as its paper column, keeping every row."""
        others = ", ".join(name for name, _, _ in self.columns)
        copy = f"rekey_{self.name}"
        op.execute(
            f"CREATE TABLE {copy} AS SELECT p.{new.papers_column} AS {new.column}, {others} "
            f"FROM {self.name} AS c JOIN papers AS p ON p.{old.papers_column} = c.{old.column}"
        )
        op.drop_table(self.name)
        self.create(new)
        op.execute(
            f"INSERT INTO {self.name} ({new.column}, {others}) "
            f"SELECT {new.column}, {others} FROM {copy}"
        )
        op.drop_table(copy)


CHILD_TABLES = (
    ChildTable(
        "paper_sources",
        (
            ("source_id", ID, None),
            ("position", sa.Integer(), "line (text, JSON Lines, CSV) or record number"),
            ("run_id", ID, "the last run that saw it there"),
        ),
        key_rest=("source_id", "position"),
        references=(("run_id", "runs.id", None), ("source_id", "sources.id", "CASCADE")),
        indexes=(("source_id", "run_id"),),
        comment="Where each paper was seen.",
    ),
    ChildTable(
        "paper_authors",
        (
            ("position", sa.Integer(), "1 for the first author"),
            ("author_id", ID, None),
        ),
        key_rest=("position",),
        references=(("author_id", "authors.id", None),),
        indexes=(("author_id",),),
    ),
    ChildTable(
        "paper_methods",
        (
            ("method_id", ID, None),
            ("role", sa.Text(), "introduced or mentioned"),
            ("surface", sa.Text(), "the form as written"),
        ),
        key_rest=("method_id",),
        references=(("method_id", "methods.id", "CASCADE"),),
        indexes=(("method_id",),),
    ),
    ChildTable(
        "acronyms",
        (
            ("acronym", sa.Text(), None),
            ("expansion", sa.Text(), None),
        ),
        key_rest=("acronym", "expansion"),
        references=(),
        indexes=(("acronym",),),
    ),
    ChildTable(
        "paper_topics",
        (
            ("topic_slug", sa.Text(), None),
            ("score", sa.Float(), None),
            ("evidence", sa.Text(), "the terms that matched, comma separated"),
        ),
        key_rest=("topic_slug",),
        references=(("topic_slug", "topics.slug", None),),
        indexes=(("topic_slug",),),
    ),
    ChildTable(
        "paper_links",
        (
            ("link_id", ID, None),
            ("found_in", sa.Text(), "abstract, title or the record field"),
        ),
        key_rest=("link_id",),
        references=(("link_id", "links.id", "CASCADE"),),
        indexes=(("link_id",),),
    ),
)


def upgrade() -> None:
    drop_views_reading("papers", "paper_sources", "paper_authors", "paper_methods", "acronyms", "paper_topics", "paper_links")
    for table in CHILD_TABLES:
        table.rekey(BY_ID, BY_PK)


def downgrade() -> None:
    drop_views_reading("papers", "paper_sources", "paper_authors", "paper_methods", "acronyms", "paper_topics", "paper_links")
    for table in CHILD_TABLES:
        table.rekey(BY_PK, BY_ID)


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

"""Change events: what each run changed, one row per paper, sighting or link added, removed or
changed

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

The loader records them in the same transaction as the change. They hang off the run (deleted
with it) and not off the paper: a removed paper's events stay, readable by its id and label.
The new views that read this table are created at the head, as every view is; a downgrade
drops them first.
"""

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "change_events",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("run_id", ID, nullable=False),
        sa.Column(
            "paper_pk", ID, nullable=True, comment="the paper's row number when the event was made"
        ),
        sa.Column(
            "paper_id", sa.Text(), nullable=True, comment="the paper's stable id (papers.id)"
        ),
        sa.Column(
            "label",
            sa.Text(),
            nullable=True,
            comment="the paper's title (else its abstract's opening) at the time",
        ),
        sa.Column("venue", sa.Text(), nullable=True, comment="the paper's venue at the time"),
        sa.Column("year", sa.Integer(), nullable=True, comment="the paper's year at the time"),
        sa.Column(
            "kind",
            sa.Text(),
            nullable=False,
            comment="paper_added, paper_removed, paper_changed, sighting_added, "
            "sighting_removed, link_added, link_removed, first_load, full_refresh",
        ),
        sa.Column(
            "field",
            sa.Text(),
            nullable=True,
            comment="what changed: title, abstract, authors, venue, year, status; the link's "
            "kind (code, project); source (a sighting's)",
        ),
        sa.Column(
            "old_value",
            sa.Text(),
            nullable=True,
            comment="the value before (at most 1,000 characters, then '…')",
        ),
        sa.Column(
            "new_value",
            sa.Text(),
            nullable=True,
            comment="the value after (at most 1,000 characters, then '…')",
        ),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name=op.f("fk_change_events_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_change_events")),
        comment="What each run changed: one row per paper added, removed or changed, sighting "
        "or link added or removed.",
    )
    op.create_index(op.f("ix_change_events_run_id"), "change_events", ["run_id"])
    op.create_index(op.f("ix_change_events_paper_id"), "change_events", ["paper_id"])


def downgrade() -> None:
    drop_views_reading("change_events")
    op.drop_index(op.f("ix_change_events_paper_id"), table_name="change_events")
    op.drop_index(op.f("ix_change_events_run_id"), table_name="change_events")
    op.drop_table("change_events")


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

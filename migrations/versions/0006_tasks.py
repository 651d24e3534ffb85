"""Tasks papers address: `tasks` (each under a topic) and `paper_tasks` (with the evidence)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

The taxonomy's `[[task]]` tables fill `tasks` at each run, as its topics fill `topics`; the
transform's task hits fill `paper_tasks`. The views are dropped first (`paper_overview` gains a
`tasks` column and `task_index` is new); migrations/env.py creates them again at the head.
"""

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    drop_views_reading("papers")
    op.create_table(
        "tasks",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column(
            "topic_slug", sa.Text(), nullable=False, comment="the topic the task belongs to"
        ),
        sa.Column(
            "terms", sa.Text(), nullable=True, comment="JSON array of the other names that signal the task"
        ),
        sa.ForeignKeyConstraint(
            ["topic_slug"], ["topics.slug"], name=op.f("fk_tasks_topic_slug_topics")
        ),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_tasks")),
        comment="Tasks papers address (the taxonomy's [[task]] tables), each under a topic.",
    )
    op.create_index(op.f("ix_tasks_topic_slug"), "tasks", ["topic_slug"])
    op.create_table(
        "paper_tasks",
        sa.Column("paper_pk", ID, nullable=False, comment="the paper (papers.pk)"),
        sa.Column("task_name", sa.Text(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column(
            "evidence", sa.Text(), nullable=False, comment="the names that matched, comma separated"
        ),
        sa.ForeignKeyConstraint(
            ["paper_pk"], ["papers.pk"], name=op.f("fk_paper_tasks_paper_pk_papers"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["task_name"], ["tasks.name"], name=op.f("fk_paper_tasks_task_name_tasks")
        ),
        sa.PrimaryKeyConstraint("paper_pk", "task_name", name=op.f("pk_paper_tasks")),
    )
    op.create_index(op.f("ix_paper_tasks_task_name"), "paper_tasks", ["task_name"])


def downgrade() -> None:
    drop_views_reading("tasks", "paper_tasks")
    op.drop_index(op.f("ix_paper_tasks_task_name"), table_name="paper_tasks")
    op.drop_table("paper_tasks")
    op.drop_index(op.f("ix_tasks_topic_slug"), table_name="tasks")
    op.drop_table("tasks")


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

"""Tasks papers address: `tasks` (each under a topic) and `paper_tasks` (with the evidence)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

The taxonomy's `[[task]]` tables fill `tasks` at each run, as its topics fill `topics`; the
transform's task hits fill `paper_tasks`. The views are dropped first (`paper_overview` gains a
`tasks` column and `task_index` is new); migrations/env.py creates them again at the head.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from etl.load.database import drop_views

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    drop_views(op.get_bind())
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
    drop_views(op.get_bind())
    op.drop_index(op.f("ix_paper_tasks_task_name"), table_name="paper_tasks")
    op.drop_table("paper_tasks")
    op.drop_index(op.f("ix_tasks_topic_slug"), table_name="tasks")
    op.drop_table("tasks")

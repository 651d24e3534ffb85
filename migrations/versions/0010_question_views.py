"""Views for common questions: `venue_year_totals`, `papers_sharing_tasks`, `top_methods`

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02

No table changes. The three views are created from their files in sql/views/ once an upgrade
reaches the head revision, as every view is (migrations/env.py); a downgrade drops them by
name, since the revisions before this one have no such views.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW_VIEWS = ("venue_year_totals", "papers_sharing_tasks", "top_methods")


def upgrade() -> None:
    """Nothing to change in the tables: the head's views include the new ones."""


def downgrade() -> None:
    for name in NEW_VIEWS:
        op.execute(f'DROP VIEW IF EXISTS "{name}"')

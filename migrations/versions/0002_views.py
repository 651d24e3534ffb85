"""The packaged views of the contract, created from sql/views/*.sql

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

Views are replaceable objects: every migration that changes a view, or a table a view reads,
drops and recreates all of them from the current files with `recreate_views`.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from etl.load.database import drop_views, recreate_views

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    recreate_views(op.get_bind())


def downgrade() -> None:
    drop_views(op.get_bind())

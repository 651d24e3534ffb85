"""The packaged views of the contract, created from sql/views/*.sql

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

Views are repeatable objects: sql/views/ holds only their current version, which reads the
newest tables, so migrations/env.py creates them once an upgrade reaches the head revision.
Every migration that changes a table a view reads drops them first.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from etl.load.database import drop_views

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    drop_views(op.get_bind())  # created after the last migration (migrations/env.py)


def downgrade() -> None:
    drop_views(op.get_bind())

"""Identity locks: a row per hashed paper identity key, which concurrent loaders lock

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

Loaders on PostgreSQL lock these rows (SELECT ... FOR UPDATE) before they resolve a batch's
records against `paper_keys`, so that two of them never both create a paper for one identity.
Row locks rather than advisory locks: a source holds its keys until it commits, and tens of
thousands of advisory locks overflow the server's lock table (max_locks_per_transaction).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "identity_locks",
        sa.Column("key", sa.BigInteger(), autoincrement=False, nullable=False, comment="hashed key"),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_identity_locks")),
        comment="Rows loaders lock (PostgreSQL) to decide one paper identity at a time.",
    )


def downgrade() -> None:
    op.drop_table("identity_locks")

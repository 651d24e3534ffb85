"""The packaged views of the contract, created from sql/views/*.sql

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

Views are repeatable objects: sql/views/ holds only their current version, which reads the
newest tables, so migrations/env.py creates them once an upgrade reaches the head revision.
Every migration that changes a table a view reads drops them first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from alembic import op


revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    drop_views_reading("papers", "sources", "runs", "authors", "links", "methods", "method_aliases", "topics", "rejects", "paper_sources", "paper_authors", "paper_links", "paper_methods", "acronyms", "paper_topics")  # created after the last migration (migrations/env.py)


def downgrade() -> None:
    drop_views_reading("papers", "sources", "runs", "authors", "links", "methods", "method_aliases", "topics", "rejects", "paper_sources", "paper_authors", "paper_links", "paper_methods", "acronyms", "paper_topics")


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

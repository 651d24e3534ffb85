"""Maintenance after (or instead of) loading: orphaned lookup rows, the search index's
segments, the planner's statistics, a full refresh's clearing."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from sqlalchemy import Connection, delete, select, text, update

from etl.load import schema as s
from etl.load.backend import backend_of
from etl.load.database import sql_dir

# A table's statistics are taken again once more of its rows changed than this many plus
# this share of its size (autovacuum's default analyze threshold and scale factor).
ANALYZE_BASE = 50
ANALYZE_SCALE = 0.1
# Rows of each index SQLite's ANALYZE reads (PRAGMA analysis_limit): cost bounded by it,
# whatever the table's size, for estimates the planner finds good enough.
SQLITE_ANALYSIS_LIMIT = 1000
PAPER_TABLES = (s.papers, s.paper_sources, s.citations, s.paper_keys, *s.PAPER_CHILDREN)


def delete_orphans(connection: Connection) -> None:
    """Remove authors, links, methods and listed terms no paper refers to any more (after
    pointing every mention at the method its name is an alias of: a loader that recomputed a
    method while another was deleting its mentions left those to it, and that one may have
    rolled back)."""
    pm, ma = s.paper_methods.c, s.method_aliases.c
    aliased = select(ma.method_id).where(ma.key == pm.key).scalar_subquery()
    connection.execute(
        update(s.paper_methods).where(pm.method_id != aliased).values(method_id=aliased)
    )
    for table, child, column in (
        (s.authors, s.paper_authors, "author_id"),
        (s.links, s.paper_links, "link_id"),
        (s.methods, s.paper_methods, "method_id"),
        (s.listed_terms, s.paper_listed_terms, "term_id"),
    ):
        connection.execute(
            delete(table).where(~select(1).where(child.c[column] == table.c.id).exists())
        )


def optimize_search(connection: Connection) -> None:
    """Merge the full-text index's segments after a large load (where the backend has them)."""
    backend_of(connection).optimize_search(connection)


def refresh_statistics(connection: Connection, changed: int) -> list[str]:
    """Bring the planner's statistics up to date after a load that changed `changed` papers,
    so that reads get good plans whether or not autovacuum runs: the tables analysed. A run
    that changed no paper leaves them (the changes of others are theirs to analyse)."""
    if not changed:
        return []
    return _REFRESH[backend_of(connection).name](connection, changed)


def _refresh_postgresql(connection: Connection, changed: int) -> list[str]:
    """ANALYZE the tables with many rows changed since they were last analysed (by this run
    or others): nothing when little changed."""
    query = text(sql_dir().joinpath("postgresql", "stale_statistics.sql").read_text("utf-8"))
    stale = [
        str(name)
        for (name,) in connection.execute(
            query,
            {
                "tables": [t.name for t in s.metadata.sorted_tables],
                "paper_tables": [t.name for t in PAPER_TABLES],
                "changed": changed,
                "base": ANALYZE_BASE,
                "scale": ANALYZE_SCALE,
            },
        )
    ]
    if stale:
        connection.exec_driver_sql("ANALYZE " + ", ".join(f'"{name}"' for name in stale))
    return stale


def _refresh_sqlite(connection: Connection, changed: int) -> list[str]:
    """PRAGMA optimize, which analyses what needs it, reading a bounded sample of each index.
    Before SQLite 3.46 it looks only at tables its connection has queried, so there the
    bounded ANALYZE runs itself."""
    connection.exec_driver_sql(f"PRAGMA analysis_limit = {SQLITE_ANALYSIS_LIMIT}")
    if sqlite3.sqlite_version_info >= (3, 46):
        connection.exec_driver_sql("PRAGMA optimize = 0x10002")  # every table, not only used
        return []
    connection.exec_driver_sql("ANALYZE")
    return [t.name for t in s.metadata.sorted_tables]


_REFRESH: dict[str, Callable[[Connection, int], list[str]]] = {
    "postgresql": _refresh_postgresql,
    "sqlite": _refresh_sqlite,
}


def clear_data(connection: Connection) -> None:
    """Delete every paper and source (for --full-refresh); runs and rejects are history, kept."""
    tables = (s.citations, *s.PAPER_CHILDREN, s.paper_keys, s.paper_sources, s.papers, s.sources)
    for table in tables:
        connection.execute(delete(table))
    delete_orphans(connection)

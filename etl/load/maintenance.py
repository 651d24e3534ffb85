"""Maintenance after (or instead of) loading: orphaned lookup rows, the search index's
segments, a full refresh's clearing."""

from __future__ import annotations

from sqlalchemy import Connection, delete, select, update

from etl.load import schema as s
from etl.load.backend import backend_of


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


def clear_data(connection: Connection) -> None:
    """Delete every paper and source (for --full-refresh); runs and rejects are history, kept."""
    for table in (*s.PAPER_CHILDREN, s.paper_keys, s.paper_sources, s.papers, s.sources):
        connection.execute(delete(table))
    delete_orphans(connection)

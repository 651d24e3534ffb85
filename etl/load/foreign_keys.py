"""Checking foreign keys once at the end of a first load, not row by row (PostgreSQL).

PostgreSQL checks a foreign key with one trigger call per inserted row. A paper's child rows
(authors, methods, topics, links, acronyms, provenance) make about 25 such calls, about
100 µs of server time per paper (on 30,000 generated records: 3.3 s of the server's 13.4 s).
When a load starts with `papers` empty, the loader drops the keys that point at the tables it
fills, inside its transaction, and adds them back before it commits: adding a key checks every
row in one join (0.25 s for the same 30,000). A rollback, or a kill, restores them with
everything else, and a row that breaks a key fails the load as before, only at its end.

Dropping a key locks its tables until the commit, so readers wait for a first load instead
of seeing an empty database. SQLite checks keys in-process, cheaply; nothing changes there.
"""

from __future__ import annotations

from sqlalchemy import Connection, ForeignKeyConstraint, select
from sqlalchemy.schema import AddConstraint, DropConstraint

from etl.load import schema as s

FILLED_BY_A_LOAD = (s.papers, s.authors, s.links, s.methods)


def keys_into_filled_tables() -> list[ForeignKeyConstraint]:
    """The foreign keys that point at tables a load fills (not at runs, sources or topics,
    which other work reads and writes while a load runs)."""
    return [
        key
        for table in s.metadata.sorted_tables
        for key in sorted(table.foreign_key_constraints, key=lambda key: str(key.name))
        if key.referred_table in FILLED_BY_A_LOAD
    ]


class ForeignKeysCheckedAtEnd:
    """Drops the keys into filled tables for a first PostgreSQL load; `restore` adds them
    back, checking every row. Does nothing on SQLite or when `papers` holds rows."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.dropped: list[ForeignKeyConstraint] = []
        if connection.dialect.name == "postgresql" and _no_papers(connection):
            self.dropped = keys_into_filled_tables()
            for key in self.dropped:
                connection.execute(DropConstraint(key))

    def restore(self) -> None:
        """Add the dropped keys back (each checks all of its rows in one query)."""
        for key in self.dropped:
            self.connection.execute(AddConstraint(key))
        self.dropped = []


def _no_papers(connection: Connection) -> bool:
    return connection.execute(select(s.papers.c.pk).limit(1)).first() is None

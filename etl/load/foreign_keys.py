"""Checking foreign keys once at the end of a first load, not row by row (PostgreSQL).

PostgreSQL checks a foreign key with one trigger call per inserted row, and a paper's child
rows (authors, methods, topics, links, acronyms, provenance) make a couple of dozen such calls:
a large share of the server's time in a first load (benchmarks/HISTORY.md). When a load starts
with `papers` empty and no other loader running, the loader drops the keys that point at the
tables it fills, inside its transaction, and adds them back before it commits: adding a key
checks every row in one join, far cheaper than a trigger call per row. A rollback, or a kill,
restores them with everything else, and a row that breaks a key fails the load as before,
only at its end.

Dropping a key locks its tables until the commit, so readers (and other loaders) wait for a
first load instead of seeing an empty database. A reader already inside a transaction on
those tables holds the load back: after LOCK_WAIT_MS the load keeps the keys and checks them
row by row instead.
SQLite checks keys in-process, cheaply; nothing changes there.
"""

from __future__ import annotations

from sqlalchemy import Connection, ForeignKeyConstraint, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.schema import AddConstraint, DropConstraint

from etl.load import schema as s
from etl.load.backend import backend_of

FILLED_BY_A_LOAD = (s.papers, s.authors, s.links, s.methods)
LOCK_WAIT_MS = 2000  # how long dropping the keys may wait for readers' transactions
LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE when lock_timeout runs out


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
        backend = backend_of(connection)
        if (
            backend.keys_checked_at_end
            and _no_papers(connection)
            and not backend.other_loaders(connection)  # it would hold them all back
        ):
            self.dropped = _drop(connection, keys_into_filled_tables())

    def restore(self) -> None:
        """Add the dropped keys back (each checks all of its rows in one query)."""
        for key in self.dropped:
            self.connection.execute(AddConstraint(key))
        self.dropped = []


def _drop(connection: Connection, keys: list[ForeignKeyConstraint]) -> list[ForeignKeyConstraint]:
    """Drop the keys and return them; none (and nothing dropped) when a reader's transaction
    holds one of their tables for longer than LOCK_WAIT_MS."""
    try:
        with connection.begin_nested():  # a savepoint: a timed-out drop leaves the load usable
            connection.exec_driver_sql(f"SET LOCAL lock_timeout = {LOCK_WAIT_MS}")
            for key in keys:
                connection.execute(DropConstraint(key))
    except OperationalError as exc:
        if getattr(exc.orig, "sqlstate", None) != LOCK_NOT_AVAILABLE:
            raise
        return []
    finally:
        connection.exec_driver_sql("RESET lock_timeout")
    return keys


def _no_papers(connection: Connection) -> bool:
    return connection.execute(select(s.papers.c.pk).limit(1)).first() is None

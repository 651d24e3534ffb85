"""Keeping the full-text index in step with `papers` during bulk loads.

On SQLite the FTS5 table is maintained by triggers (sql/sqlite/search.sql), so any writer keeps
it right. For a bulk load, indexing new rows one trigger call at a time costs about twice a
set-based `INSERT ... SELECT`, so a load drops the insert trigger inside its transaction,
indexes its new rows in one statement, and creates the trigger again before commit, from the
definition the database held (what its migrations made), never from a file of today's code. The new
rows are indexed together when the source ends (one statement costs less than one a batch),
or earlier, before a paper is rewritten: the update trigger expects an indexed row.
A rollback (or a kill) restores the trigger with everything else. PostgreSQL needs nothing:
its `tsvector` column is generated from the row.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from etl.load.backend import backend_of

INSERT_TRIGGER = "papers_fts_insert"


def insert_trigger_sql(connection: Connection) -> str | None:
    """The CREATE TRIGGER statement for new papers as the database holds it (None if absent)."""
    query = text("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = :name")
    found = connection.execute(query, {"name": INSERT_TRIGGER}).scalar()
    return str(found) if found else None


class BulkSearchIndex:
    """Set-based indexing of newly inserted papers for the length of one transaction."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.active = backend_of(connection).search_triggers
        self.unindexed_above: int | None = None  # papers above this row number await indexing
        self.trigger = insert_trigger_sql(connection) if self.active else None
        if self.trigger is None:  # not SQLite, or a database without the trigger: keep it so
            self.active = False
        else:
            connection.execute(text(f"DROP TRIGGER IF EXISTS {INSERT_TRIGGER}"))

    def index_new(self, mark: int) -> None:
        """Index the papers inserted since `mark` (at the latest when `flush` is called)."""
        if self.active and self.unindexed_above is None:
            self.unindexed_above = mark

    def flush(self) -> None:
        """Index the papers awaiting it, in one statement (before any paper is rewritten)."""
        if self.unindexed_above is not None:
            self.connection.execute(
                text(
                    "INSERT INTO papers_fts(rowid, title, abstract, method_names) "
                    "SELECT pk, title, abstract, method_names FROM papers WHERE pk > :mark"
                ),
                {"mark": self.unindexed_above},
            )
            self.unindexed_above = None

    def close(self) -> None:
        """Put the insert trigger back, so every later writer keeps the index in step."""
        if self.active and self.trigger is not None:
            self.flush()
            self.connection.exec_driver_sql(self.trigger)
            self.active = False

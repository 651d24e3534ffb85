"""Keeping the full-text index in step with `papers` during bulk loads.

On SQLite the FTS5 table is maintained by triggers (sql/sqlite/search.sql), so any writer keeps
it right. For a bulk load, indexing new rows one trigger call at a time costs about twice a
set-based `INSERT ... SELECT`, so a load drops the insert trigger inside its transaction,
indexes its new rows in one statement, and creates the trigger again before commit. The new
rows are indexed together when the source ends (one statement costs less than one a batch),
or earlier, before a paper is rewritten: the update trigger expects an indexed row.
A rollback (or a kill) restores the trigger with everything else. PostgreSQL needs nothing:
its `tsvector` column is generated from the row.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from etl.load.database import split_statements, sql_dir

INSERT_TRIGGER = "papers_fts_insert"


def insert_trigger_sql() -> str:
    """The CREATE TRIGGER statement for new papers, as the migration created it."""
    statements = split_statements(sql_dir().joinpath("sqlite", "search.sql").read_text("utf-8"))
    return next(s for s in statements if f"TRIGGER {INSERT_TRIGGER}" in s)


class BulkSearchIndex:
    """Set-based indexing of newly inserted papers for the length of one transaction."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.active = connection.dialect.name == "sqlite"
        self.unindexed_above: int | None = None  # papers above this row number await indexing
        if self.active:
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
        if self.active:
            self.flush()
            self.connection.exec_driver_sql(insert_trigger_sql())
            self.active = False

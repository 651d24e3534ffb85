"""What differs between SQLite and PostgreSQL, in one object per dialect.

As Alembic keeps a `DefaultImpl` per dialect and dlt a destination's capabilities, the load
layer asks `backend_of(connection)` once and calls the object it gets; nothing else in the
load layer asks which database it writes. Each backend says what it can do (`concurrent`:
several loaders may write at once) and does, its own way: bulk inserts, upserts and lookups
(`executemany` and `json_each` on SQLite, `COPY` and arrays on PostgreSQL), the locks loaders
take (none on SQLite, whose run holds a lock file; advisory and row locks on PostgreSQL: see
etl.load.locks), and the tricks of a first load (the search index's trigger on SQLite, the
foreign keys and lz4 compression on PostgreSQL).

Table and column names in the SQL built here always come from the schema module, never from
input; values are always bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from sqlalchemy import Connection, Engine, Select, Table, text

from etl.load import locks

Row = Sequence[Any]  # values in the order of the statement's columns


class Backend:
    """The SQLite way: one writer at a time (the run's lock file), `executemany` inserts."""

    name: ClassVar[str] = "sqlite"
    # Whether other loaders may write the same database while a source loads.
    concurrent: ClassVar[bool] = False
    # Whether the full-text index is kept by triggers a bulk load may set aside
    # (etl.load.search_index); else it is computed from the row by the server.
    search_triggers: ClassVar[bool] = True
    # Whether a first load checks foreign keys once at its end (etl.load.foreign_keys).
    keys_checked_at_end: ClassVar[bool] = False
    # Whether a first load into an empty file writes with a rollback journal instead of the
    # write-ahead log (etl.load.database.first_load_journal).
    journal_for_first_load: ClassVar[bool] = True
    # Whether views carry their descriptions as comments, and logins can be read-only roles.
    comments: ClassVar[bool] = False
    roles: ClassVar[bool] = False

    # -- bulk rows --

    def select_rows(
        self, connection: Connection, key: Any, values: Sequence[Any], keys: Iterable[Any]
    ) -> dict[Any, tuple[Any, ...]]:
        """{key: (values...)} for the rows whose key is in `keys`, in one query (the keys
        bound as one JSON array, read by `json_each`)."""
        wanted = list(dict.fromkeys(keys))
        sql = (
            f"SELECT {_names((key, *values))} FROM {key.table.name} "
            f"WHERE {key.name} IN (SELECT value FROM json_each(?))"
        )
        rows = connection.exec_driver_sql(sql, (json.dumps(wanted),))
        return {row[0]: tuple(row[1:]) for row in rows}

    def insert_rows(
        self, connection: Connection, table: Table, columns: Sequence[str], rows: Sequence[Row]
    ) -> None:
        """Insert rows known to be new."""
        if rows:
            connection.exec_driver_sql(
                f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({_marks(columns)})",
                rows,
            )

    def upsert_rows(
        self,
        connection: Connection,
        table: Table,
        columns: Sequence[str],
        rows: Sequence[Row],
        *,
        conflict: Sequence[str] = (),
        update: Sequence[str] = (),
    ) -> None:
        """Insert rows; on a key conflict update the `update` columns, or skip the row."""
        if rows:
            connection.exec_driver_sql(
                f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({_marks(columns)}) "
                f"{_on_conflict(conflict, update)}",
                rows,
            )

    def insert_new_returning(
        self,
        connection: Connection,
        table: Table,
        columns: Sequence[str],
        rows: Sequence[Row],
        returning: Sequence[str],
    ) -> list[tuple[Any, ...]]:
        """Insert the rows whose key is not taken yet; the `returning` columns of those
        inserted, in the order given."""
        inserted: list[tuple[Any, ...]] = []
        sql = (
            f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({_marks(columns)}) "
            f"ON CONFLICT DO NOTHING RETURNING {', '.join(returning)}"
        )
        for row in rows:
            inserted.extend(tuple(found) for found in connection.exec_driver_sql(sql, tuple(row)))
        return inserted

    # -- locks between loaders (none: a SQLite run holds the database's lock file) --

    def hold_database(self, connection: Connection) -> None:
        """Hold the database-wide lock for this transaction (migrations, taxonomy sync)."""

    def claim_source(self, connection: Connection, path: str, *, wait: bool) -> bool:
        """Hold a source for this transaction; False if another loader holds it (no wait)."""
        return True

    def hold_identities(self, connection: Connection, keys: Iterable[str]) -> None:
        """Hold paper identity keys until this transaction ends."""

    def hold_papers(self, connection: Connection, pks: Iterable[int]) -> None:
        """Hold stored papers (by row number) until this transaction ends."""

    def hold_lookups(self, connection: Connection) -> None:
        """Hold the right to add lookup rows (authors, links, methods) until this transaction
        ends, so that loaders add them one at a time."""

    def lock_in_order(self, connection: Connection, query: Select[Any]) -> None:
        """Lock the rows a query selects, in its order, for an update."""

    def skipping_held(self, query: Select[Any], of: Table | None = None) -> Select[Any]:
        """The query, locking its rows (of the table `of`, else of all it reads) for an
        update and leaving out rows others hold."""
        return query

    def other_loaders(self, connection: Connection) -> int:
        """How many runs besides the caller's are loading."""
        return 0

    def run_lock(
        self, engine: Engine, *, wait: bool, exclusive: bool
    ) -> AbstractContextManager[locks.RunLock]:
        """Hold the database for a run: a lock file beside it, always exclusive."""
        return locks.file_run_lock(engine, wait=wait)

    def exclude_loaders(self, connection: Connection, lock: locks.RunLock) -> None:
        """Wait until no other loader runs, and keep them out until this transaction ends."""

    def run_is_dead(self, connection: Connection, run_id: int) -> bool:
        """Whether a `running` run's process is gone (the caller holds the only lock file)."""
        return True

    # -- a source's session --

    def start_source(self, connection: Connection) -> None:
        """Settings for one source's transaction."""

    def optimize_search(self, connection: Connection) -> None:
        """Merge the full-text index's segments after a large load (FTS5)."""
        connection.execute(text("INSERT INTO papers_fts(papers_fts) VALUES ('optimize')"))


class PostgresBackend(Backend):
    """The PostgreSQL way: several loaders at once (etl.load.locks), `COPY` inserts."""

    name = "postgresql"
    concurrent = True
    search_triggers = False
    keys_checked_at_end = True
    journal_for_first_load = False
    comments = True
    roles = True

    def select_rows(
        self, connection: Connection, key: Any, values: Sequence[Any], keys: Iterable[Any]
    ) -> dict[Any, tuple[Any, ...]]:
        wanted = list(dict.fromkeys(keys))
        sql = f"SELECT {_names((key, *values))} FROM {key.table.name} WHERE {key.name} = ANY(%s)"
        rows = connection.exec_driver_sql(sql, (wanted,))
        return {row[0]: tuple(row[1:]) for row in rows}

    def insert_rows(
        self, connection: Connection, table: Table, columns: Sequence[str], rows: Sequence[Row]
    ) -> None:
        if rows:
            _copy(connection, table.name, columns, rows)

    def upsert_rows(
        self,
        connection: Connection,
        table: Table,
        columns: Sequence[str],
        rows: Sequence[Row],
        *,
        conflict: Sequence[str] = (),
        update: Sequence[str] = (),
    ) -> None:
        """Rows are copied into a temporary staging table and merged in one statement."""
        if not rows:
            return
        staging = _staging_table(connection, table.name, columns)
        _copy(connection, staging, columns, rows)
        names = ", ".join(columns)
        connection.exec_driver_sql(
            f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {staging} "
            f"{_on_conflict(conflict, update)}"
        )

    def insert_new_returning(
        self,
        connection: Connection,
        table: Table,
        columns: Sequence[str],
        rows: Sequence[Row],
        returning: Sequence[str],
    ) -> list[tuple[Any, ...]]:
        """A row another transaction is inserting is waited for; rows keep their order, so
        row numbers follow the input as a plain insert's do."""
        if not rows:
            return []
        names = ", ".join(columns)
        staging = _staging_table(connection, table.name, columns)
        _copy(connection, staging, columns, rows)
        result = connection.exec_driver_sql(
            f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {staging} "
            f"ON CONFLICT DO NOTHING RETURNING {', '.join(returning)}"
        )
        return [tuple(row) for row in result]

    def hold_database(self, connection: Connection) -> None:
        locks.hold_database(connection)

    def claim_source(self, connection: Connection, path: str, *, wait: bool) -> bool:
        return locks.claim_source(connection, path, wait=wait)

    def hold_identities(self, connection: Connection, keys: Iterable[str]) -> None:
        locks.hold_identities(connection, keys)

    def hold_papers(self, connection: Connection, pks: Iterable[int]) -> None:
        locks.hold_papers(connection, pks)

    def hold_lookups(self, connection: Connection) -> None:
        locks.hold_lookups(connection)

    def lock_in_order(self, connection: Connection, query: Select[Any]) -> None:
        """`FOR NO KEY UPDATE`: others may still add rows that refer to them."""
        connection.execute(query.with_for_update(key_share=True)).all()

    def skipping_held(self, query: Select[Any], of: Table | None = None) -> Select[Any]:
        return query.with_for_update(skip_locked=True, of=of)

    def other_loaders(self, connection: Connection) -> int:
        return locks.other_loaders(connection)

    def run_lock(
        self, engine: Engine, *, wait: bool, exclusive: bool
    ) -> AbstractContextManager[locks.RunLock]:
        """The loaders' lock: shared, so loaders run together; exclusive for a full refresh."""
        return locks.loaders_lock(engine, wait=wait, exclusive=exclusive)

    def exclude_loaders(self, connection: Connection, lock: locks.RunLock) -> None:
        locks.exclude_loaders(connection, lock)

    def run_is_dead(self, connection: Connection, run_id: int) -> bool:
        return locks.run_is_dead(connection, run_id)

    def start_source(self, connection: Connection) -> None:
        """Long text (abstracts, records) is compressed as it is stored; lz4 does it several
        times faster than the default pglz. For this transaction, where the server has it."""
        available = connection.exec_driver_sql(
            "SELECT 1 FROM pg_settings "
            "WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
        ).first()
        if available:
            connection.exec_driver_sql("SET LOCAL default_toast_compression = 'lz4'")

    def optimize_search(self, connection: Connection) -> None:
        """Nothing to merge: the GIN index is maintained by the server."""


BACKENDS: dict[str, Backend] = {"sqlite": Backend(), "postgresql": PostgresBackend()}


def backend_of(bind: Connection | Any) -> Backend:
    """The backend of a connection or engine (chosen by its dialect, here only)."""
    return BACKENDS[bind.dialect.name]


def run_lock(
    engine: Engine, *, wait: bool = False, exclusive: bool = True
) -> AbstractContextManager[locks.RunLock]:
    """Hold the database for a run, as its backend does."""
    return backend_of(engine).run_lock(engine, wait=wait, exclusive=exclusive)


def hold_database(connection: Connection) -> None:
    """Hold the database-wide lock for this transaction, as the backend does."""
    backend_of(connection).hold_database(connection)


def claim_source(connection: Connection, path: str, *, wait: bool) -> bool:
    """Hold a source for this transaction; False if another loader holds it (no wait)."""
    return backend_of(connection).claim_source(connection, path, wait=wait)


def exclude_loaders(connection: Connection, lock: locks.RunLock) -> None:
    """Wait until no other loader runs (for work that must see none mid-source)."""
    backend_of(connection).exclude_loaders(connection, lock)


def _names(columns: Sequence[Any]) -> str:
    return ", ".join(column.name for column in columns)


def _marks(columns: Sequence[str]) -> str:
    return ", ".join("?" for _ in columns)


def _on_conflict(conflict: Sequence[str], update: Sequence[str]) -> str:
    if not update:
        return "ON CONFLICT DO NOTHING"
    assignments = ", ".join(f"{c} = excluded.{c}" for c in update)
    return f"ON CONFLICT ({', '.join(conflict)}) DO UPDATE SET {assignments}"


def _staging_table(connection: Connection, table: str, columns: Sequence[str]) -> str:
    """An empty temporary table with the given columns of `table`, dropped at commit."""
    name = f"staging_{table}_{len(columns)}"
    connection.exec_driver_sql(
        f"CREATE TEMPORARY TABLE IF NOT EXISTS {name} ON COMMIT DROP AS "
        f"SELECT {', '.join(columns)} FROM {table} WITH NO DATA"
    )
    connection.exec_driver_sql(f"TRUNCATE {name}")
    return name


def _copy(connection: Connection, table: str, columns: Sequence[str], rows: Sequence[Row]) -> None:
    """COPY rows into a table on the connection's own psycopg connection (same transaction)."""
    raw: Any = connection.connection.driver_connection
    with (
        raw.cursor() as cursor,
        cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)

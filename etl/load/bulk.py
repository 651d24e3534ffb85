"""Set-based writes and lookups that each backend is fast at.

SQLite runs in-process, so one prepared statement with `executemany` is the fastest path.
PostgreSQL is fastest with `COPY`: new rows are copied straight in; upserts are copied into a
temporary staging table and merged with one `INSERT ... SELECT ... ON CONFLICT`.
Table and column names here always come from the schema module, never from input.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, Table

CHUNK = 900  # ids per IN (...) list: well under every backend's bound-parameter limit

Row = Sequence[Any]  # values in the order of the statement's columns


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def select_map(connection: Connection, key: Any, value: Any, keys: Iterable[Any]) -> dict[Any, Any]:
    """{key: value} for the rows whose key is in `keys`."""
    return {k: row[0] for k, row in select_rows(connection, key, (value,), keys).items()}


def select_rows(
    connection: Connection, key: Any, values: Sequence[Any], keys: Iterable[Any]
) -> dict[Any, tuple[Any, ...]]:
    """{key: (values...)} for the rows whose key is in `keys`, in one query: the keys are bound
    as one array on PostgreSQL (`= ANY(%s)`), as one JSON array on SQLite (`json_each`)."""
    wanted = list(dict.fromkeys(keys))
    names = ", ".join(column.name for column in (key, *values))
    if connection.dialect.name == "postgresql":
        sql = f"SELECT {names} FROM {key.table.name} WHERE {key.name} = ANY(%s)"
        rows = connection.exec_driver_sql(sql, (wanted,))
    else:
        sql = (
            f"SELECT {names} FROM {key.table.name} "
            f"WHERE {key.name} IN (SELECT value FROM json_each(?))"
        )
        rows = connection.exec_driver_sql(sql, (json.dumps(wanted),))
    return {row[0]: tuple(row[1:]) for row in rows}


def highest_id(connection: Connection, column: Any) -> int:
    """The largest value of an integer key column (0 for an empty table): rows inserted next
    number above it (SQLite's rowid and PostgreSQL's identity both only grow)."""
    sql = f"SELECT coalesce(max({column.name}), 0) FROM {column.table.name}"
    return int(connection.exec_driver_sql(sql).scalar_one())


def ids_since(connection: Connection, key: Any, id_column: Any, mark: int) -> dict[Any, int]:
    """{key: id} of the rows numbered above `mark`, i.e. the rows just inserted (the caller
    holds the table's lookup lock, or is alone: no other writer adds rows meanwhile). A range
    scan of the integer key, where looking the new keys up would probe the key's index at
    random pages."""
    sql = (
        f"SELECT {key.name}, {id_column.name} FROM {key.table.name} "
        f"WHERE {id_column.name} > {int(mark)}"
    )
    return {row[0]: row[1] for row in connection.exec_driver_sql(sql)}


def insert_rows(
    connection: Connection, table: Table, columns: Sequence[str], rows: Sequence[Row]
) -> None:
    """Insert rows known to be new: COPY on PostgreSQL, executemany on SQLite."""
    if not rows:
        return
    if connection.dialect.name == "postgresql":
        _copy(connection, table.name, columns, rows)
        return
    marks = ", ".join("?" for _ in columns)
    connection.exec_driver_sql(
        f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})", rows
    )


def upsert_rows(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Row],
    *,
    conflict: Sequence[str] = (),
    update: Sequence[str] = (),
) -> None:
    """Insert rows; on a key conflict update the `update` columns, or skip the row if none."""
    if not rows:
        return
    names = ", ".join(columns)
    on_conflict = _on_conflict(conflict, update)
    if connection.dialect.name == "postgresql":
        staging = _staging_table(connection, table.name, columns)
        _copy(connection, staging, columns, rows)
        connection.exec_driver_sql(
            f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {staging} {on_conflict}"
        )
        return
    marks = ", ".join("?" for _ in columns)
    connection.exec_driver_sql(
        f"INSERT INTO {table.name} ({names}) VALUES ({marks}) {on_conflict}", rows
    )


def insert_new_returning(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Row],
    returning: Sequence[str],
) -> list[tuple[Any, ...]]:
    """Insert the rows whose key is not taken yet, skipping the others (a row another
    transaction is inserting is waited for); the `returning` columns of the rows inserted.
    For PostgreSQL loaders that run side by side. Rows keep their order, so row numbers follow
    the input as a plain insert's do."""
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

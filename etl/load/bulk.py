"""Set-based helpers every backend shares: chunked id lists, and row numbers read by range.

What differs by backend (bulk inserts, upserts, lookups) is in etl.load.backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection

CHUNK = 900  # ids per IN (...) list: well under every backend's bound-parameter limit


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def highest_id(connection: Connection, column: Any) -> int:
    """The largest value of an integer key column (0 for an empty table): rows inserted next
    number above it (SQLite's rowid and PostgreSQL's identity both only grow)."""
    sql = f"SELECT coalesce(max({column.name}), 0) FROM {column.table.name}"
    return int(connection.exec_driver_sql(sql).scalar_one())


def ids_since(connection: Connection, key: Any, id_column: Any, mark: int) -> dict[Any, int]:
    """{key: id} of the rows numbered above `mark`, i.e. the rows just inserted (the caller
    is alone, or holds the lock that lets it add rows: no other writer adds rows meanwhile). A
    range scan of the integer key, where looking the new keys up would probe the key's index
    at random pages."""
    sql = (
        f"SELECT {key.name}, {id_column.name} FROM {key.table.name} "
        f"WHERE {id_column.name} > {int(mark)}"
    )
    return {row[0]: row[1] for row in connection.exec_driver_sql(sql)}

"""Read commands: search, read-only SQL, stats and the list of views."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from itertools import chain
from typing import Any

from sqlalchemy import Connection, DateTime, Engine, bindparam, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from etl import query_language
from etl.errors import DatabaseError, EtlError, QueryError
from etl.failures import describe
from etl.load.database import create_db_engine, sql_dir, view_definitions

DEFAULT_TIMEOUT = 30.0
# The first keyword of a statement that reads (each reader's `reading_keywords`). The server
# has the last word (a read-only transaction, a statement timeout, one statement per message):
# this check only gives a clear message for the obvious cases, and keeps out COPY or SET.
LEADING_COMMENTS_RE = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/|\()*", re.S)
EXPLAIN_ANALYZE_RE = re.compile(
    r"\Aexplain\s*(?:\([^)]*\banaly[sz]e\b|(?:verbose\s+)?analy[sz]e\b)", re.I
)
# SQLite pragmas that only read, allowed in `etl query` (also as pragma_NAME() functions).
READING_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "collation_list",
        "function_list",
        "module_list",
        "pragma_list",
        "compile_options",
        "database_list",
    }
)


@dataclass(frozen=True)
class Rows:
    """A result: column names and rows of plain values (and why it was cut short, if it was)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    cut: str | None = None


# What `etl query` prints at most, unless told otherwise (--max-rows, --max-bytes; 0: no bound).
MAX_ROWS = 10_000
MAX_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Bound:
    """How much of a result `etl query` reads: rows and bytes (0: unbounded)."""

    rows: int = MAX_ROWS
    bytes: int = MAX_BYTES


def _bounded(
    rows: Iterable[tuple[tuple[Any, ...], int]], bound: Bound
) -> tuple[tuple[tuple[Any, ...], ...], str | None]:
    """Rows, each with its size in bytes, read until the result or the bound ends; why it was
    cut. A row is taken only while the rows before it and it fit in `bound.bytes`."""
    kept: list[tuple[Any, ...]] = []
    size = 0
    for row, row_size in rows:
        size += row_size
        if bound.bytes and size > bound.bytes:
            return tuple(kept), (
                f"output cut after {len(kept):,} rows: the next would pass {bound.bytes:,} "
                "bytes (--max-bytes; 0 for no bound)"
            )
        if bound.rows and len(kept) == bound.rows:
            return tuple(kept), f"output cut at {bound.rows:,} rows (--max-rows; 0 for no bound)"
        kept.append(tuple(row))
    return tuple(kept), None


def _measured(rows: Iterable[Any]) -> Iterator[tuple[tuple[Any, ...], int]]:
    """Rows with their size as the client sees it: text and bytes by length, the rest 8."""
    for row in rows:
        yield tuple(row), sum(len(v) if isinstance(v, str | bytes) else 8 for v in row)


def open_reader(url: str) -> Engine:
    """An engine for reading: SQLite opened read-only; the database must exist and be loaded."""
    engine = create_db_engine(url, read_only=True)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1 FROM papers LIMIT 1"))
    except (SQLAlchemyError, sqlite3.Error) as exc:
        engine.dispose()
        if _is_missing_table(exc):
            raise DatabaseError("the database has no papers table: run `etl run` first") from exc
        raise describe(exc, url) from exc
    return engine


def _is_missing_table(exc: BaseException) -> bool:
    """True only for `no such table` (SQLite) or undefined_table (PostgreSQL), not a lock."""
    original = getattr(exc, "orig", exc)
    return getattr(original, "sqlstate", None) == "42P01" or "no such table" in str(original)


def to_fts5_query(query: str) -> str:
    """A user's search as a safe FTS5 expression (see etl/query_language.py)."""
    return query_language.to_fts5(query_language.parse(query))


def search(engine: Engine, query: str, limit: int = 10) -> Rows:
    """Papers matching a query, best first, with a highlighted snippet."""
    parsed = query_language.parse(query)
    reader = reader_of(engine)
    with engine.connect() as connection:
        try:
            bound = reader.search_expression(connection, parsed)
            result = connection.execute(
                text(_search_sql(reader.name)), {"query": bound, "limit": limit}
            )
            return Rows(tuple(result.keys()), tuple(tuple(r) for r in result))
        except DBAPIError as exc:
            raise describe(exc, str(engine.url)) from exc


@cache
def _search_sql(dialect: str) -> str:
    """The search statement for a dialect (read once per process)."""
    return sql_dir().joinpath("queries", f"search.{dialect}.sql").read_text("utf-8")


def run_query(
    engine: Engine,
    sql: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    allow_superuser: bool = False,
    bound: Bound | None = None,
) -> Rows:
    """Run one statement that reads, in a read-only transaction stopped after `timeout` s;
    at most `bound` of its result is read (`Rows.cut` says so)."""
    statement = sql.strip().rstrip(";").rstrip()
    reader = reader_of(engine)
    _check_reads(statement, reader.reading_keywords)
    bound = bound or Bound()
    with engine.connect() as connection:
        try:
            columns, rows, cut = reader.query(
                connection, statement, timeout, allow_superuser, bound
            )
        except EtlError:
            raise
        except (SQLAlchemyError, sqlite3.Error) as exc:
            raise _query_error(exc, engine) from exc
        except Exception as exc:
            if type(exc).__module__.startswith("psycopg"):
                raise _query_error(exc, engine) from exc
            raise
        finally:
            _rollback(connection)
    if columns is None:
        raise QueryError("the statement returns no rows; `etl query` only reads")
    return Rows(columns, rows, cut)


def _check_reads(statement: str, allowed: tuple[str, ...]) -> None:
    """Refuse a statement whose first keyword is not one that reads."""
    keyword = _first_keyword(statement)
    if keyword not in allowed:
        shown = keyword.upper() or "this"
        raise QueryError(
            f"`etl query` only reads: {shown} statements are refused "
            f"(allowed: {', '.join(k.upper() for k in allowed)})"
        )
    if EXPLAIN_ANALYZE_RE.match(LEADING_COMMENTS_RE.sub("", statement, count=1)):
        raise QueryError("`etl query` only reads: EXPLAIN ANALYZE runs the statement; use EXPLAIN")


def _first_keyword(statement: str) -> str:
    """The statement's first keyword, lower case, past comments and opening parentheses."""
    body = LEADING_COMMENTS_RE.sub("", statement, count=1)
    first = re.match(r"[A-Za-z]*", body)
    return first.group(0).lower() if first else ""


Result = tuple[tuple[str, ...] | None, tuple[tuple[Any, ...], ...], str | None]


def _postgres_query(
    connection: Connection, statement: str, timeout: float, allow_superuser: bool, bound: Bound
) -> Result:
    """A read-only transaction with a statement timeout; the statement sent as a prepared
    statement (the extended protocol), which the server refuses to hold two statements."""
    superuser = connection.scalar(
        text(
            "SELECT rolsuper OR pg_has_role(current_user, 'pg_read_server_files', 'USAGE') "
            "OR pg_has_role(current_user, 'pg_execute_server_program', 'USAGE') "
            "FROM pg_roles WHERE rolname = current_user"
        )
    )
    if superuser and not allow_superuser:
        raise QueryError(
            "connected as a PostgreSQL superuser (or a member of pg_read_server_files or "
            "pg_execute_server_program), who can read server files and run programs "
            "whatever the transaction: connect as a read-only role (`etl grant-readonly`), "
            "or pass --allow-superuser"
        )
    connection.exec_driver_sql("SET TRANSACTION READ ONLY")
    connection.execute(
        text("SELECT set_config('statement_timeout', :ms, true)"),
        {"ms": str(max(1, round(timeout * 1000)))},
    )
    raw: Any = connection.connection.driver_connection
    if bound.bytes and _first_keyword(statement) not in UNWRAPPABLE:
        columns = _described(raw, statement)
        if columns is None:
            return None, (), None
        wrapped = _bounded_sql(statement, len(columns), bound.bytes)
        with _streamed(raw, wrapped) as (_, stream):
            sized = ((row[:-1], int(row[-1])) for row in stream)
            return (columns, *_bounded(sized, bound))
    with _streamed(raw, statement) as (cursor, stream):
        first = next(stream, None)
        if cursor.description is None:
            return None, (), None
        columns = tuple(column.name for column in cursor.description)
        rows = chain(() if first is None else (first,), stream)
        return (columns, *_bounded(_measured(rows), bound))


# Statements that cannot be a subquery: their rows arrive as the server makes them (EXPLAIN
# shows the constants a plan holds, so a huge constant arrives whole).
UNWRAPPABLE = frozenset({"explain", "show"})


def _described(raw: Any, statement: str) -> tuple[str, ...] | None:
    """The statement's column names as the server describes it, without running it (None
    when it returns no rows). Preparing it also refuses more than one statement."""
    import psycopg.errors

    pgconn = raw.pgconn
    encoding = raw.info.encoding
    for result in (
        pgconn.prepare(b"", statement.encode(encoding), None),
        pgconn.describe_prepared(b""),
    ):
        if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
            raise psycopg.errors.error_from_result(result, encoding=encoding)
    if result.nfields == 0:
        return None
    return tuple(
        (result.fname(i) or b"?column?").decode(encoding, "replace") for i in range(result.nfields)
    )


def _bounded_sql(statement: str, count: int, limit: int) -> str:
    """The statement wrapped so that no row larger than `limit` bytes sends its values."""
    names = [f"c{i}" for i in range(1, count + 1)]
    return _bounded_template().format(
        values=", ".join(f"CASE WHEN q.row_size <= {int(limit)} THEN q.{n} END" for n in names),
        sizes=" + ".join(f"coalesce(octet_length(u.{n}::text), 0)::bigint" for n in names),
        columns=", ".join(names),
        statement=statement,
    )


@cache
def _bounded_template() -> str:
    """The wrapping statement (read once per process)."""
    return sql_dir().joinpath("queries", "bounded.postgresql.sql").read_text("utf-8")


@contextmanager
def _streamed(raw: Any, statement: str) -> Iterator[tuple[Any, Iterator[Any]]]:
    """A cursor and its rows arriving one at a time (single-row mode, one statement only), so
    the bound limits what the client holds; leaving early cancels the rest."""
    cursor = raw.cursor()
    try:
        rows = cursor.stream(statement)
        try:
            yield cursor, rows
        finally:
            rows.close()
    finally:
        cursor.close()


def _sqlite_query(
    connection: Connection, statement: str, timeout: float, allow_superuser: bool, bound: Bound
) -> Result:
    """The file is open read-only; an authorizer also refuses ATTACH, writes and setting
    pragmas, so nothing is created on disk, and a progress handler stops it at the timeout."""
    raw: sqlite3.Connection = connection.connection.driver_connection  # type: ignore[assignment]
    connection.exec_driver_sql("PRAGMA query_only = ON")
    deadline = time.monotonic() + timeout
    raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    raw.set_authorizer(_sqlite_authorizer)
    # No value larger than the output may hold is ever made (`randomblob(900000000)`).
    length = raw.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
    if bound.bytes:
        raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(length, bound.bytes))
    watchdog = _Watchdog(raw, timeout)
    try:
        cursor = raw.execute(statement)
        if cursor.description is None:
            return None, (), None
        columns = tuple(str(column[0]) for column in cursor.description)
        return (columns, *_bounded(_measured(cursor), bound))
    except sqlite3.DataError as exc:
        if "too big" not in str(exc):
            raise
        raise QueryError(
            f"a value of the result is over {bound.bytes:,} bytes (--max-bytes; 0 for no bound)"
        ) from exc
    finally:
        watchdog.stop()
        raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, length)
        raw.set_authorizer(None)
        raw.set_progress_handler(None, 0)


class _Watchdog:
    """Interrupts a SQLite statement at its deadline from another thread: the progress
    handler is not called while SQLite sorts (one ORDER BY over large values can run for
    minutes between two calls), `sqlite3.Connection.interrupt` is, from any thread."""

    def __init__(self, raw: sqlite3.Connection, timeout: float) -> None:
        self.raw = raw
        self.lock = threading.Lock()
        self.running = True
        self.timer = threading.Timer(timeout, self._interrupt)
        self.timer.daemon = True
        self.timer.start()

    def _interrupt(self) -> None:
        with self.lock:  # never once the statement is over: it would stop the next one
            if self.running:
                self.raw.interrupt()

    def stop(self) -> None:
        with self.lock:
            self.running = False
        self.timer.cancel()


def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
    """Allow reading tables, calling functions and read-only pragmas; deny everything else."""
    if action in {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_RECURSIVE:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
        # Asked when a virtual table (papers_fts) is first connected; the file is open
        # read-only and query_only is on, so no write can follow from it.
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in READING_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _query_error(exc: BaseException, engine: Engine) -> EtlError:
    """The error of a user's statement: refusals named as such, the rest as the server said."""
    original = getattr(exc, "orig", None) or exc
    message = (str(original).strip().splitlines() or [type(original).__name__])[0]
    if isinstance(original, sqlite3.ProgrammingError) and "one statement" in message:
        return QueryError("`etl query` runs exactly one statement")
    if getattr(original, "sqlite_errorname", "") == "SQLITE_AUTH" or "not authorized" in message:
        return QueryError(
            "`etl query` only reads: the statement would write, attach a file or change a "
            f"setting ({message})"
        )
    if "multiple commands" in message:
        return QueryError("`etl query` runs exactly one statement")
    if "data-modifying statement" in message:  # a writing WITH, refused inside the wrapper
        return QueryError(
            f"`etl query` only reads: a WITH clause that writes is refused ({message})"
        )
    error = describe(exc, str(engine.url))
    if type(error) is DatabaseError:  # the database's own words about the statement
        return QueryError(message)
    return error


def _rollback(connection: Connection) -> None:
    """End the read-only transaction (a failed statement may have closed it already)."""
    try:
        connection.rollback()
    except SQLAlchemyError:
        connection.invalidate()


def stats(engine: Engine) -> dict[str, Rows]:
    """Counts per table, per venue and per topic, and the last run."""
    tables = (
        "papers",
        "sources",
        "authors",
        "links",
        "methods",
        "acronyms",
        "topics",
        "rejects",
        "runs",
    )
    with engine.connect() as connection:
        counts = tuple(
            (name, connection.scalar(text(f"SELECT count(*) FROM {name}"))) for name in tables
        )
        venues = connection.execute(
            text(
                "SELECT venue, year, status, papers, papers_with_code FROM venue_summary "
                "ORDER BY venue, year, status"
            )
        )
        venue_rows = Rows(tuple(venues.keys()), tuple(tuple(r) for r in venues))
        topics = connection.execute(
            text(
                "SELECT topic, parent, papers, papers_with_code FROM topic_summary "
                "WHERE papers > 0 ORDER BY papers DESC, topic LIMIT 20"
            )
        )
        topic_rows = Rows(tuple(topics.keys()), tuple(tuple(r) for r in topics))
        last = connection.execute(
            text(
                "SELECT id, status, started_at, papers_inserted, papers_updated, papers_unchanged, "
                "rejects, seconds FROM runs ORDER BY id DESC LIMIT 1"
            )
        )
        last_rows = Rows(tuple(last.keys()), tuple(tuple(r) for r in last))
    return {
        "tables": Rows(("table", "rows"), counts),
        "venues": venue_rows,
        "topics": topic_rows,
        "last run": last_rows,
    }


def views(engine: Engine) -> Rows:
    """The views present in the database, with the packaged description (or their comment)."""
    reader = reader_of(engine)
    packaged = {v.name: v.description for v in view_definitions(reader.name)}
    with engine.connect() as connection:
        found = connection.execute(text(reader.views_sql)).all()
    return Rows(
        ("view", "description"),
        tuple((name, packaged.get(name) or comment or "") for name, comment in found),
    )


class SQLiteReader:
    """How etl reads SQLite: FTS5 search, a read-only file with an authorizer."""

    name = "sqlite"
    reading_keywords = ("select", "with", "values", "explain")
    views_sql = "SELECT name, NULL FROM sqlite_master WHERE type = 'view' ORDER BY name"

    def search_expression(self, connection: Connection, parsed: Any) -> str:
        """A parsed search as the FTS5 expression the search statement binds."""
        return query_language.to_fts5(parsed)

    def short_queries(self, connection: Connection) -> None:
        """Prepare the transaction for quick queries of a few joins (nothing to do)."""

    def query(
        self,
        connection: Connection,
        statement: str,
        timeout: float,
        allow_superuser: bool,
        bound: Bound,
    ) -> Result:
        """One reading statement (see `_sqlite_query`)."""
        return _sqlite_query(connection, statement, timeout, allow_superuser, bound)


class PostgresReader:
    """How etl reads PostgreSQL: tsquery search, a read-only transaction with a timeout."""

    name = "postgresql"
    reading_keywords = ("select", "with", "values", "table", "explain", "show")
    views_sql = (
        "SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class AS c "
        "WHERE c.relkind IN ('v', 'm') AND c.relnamespace = current_schema()::regnamespace "
        "ORDER BY c.relname"
    )

    def search_expression(self, connection: Connection, parsed: Any) -> str:
        """A parsed search as the `tsquery` text the search statement binds (made by the
        server from bound words)."""
        expression, params = query_language.to_tsquery(parsed)
        return str(connection.scalar(text(f"SELECT ({expression})::text"), params))

    def short_queries(self, connection: Connection) -> None:
        """No JIT compilation for the transaction: a query whose cost the planner
        overestimates (many-way joins of aggregates) spends seconds compiling what runs in
        milliseconds (benchmarks/HISTORY.md)."""
        connection.exec_driver_sql("SET LOCAL jit = off")

    def query(
        self,
        connection: Connection,
        statement: str,
        timeout: float,
        allow_superuser: bool,
        bound: Bound,
    ) -> Result:
        """One reading statement (see `_postgres_query`)."""
        return _postgres_query(connection, statement, timeout, allow_superuser, bound)


Reader = SQLiteReader | PostgresReader
READERS: dict[str, Reader] = {"sqlite": SQLiteReader(), "postgresql": PostgresReader()}


def reader_of(engine: Engine) -> Reader:
    """How to read the engine's database (chosen by its dialect, here only)."""
    return READERS[engine.dialect.name]


CHANGE_COLUMNS = (
    "event_id",
    "run_id",
    "changed_at",
    "kind",
    "field",
    "old_value",
    "new_value",
    "paper_id",
    "label",
    "venue",
    "year",
)


@dataclass(frozen=True)
class ChangeFilter:
    """Which change events `etl changes` shows."""

    run: int | None = None  # this run's only
    since_run: int | None = None  # runs after this one
    since: datetime | None = None  # written at or after this time (UTC)
    kinds: tuple[str, ...] = ()
    venue: str | None = None  # case-insensitive
    limit: int = 1000


def changes(engine: Engine, wanted: ChangeFilter) -> Rows:
    """Change events from the `recent_changes` view, newest first."""
    conditions: list[str] = []
    params: dict[str, Any] = {}
    if wanted.run is not None:
        conditions.append("run_id = :run")
        params["run"] = wanted.run
    if wanted.since_run is not None:
        conditions.append("run_id > :since_run")
        params["since_run"] = wanted.since_run
    if wanted.since is not None:
        conditions.append("changed_at >= :since")
        params["since"] = wanted.since
    if wanted.kinds:
        names = [f":kind{i}" for i in range(len(wanted.kinds))]
        conditions.append(f"kind IN ({', '.join(names)})")
        params.update({f"kind{i}": kind for i, kind in enumerate(wanted.kinds)})
    if wanted.venue is not None:
        conditions.append("lower(venue) = lower(:venue)")
        params["venue"] = wanted.venue
    where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
    sql = (
        f"SELECT {', '.join(CHANGE_COLUMNS)} FROM recent_changes {where}"
        f"ORDER BY event_id DESC LIMIT {int(wanted.limit)}"
    )
    with engine.connect() as connection:
        try:
            statement = text(sql)
            if wanted.since is not None:
                statement = statement.bindparams(bindparam("since", type_=DateTime))
            result = connection.execute(statement, params)
            return Rows(tuple(result.keys()), tuple(tuple(r) for r in result))
        except DBAPIError as exc:
            if _is_missing_table(exc):
                raise DatabaseError(
                    "the database has no change events yet: run `etl run` to upgrade it"
                ) from exc
            raise describe(exc, str(engine.url)) from exc

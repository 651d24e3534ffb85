"""Opening databases, migrating them to head, and (re)creating the packaged views."""

from __future__ import annotations

import importlib.util
import os
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from etl.config import busy_timeout_seconds, mask_url
from etl.errors import DatabaseError, MissingDatabaseError
from etl.load import locks

SQLITE_CACHE_KIB = 32 * 1024
# Pages of a new database file. Only one paper row (two abstracts) fits in a 4 KB page,
# wasting much of it; 16 KB pages hold several, and make shallower indexes, so a large load
# writes less (benchmarks/HISTORY.md). Existing files keep their page size.
SQLITE_PAGE_SIZE = 16 * 1024


def package_dir(package: str, fallback: str) -> Path:
    """A data folder shipped in the package, or the repository's own when running from source."""
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[2] / fallback


def sql_dir() -> Path:
    """The `sql/` folder: view definitions and dialect-specific search DDL."""
    return package_dir("etl.sql", "sql")


def migrations_dir() -> Path:
    """The Alembic script folder."""
    return package_dir("etl.migrations", "migrations")


def create_db_engine(url: str, *, read_only: bool = False) -> Engine:
    """An engine with our connection settings: WAL, foreign keys and a busy timeout on SQLite;
    on PostgreSQL, readers wait for a lock (a first load's, a migration's) at most as long."""
    try:
        if url.startswith("sqlite"):
            return _sqlite_engine(url, read_only=read_only)
        arguments: dict[str, Any] = {}
        if read_only and "options" not in make_url(url).query:
            lock_timeout_ms = round(busy_timeout_seconds() * 1000)
            arguments["connect_args"] = {"options": f"-c lock_timeout={lock_timeout_ms}"}
        return create_engine(url, pool_pre_ping=True, **arguments)
    except (SQLAlchemyError, ImportError) as exc:
        raise DatabaseError(f"cannot open {mask_url(url)}: {mask_url(str(exc))}") from exc


def _sqlite_engine(url: str, *, read_only: bool) -> Engine:
    """SQLite engine; read-only opens the file with mode=ro so nothing can be written.

    A missing folder is an error, never created: a mistyped path should not leave folders.
    """
    database = make_url(url).database or ""
    if database and database != ":memory:" and not Path(database).parent.is_dir():
        raise MissingDatabaseError(
            f"no folder {str(Path(database).parent)!r} for the database {database!r}: "
            "create it first, or check the path"
        )
    if read_only:
        if not database or database == ":memory:" or not Path(database).is_file():
            raise MissingDatabaseError(f"no database at {database or url}: run `etl run` first")
        uri = f"file:{quote(str(Path(database).resolve()))}?mode=ro"
        if os.statvfs(Path(database).parent).f_flag & os.ST_RDONLY:
            # On a read-only file system nobody can write the file, so it is truly immutable;
            # without saying so SQLite cannot open a WAL database there (no -shm file).
            uri += "&immutable=1"
        engine = create_engine(  # the URL names the file for messages; creator opens it
            f"sqlite:///{database}",
            creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False),
        )
    else:
        engine = create_engine(url)

    busy_timeout_ms = round(busy_timeout_seconds() * 1000)

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # Let Python's sqlite3 leave transaction control to SQLAlchemy (BEGIN issued below).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        cursor.execute("PRAGMA foreign_keys = ON")
        if not read_only:
            cursor.execute(f"PRAGMA page_size = {SQLITE_PAGE_SIZE}")  # before WAL creates the file
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            # Bulk loads touch index pages all over the file; the 2 MB default cache thrashes.
            cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


@contextmanager
def first_load_journal(engine: Engine) -> Iterator[bool]:
    """Write a first load into an empty SQLite database with a rollback journal, not the WAL.

    In WAL mode every page of a large first load is written twice (to the log, then into the
    file), and each page read that misses the cache searches a log that grows with the load
    (benchmarks/HISTORY.md has the measurement). A rollback journal writes new pages once and
    keeps only the few that existed before, with the same all-or-nothing commit. Nobody can
    be reading papers that do not exist yet; SQLite refuses the switch while another
    connection has the file open, and then the load simply stays in WAL mode. WAL comes back
    when the load ends (and every later writing connection asks for it). Yields whether the
    switch was made.
    """
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield False
        return
    with engine.connect() as connection:
        raw: Any = connection.connection.driver_connection  # autocommit: no transaction open
        empty = raw.execute("SELECT 1 FROM papers LIMIT 1").fetchone() is None
        switched = empty and _journal_mode(raw, "delete", busy_timeout_ms=0)
    try:
        yield switched
    finally:
        if switched:
            with engine.connect() as connection:
                _journal_mode(connection.connection.driver_connection, "wal")


def _journal_mode(raw: Any, mode: str, *, busy_timeout_ms: int | None = None) -> bool:
    """Switch a SQLite connection's journal mode; False when SQLite cannot (the file is busy)."""
    usual = round(busy_timeout_seconds() * 1000)
    raw.execute(f"PRAGMA busy_timeout = {usual if busy_timeout_ms is None else busy_timeout_ms}")
    try:
        return bool(raw.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0] == mode)
    except sqlite3.OperationalError:
        return False
    finally:
        raw.execute(f"PRAGMA busy_timeout = {usual}")


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic configuration pointing at the packaged migrations."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade_to_head(engine: Engine) -> None:
    """Apply every pending migration; the schema exists only through them."""
    try:
        with engine.begin() as connection:
            locks.hold_database(connection)  # two loaders starting together migrate once
            if current_revision(connection) == head_revision():
                restore_missing_views(connection)
                return
            command.upgrade(alembic_config(connection), "head")
    except OperationalError as exc:
        raise DatabaseError(f"cannot migrate {mask_url(str(engine.url))}: {exc.orig}") from exc


def restore_missing_views(connection: Connection) -> None:
    """Recreate the packaged views when one was dropped by hand (at head, nothing else would)."""
    present = set(inspect(connection).get_view_names())
    if any(view.name not in present for view in view_definitions(connection.dialect.name)):
        recreate_views(connection)


def current_revision(connection: Connection) -> str | None:
    """The database's Alembic revision (None for an empty database)."""
    return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest migration shipped with the package."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def split_statements(sql: str) -> Iterator[str]:
    """Statements of an SQL file (trigger bodies with inner semicolons stay whole)."""
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if buffer.rstrip().endswith(";") and sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            buffer = ""
            if _strip_comments(statement).strip(" ;\n"):
                yield statement
    if _strip_comments(buffer).strip():
        yield buffer.strip()


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", sql)


@dataclass(frozen=True)
class ViewDefinition:
    """A packaged view: its name, description (its header comment), column comments and SQL."""

    name: str
    description: str
    column_comments: dict[str, str]
    sql: str


def view_definitions(dialect: str) -> list[ViewDefinition]:
    """The packaged views for a dialect: `sql/views/NAME.sql`, or `NAME.DIALECT.sql` if present."""
    folder = sql_dir().joinpath("views")
    files = {f.name: f for f in folder.iterdir() if f.name.endswith(".sql")}
    views = []
    for name in sorted(n for n in files if n.count(".") == 1):
        stem = name[: -len(".sql")]
        chosen = files.get(f"{stem}.{dialect}.sql", files[name])
        views.append(parse_view(stem, chosen.read_text("utf-8")))
    return _dependencies_first(views)


def _dependencies_first(views: list[ViewDefinition]) -> list[ViewDefinition]:
    """Views in creation order: one that reads another packaged view comes after it.

    PostgreSQL refuses a view over a view that does not exist yet, and refuses to drop one
    that another still reads; `drop_views` walks this order backwards.
    """
    pending = list(views)
    ordered: list[ViewDefinition] = []
    while pending:
        names = {v.name for v in pending}
        ready = [v for v in pending if not (_views_read(v) & (names - {v.name}))]
        if not ready:
            raise DatabaseError(
                "the packaged views read each other in a cycle: " + ", ".join(names)
            )
        ordered.extend(ready)
        pending = [v for v in pending if v not in ready]
    return ordered


def _views_read(view: ViewDefinition) -> set[str]:
    """Names after FROM or JOIN in a view's SQL (comments removed)."""
    return set(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", _strip_comments(view.sql), re.I))


def parse_view(name: str, sql: str) -> ViewDefinition:
    """Read the header comments of a view file: `column NAME: ...` lines describe columns,
    the others, joined, the view (a description may run over several lines)."""
    lines: list[str] = []
    columns: dict[str, str] = {}
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        comment = line[2:].strip()
        if match := re.match(r"column\s+(\w+):\s*(.+)", comment):
            columns[match.group(1)] = match.group(2)
        elif comment:
            lines.append(comment)
    return ViewDefinition(name, " ".join(lines), columns, sql)


def recreate_views(connection: Connection) -> None:
    """Drop and create every packaged view from its file (views are replaceable objects)."""
    dialect = connection.dialect.name
    definitions = view_definitions(dialect)
    drop_views(connection)
    for view in definitions:
        for statement in split_statements(view.sql):
            connection.exec_driver_sql(statement)
        if dialect == "postgresql":
            _comment_view(connection, view)


def drop_views(connection: Connection) -> None:
    """Drop every packaged view that exists."""
    for view in reversed(view_definitions(connection.dialect.name)):
        connection.exec_driver_sql(f"DROP VIEW IF EXISTS {view.name}")


def _comment_view(connection: Connection, view: ViewDefinition) -> None:
    """COMMENT ON the view and its documented columns (PostgreSQL)."""
    connection.execute(text(f"COMMENT ON VIEW {view.name} IS {_literal(view.description)}"))
    for column, comment in view.column_comments.items():
        connection.execute(text(f"COMMENT ON COLUMN {view.name}.{column} IS {_literal(comment)}"))


def _literal(value: str) -> str:
    """A quoted SQL string literal (COMMENT ON takes no bound parameters)."""
    return "'" + value.replace("'", "''") + "'"

"""One place that names database and file-system failures for what they are.

SQLAlchemy, psycopg and sqlite3 each raise their own exceptions, and the same exception class
covers many causes (a lock, a hot journal, a missing server). `describe` turns any of them into
the `EtlError` subclass that says which, with what to do about it; every message is scrubbed
of passwords.
"""

from __future__ import annotations

import errno
import re
import sqlite3
from typing import Any

from etl.config import busy_timeout_seconds, mask_url, scrub
from etl.errors import (
    BusyError,
    DatabaseError,
    DiskFullError,
    EtlError,
    HotJournalError,
    LoginError,
    MissingDatabaseError,
    QueryError,
    ReadOnlyDatabaseError,
    UnreachableError,
)

SERVER_RE = re.compile(
    r'connection to server at "(?P<host>[^"]*)"(?: \([^)]*\))?, port (?P<port>\d+)'
)


def describe(exc: BaseException, url: str | None = None) -> EtlError:
    """The EtlError that names what went wrong (the exception itself if it already is one)."""
    if isinstance(exc, EtlError):
        return exc
    original = getattr(exc, "orig", None) or exc
    where = _where(url)
    if isinstance(original, sqlite3.Error):
        error = _sqlite(original, where)
    elif type(original).__module__.startswith("psycopg"):
        error = _postgres(original, url)
    elif isinstance(original, OSError):
        error = _os(original, where)
    else:
        error = DatabaseError(f"{where}: {_first_line(original)}")
    return type(error)(scrub(str(error)))


def is_database_failure(exc: BaseException) -> bool:
    """A failure of the database or the file system (named by `describe`), not a bug."""
    from sqlalchemy.exc import SQLAlchemyError

    return isinstance(exc, SQLAlchemyError | sqlite3.Error | OSError) or type(
        exc
    ).__module__.startswith("psycopg")


def _where(url: str | None) -> str:
    """The database named for a message: the SQLite file's path, or the masked URL."""
    if not url:
        return "the database"
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ":memory:"
        return path.split("?", 1)[0]
    return mask_url(url)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _sqlite(exc: sqlite3.Error, path: str) -> EtlError:
    """SQLite failures by their extended result code."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    text = _first_line(exc)
    if name == "SQLITE_READONLY_ROLLBACK":
        return HotJournalError(
            f"{path} holds an unfinished write (a hot journal, {path}-journal, left by a load "
            "that was killed) which read-only commands cannot roll back: run `etl run` on it, "
            "or open it once read-write (e.g. `sqlite3 FILE 'PRAGMA quick_check'`), to recover it"
        )
    if name.startswith("SQLITE_BUSY") or name.startswith("SQLITE_LOCKED"):
        return BusyError(
            f"{path} is locked by another connection (a transaction writing to it) and stayed "
            f"locked past the {busy_timeout_seconds():g} s busy timeout (ETL_BUSY_TIMEOUT): "
            "try again when it finishes"
        )
    if name.startswith("SQLITE_READONLY"):
        return ReadOnlyDatabaseError(
            f"{path} cannot be written: the file, its folder or its file system is read-only "
            f"({text})"
        )
    if name.startswith("SQLITE_FULL"):
        return DiskFullError(f"the disk holding {path} is full ({text}); nothing was lost")
    if name.startswith("SQLITE_CANTOPEN"):
        return MissingDatabaseError(f"cannot open {path}: {text}")
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return DatabaseError(f"{path} is not a usable SQLite database: {text}")
    if name == "SQLITE_INTERRUPT":
        return QueryError("the statement ran past its time limit and was stopped")
    return DatabaseError(f"{path}: {text}")


def _postgres(exc: Any, url: str | None) -> EtlError:
    """PostgreSQL failures: connection problems by their message, the rest by SQLSTATE."""
    text = str(exc).strip()
    state = getattr(exc, "sqlstate", None)
    server = SERVER_RE.search(text)
    where = f"{server['host']}:{server['port']}" if server else _server(url)
    if "does not exist" in text and "database" in text and state in {None, "3D000"}:
        name = re.search(r'database "([^"]*)"', text)
        database = name.group(1) if name else "the database"
        return MissingDatabaseError(
            f"database {database!r} does not exist on the PostgreSQL server at {where}: "
            "create it first (createdb, or CREATE DATABASE)"
        )
    if state in {"28000", "28P01"} or re.search(
        r"role .* does not exist|authentication failed|no pg_hba.conf entry", text
    ):
        return LoginError(f"the PostgreSQL server at {where} refused the login: {_fatal(text)}")
    if state is None and re.search(
        r"connection (failed|refused|timed out)|failed to resolve host|could not connect|"
        r"server closed the connection|connection is bad|Connection refused|timeout expired",
        text,
    ):
        return UnreachableError(f"cannot reach the PostgreSQL server at {where}: {_reason(text)}")
    if state == "57014":
        return QueryError("the statement ran past its time limit and was stopped")
    if state == "25006":
        return QueryError(f"`etl query` only reads: {_first_line(exc)}")
    if state == "53100":
        return DiskFullError(f"the PostgreSQL server at {where} is out of disk space")
    if state == "55P03":
        return BusyError(
            f"another connection held a lock on a table past the {busy_timeout_seconds():g} s "
            "lock timeout (ETL_BUSY_TIMEOUT), e.g. an `etl run` loading its first file or "
            "migrating: try again when it finishes"
        )
    if state == "40P01":
        return BusyError(f"a deadlock with another connection: {_first_line(exc)}")
    if state == "42501":
        return DatabaseError(f"permission denied: {_first_line(exc)}")
    return DatabaseError(f"{_first_line(exc)}")


def _server(url: str | None) -> str:
    """HOST:PORT of a PostgreSQL URL (libpq's defaults when absent)."""
    if not url:
        return "the configured server"
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    return f"{parsed.host or 'localhost'}:{parsed.port or 5432}"


def _fatal(text: str) -> str:
    """The server's own words after FATAL: (or the first line)."""
    match = re.search(r"FATAL:\s*(.+)", text)
    return match.group(1).strip() if match else text.splitlines()[0]


def _reason(text: str) -> str:
    """Why a connection failed: the last clause of psycopg's first line."""
    line = text.splitlines()[0]
    line = re.sub(r"^connection failed:\s*", "", line)
    line = SERVER_RE.sub("", line).removeprefix(" failed: ").strip(" :")
    return line or "no answer"


def _os(exc: OSError, path: str) -> EtlError:
    """File-system failures: disk full, read-only, missing."""
    target = exc.filename or path
    if exc.errno in {errno.ENOSPC, errno.EDQUOT}:
        return DiskFullError(f"the disk holding {target} is full")
    if exc.errno in {errno.EROFS, errno.EACCES, errno.EPERM}:
        return ReadOnlyDatabaseError(f"{target} cannot be written: {exc.strerror}")
    if exc.errno == errno.ENOENT:
        return MissingDatabaseError(f"{target} does not exist")
    return DatabaseError(f"{target}: {exc.strerror or exc}")

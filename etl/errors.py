"""The library's error hierarchy; the CLI turns these into `Error: ...` and exit status 1."""

from __future__ import annotations

import os


class EtlError(Exception):
    """Base class for every error a user can cause or fix."""


class SourceError(EtlError):
    """An input path or file that cannot be read as a paper list."""

    def __init__(self, path: str, message: str, *, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


class TaxonomyError(EtlError):
    """A taxonomy file that does not follow the documented format."""


class VenueTableError(EtlError):
    """A venues file that cannot be read or has the wrong shape."""


class DatabaseError(EtlError):
    """The database cannot be opened, migrated or queried as asked."""


class UnreachableError(DatabaseError):
    """The database server cannot be reached (host, port and the reason are in the message)."""


class MissingDatabaseError(DatabaseError):
    """The database (a PostgreSQL database, or a SQLite file) does not exist."""


class LoginError(DatabaseError):
    """The server refused the user: unknown role, wrong password, no right to connect."""


class BusyError(DatabaseError):
    """Another connection held a lock on the database past the busy timeout."""


class HotJournalError(DatabaseError):
    """A SQLite file holds an interrupted write that a read-only reader cannot roll back."""


class ReadOnlyDatabaseError(DatabaseError):
    """A write was asked of a database file or folder that cannot be written."""


class DiskFullError(DatabaseError):
    """The disk (or the database's size limit) is full."""


class QueryError(EtlError):
    """A read command's query is invalid or not read-only."""


class LockedError(EtlError):
    """Another `etl run` holds the database."""


def not_utf8(text: str) -> bool:
    """Whether a name or argument from the system held bytes that are not UTF-8: Python reads
    them as surrogates (U+DC80-U+DCFF), which no database driver can encode."""
    return any("\ud800" <= character <= "\udfff" for character in text)


def shown_bytes(text: str) -> str:
    """A name or argument with its bytes that are not UTF-8 written as escapes (`bad\\xff`)."""
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that stands for no byte (not from the system)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")

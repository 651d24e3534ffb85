"""Every lock between loaders, in one place (PostgreSQL's; the backend object calls them).

SQLite has one writer: a run holds an exclusive lock file beside the database for its whole
length. PostgreSQL takes several loaders at once, on one machine or many, through advisory
locks (keys in a namespace of our own, bound as parameters):

- the loaders' lock (`LOADERS`): every run holds it shared for its whole length, so loaders
  run side by side; `--full-refresh` holds it exclusive (with `FULL_REFRESH`, which tells it
  apart), and so, briefly at a run's end, does the deletion of orphaned authors, links and
  methods (it waits for the other loaders to finish, because another loader may be deleting
  the last rows that use one);
- the database lock (`DATABASE`): held for a transaction by database-wide work that is quick:
  migrations and the topic and task sync;
- one lock per run id, held for the run's length: a `running` run whose lock is free belongs
  to a process that died, and is marked interrupted;
- one lock per source path, held by the source's transaction: a loader skips a source
  another loader is loading, and comes back to it at the end, waiting for it then (by when
  it is usually loaded, and unchanged; a loader killed meanwhile left it to the others);
- one lock for adding lookup rows (authors, links, listed terms, methods) and the rows
  that name them, held by a source's last step until it commits, so that loaders add them
  one at a time (no duplicate, no loader waiting on another's uncommitted lookup row) and
  every one of them commits or rolls back with its source;
- one row lock per paper identity key (a hashed `doi:`, `abs:`, `title:` ... key, a row of
  `identity_locks`), held by the source's transaction: paper identity is decided by reading
  `paper_keys` and then inserting, so two loaders that both found nothing stored would
  otherwise each create a paper for one identity. Rows, not advisory locks: a source of
  20,000 papers holds some 40,000 keys until it commits, which overflows the server's lock
  table; a row lock is kept in the row;
- one row lock per stored paper a source may update (`FOR NO KEY UPDATE`): those holding one
  of its records' keys, and those it was seen with before. Two records can reach one paper
  through different keys (a title-only list and an abstract-only list), so the identity
  locks alone do not keep two loaders from updating it together.

No cycle, by construction: a source takes every identity key and every paper lock it will
hold before its first write, each set in one global order (keys by number, then papers by
row number), and never takes another later but the lookup lock, in its last step, where it
waits for nothing else (rows another loader is deleting meanwhile are skipped, not waited
for). So a loader that waits holds nothing that the loader it waits for still needs. The
writer gathers a file's keys first (its transformed batches are kept on disk meanwhile:
etl.spool).

Session locks live on the run's own connection and die with it: a killed loader holds nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sqlalchemy import Connection, Engine, select, text
from sqlalchemy.dialects import postgresql

from etl.errors import LockedError
from etl.load import schema
from etl.load.bulk import chunks

NAMESPACE = 0x65746C00  # "etl\0": the first key of every advisory lock of ours
DATABASE, LOADERS, FULL_REFRESH = 1, 2, 3  # second keys of the database-wide locks
RUNS, SOURCES, LOOKUPS = NAMESPACE + 1, NAMESPACE + 2, NAMESPACE + 3  # namespaces of one key each
EXCLUDE_POLL_SECONDS = 0.5

BUSY_MESSAGE = (
    "another `etl run` is loading this database{holder}; "
    "wait for it to finish, or pass --wait to queue behind it"
)


@dataclass
class RunLock:
    """The lock a run holds for its whole length; on PostgreSQL, with the connection that
    holds it (None on SQLite)."""

    connection: Connection | None = None
    held: str | None = None  # how it holds the loaders' lock: "shared", "exclusive" or None

    def mark_alive(self, connection: Connection, run_id: int) -> None:
        """Hold the run's own lock (PostgreSQL, whose lock has a connection: the one given)."""
        if self.connection is not None:
            connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), _pair(RUNS, run_id))

    def release_loaders(self) -> None:
        """Stop holding the loaders' lock (before waiting for it in another transaction)."""
        if self.connection is not None and self.held:
            function = (
                "pg_advisory_unlock_shared" if self.held == "shared" else "pg_advisory_unlock"
            )
            self.connection.execute(
                text(f"SELECT {function}(:a, :b)"), {"a": NAMESPACE, "b": LOADERS}
            )
            self.connection.commit()
            self.held = None


@contextmanager
def file_run_lock(engine: Engine, *, wait: bool = False) -> Iterator[RunLock]:
    """Hold a SQLite database for a run: an exclusive lock file beside it."""
    database = engine.url.database
    if not database or database == ":memory:":
        yield RunLock()
        return
    with _file_lock(Path(f"{database}.lock"), wait=wait):
        yield RunLock()


@contextmanager
def _file_lock(path: Path, *, wait: bool) -> Iterator[None]:
    """An exclusive flock on a file, removed when the run ends; released by the OS even if
    the process is killed (the file then stays, and the next run takes it over)."""
    handle = _locked(path, wait=wait)
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}")
        handle.flush()
        yield
    finally:
        with suppress(OSError):  # still locked: no other run holds this file now
            path.unlink()
        handle.close()


def _locked(path: Path, *, wait: bool) -> IO[str]:
    """The lock file, opened and locked. The holder removes it before it unlocks, so a run
    that was waiting may have locked a removed file: it then locks the path's file anew."""
    while True:
        handle = path.open("a+")
        try:
            flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
            try:
                fcntl.flock(handle, flags)
            except BlockingIOError as exc:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise LockedError(BUSY_MESSAGE.format(holder=f" ({holder})")) from exc
            if _same_file(handle, path):
                return handle
        except BaseException:
            handle.close()
            raise
        handle.close()


def _same_file(handle: IO[str], path: Path) -> bool:
    """Whether an open file is still the one at a path (not removed nor replaced)."""
    try:
        return os.path.samestat(os.fstat(handle.fileno()), path.stat())
    except FileNotFoundError:
        return False


@contextmanager
def loaders_lock(engine: Engine, *, wait: bool, exclusive: bool) -> Iterator[RunLock]:
    """The loaders' lock as a session lock on a connection of its own, held for the run. A
    loader that finds it held exclusively by the brief deletion of orphans waits for it; held
    by a full refresh (which also holds a lock of its own, to be told apart), it exits."""
    mode = "" if exclusive else "_shared"
    key = {"a": NAMESPACE, "b": LOADERS}
    with engine.connect() as connection:
        if not connection.scalar(text(f"SELECT pg_try_advisory_lock{mode}(:a, :b)"), key):
            if not wait and (exclusive or _held(connection, FULL_REFRESH)):
                connection.rollback()
                holder = "" if exclusive else " with --full-refresh"
                raise LockedError(BUSY_MESSAGE.format(holder=holder))
            connection.execute(text(f"SELECT pg_advisory_lock{mode}(:a, :b)"), key)
        if exclusive:
            connection.execute(
                text("SELECT pg_advisory_lock(:a, :b)"), {"a": NAMESPACE, "b": FULL_REFRESH}
            )
        connection.commit()
        try:
            yield RunLock(connection, "exclusive" if exclusive else "shared")
        finally:
            connection.rollback()
            connection.execute(text("SELECT pg_advisory_unlock_all()"))
            connection.commit()


def _held(connection: Connection, key: int) -> int:
    """How many sessions hold one of our database-wide locks on this database (PostgreSQL;
    advisory locks are per database, but pg_locks lists the whole server's)."""
    holders = connection.scalar(
        text(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid::bigint = :a AND objid::bigint = :b AND objsubid = 2 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ),
        {"a": NAMESPACE, "b": key},
    )
    return int(holders or 0)


def hold_database(connection: Connection) -> None:
    """Hold the database lock until this transaction ends: migrations and the topic and task
    sync run one loader at a time."""
    connection.execute(
        text("SELECT pg_advisory_xact_lock(:a, :b)"), {"a": NAMESPACE, "b": DATABASE}
    )


def exclude_loaders(connection: Connection, lock: RunLock) -> None:
    """Wait until no other loader runs, and keep them out until this transaction ends
    (PostgreSQL), for work that must see no loader mid-source. It asks again every
    EXCLUDE_POLL_SECONDS rather than queueing for the lock: a queued request would make
    loaders that start meanwhile queue behind it, and so behind every loader running."""
    lock.release_loaders()
    key = {"a": NAMESPACE, "b": LOADERS}
    while not connection.scalar(text("SELECT pg_try_advisory_xact_lock(:a, :b)"), key):
        time.sleep(EXCLUDE_POLL_SECONDS)


def run_is_dead(connection: Connection, run_id: int) -> bool:
    """Whether a `running` run's process is gone: nobody holds the run's lock."""
    return bool(
        connection.scalar(text("SELECT pg_try_advisory_xact_lock(:a, :b)"), _pair(RUNS, run_id))
    )


def claim_source(connection: Connection, path: str, *, wait: bool) -> bool:
    """Hold a source for this transaction, waiting for the loader that holds it or, without
    `wait`, returning False at once."""
    key = _pair(SOURCES, path)
    if wait:
        connection.execute(text("SELECT pg_advisory_xact_lock(:a, :b)"), key)
        return True
    return bool(connection.scalar(text("SELECT pg_try_advisory_xact_lock(:a, :b)"), key))


def hold_lookups(connection: Connection) -> None:
    """Add lookup rows (authors, links, listed terms, methods) one loader at a time, until this
    transaction ends: the last step of a source, right before its commit."""
    connection.execute(text("SELECT pg_advisory_xact_lock(:a, :b)"), _pair(LOOKUPS, 0))


def hold_identities(connection: Connection, keys: Iterable[str]) -> None:
    """Hold each paper identity key until this transaction ends (PostgreSQL): its row of
    `identity_locks`, created if new, locked in key order, so that two batches taking
    overlapping keys queue rather than deadlock (and decide a paper's identity in turn)."""
    numbers = sorted({identity_number(key) for key in keys})
    table = schema.identity_locks
    for part in chunks(numbers):
        # waits for a loader that inserted one of them and has not committed
        connection.execute(
            postgresql.insert(table).values([{"key": n} for n in part]).on_conflict_do_nothing()
        )
        query = select(table.c.key).where(table.c.key.in_(part)).order_by(table.c.key)
        connection.execute(query.with_for_update()).all()


def hold_papers(connection: Connection, pks: Iterable[int]) -> None:
    """Hold stored papers until this transaction ends (PostgreSQL), locked in row-number
    order `FOR NO KEY UPDATE`: a loader may update them, and others still add child rows
    (whose foreign keys take a key-share lock) and are never held back by it."""
    papers = schema.papers
    for part in chunks(sorted(set(pks))):
        query = select(papers.c.pk).where(papers.c.pk.in_(part)).order_by(papers.c.pk)
        connection.execute(query.with_for_update(key_share=True)).all()


def identity_number(key: str) -> int:
    """A paper identity key as a signed 64-bit number (its `identity_locks` row)."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big", signed=True)


def other_loaders(connection: Connection) -> int:
    """How many runs besides the caller's hold the loaders' lock."""
    return max(_held(connection, LOADERS) - 1, 0)


def _pair(namespace: int, value: int | str) -> dict[str, int]:
    """Bound values of a two-key advisory lock: the namespace and a 32-bit signed key."""
    if isinstance(value, int):
        number = value % 2**32
    else:
        number = int.from_bytes(hashlib.sha256(value.encode("utf-8")).digest()[:4], "big")
    return {"a": namespace, "b": number - 2**32 if number >= 2**31 else number}

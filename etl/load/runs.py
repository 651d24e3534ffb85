"""The `runs` table, and the lock that keeps two loads off one database."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text, update

from etl.errors import LockedError
from etl.load import schema as s
from etl.load.writer import now
from etl.models import RunReport

LOCK_KEY = 0x7061706572  # PostgreSQL advisory lock id ("paper")


def start_run(engine: Engine, options: dict[str, Any]) -> int:
    """Record a new run as `running` (committed at once, so an interrupted run stays visible)."""
    with engine.begin() as connection:
        connection.execute(
            update(s.runs)
            .where(s.runs.c.status == "running")
            .values(status="interrupted", message="the run stopped before it finished")
        )
        result = connection.execute(
            s.runs.insert().values(
                started_at=now(),
                status="running",
                options=json.dumps(options, default=str),
                sources_loaded=0,
                sources_skipped=0,
                sources_failed=0,
                papers_inserted=0,
                papers_updated=0,
                papers_unchanged=0,
                papers_removed=0,
                links=0,
                methods=0,
                rejects=0,
            )
        )
        key = result.inserted_primary_key
        assert key is not None
        return int(key[0])


def finish_run(engine: Engine, report: RunReport, message: str | None = None) -> None:
    """Store a run's outcome and counts."""
    with engine.begin() as connection:
        connection.execute(
            update(s.runs)
            .where(s.runs.c.id == report.run_id)
            .values(
                finished_at=now(),
                status=report.status,
                sources_loaded=report.sources_loaded,
                sources_skipped=report.sources_skipped,
                sources_failed=report.sources_failed,
                papers_inserted=report.papers_inserted,
                papers_updated=report.papers_updated,
                papers_unchanged=report.papers_unchanged,
                papers_removed=report.papers_removed,
                links=report.links,
                methods=report.methods,
                rejects=report.rejects,
                seconds=round(report.seconds, 3),
                stage_seconds=json.dumps({k: round(v, 3) for k, v in report.stage_seconds.items()}),
                message=message,
            )
        )


@contextmanager
def run_lock(engine: Engine, *, wait: bool = False) -> Iterator[None]:
    """Hold the database's load lock: a lock file beside SQLite, an advisory lock on PostgreSQL."""
    if engine.dialect.name == "postgresql":
        with _advisory_lock(engine, wait=wait):
            yield
        return
    database = engine.url.database
    if not database or database == ":memory:":
        yield
        return
    with _file_lock(Path(f"{database}.lock"), wait=wait):
        yield


@contextmanager
def _file_lock(path: Path, *, wait: bool) -> Iterator[None]:
    """An exclusive flock on a file; released by the OS even if the process is killed."""
    handle = path.open("a+")
    try:
        flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(handle, flags)
        except BlockingIOError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise LockedError(
                f"another `etl run` is loading this database ({holder}); "
                "wait for it to finish, or pass --wait to queue behind it"
            ) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}")
        handle.flush()
        yield
    finally:
        handle.close()


@contextmanager
def _advisory_lock(engine: Engine, *, wait: bool) -> Iterator[None]:
    """A session-level advisory lock, held on its own connection for the whole run."""
    with engine.connect() as connection:
        if wait:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": LOCK_KEY})
        elif not connection.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": LOCK_KEY}):
            raise LockedError(
                "another `etl run` is loading this database; "
                "wait for it to finish, or pass --wait to queue behind it"
            )
        connection.commit()
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": LOCK_KEY})
            connection.commit()

"""The `runs` table: one row per `etl run`, written as it starts and as it ends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from sqlalchemy import Connection, Engine, select, update

from etl.load import schema as s
from etl.load.backend import backend_of
from etl.load.locks import RunLock
from etl.load.writer import now
from etl.models import Reject, RunReport


def start_run(engine: Engine, options: dict[str, Any], lock: RunLock) -> tuple[int, int]:
    """Record a new run as `running` (committed at once, so an interrupted run stays visible),
    marking `running` runs whose process is gone as interrupted. Returns the run's id and how
    many runs were found interrupted. On PostgreSQL this happens on the run lock's connection,
    which takes the new run's own lock before the row becomes visible to other loaders."""
    with ExitStack() as stack:
        if lock.connection is not None:
            connection = lock.connection
            stack.enter_context(connection.begin())
        else:
            connection = stack.enter_context(engine.begin())
        backend = backend_of(connection)
        running = connection.scalars(select(s.runs.c.id).where(s.runs.c.status == "running"))
        dead = [run_id for run_id in running.all() if backend.run_is_dead(connection, run_id)]
        if dead:
            connection.execute(
                update(s.runs)
                .where(s.runs.c.id.in_(dead))
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
        lock.mark_alive(connection, int(key[0]))
        return int(key[0]), len(dead)


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


def record_rejects(connection: Connection, run_id: int, rejects: Sequence[Reject]) -> None:
    """Keep the first rejects of a source that failed for having too many (its own writes
    rolled back), so that `rejects` shows why."""
    backend_of(connection).insert_rows(
        connection,
        s.rejects,
        ("run_id", "source_path", "position", "reason", "raw"),
        [(run_id, r.source, r.position, r.reason, r.raw) for r in rejects],
    )

"""What a file's sightings decide when they change: the venue, year and status its papers
show, and which papers are seen nowhere any more (removed without racing other loaders)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, and_, case, delete, func, or_, select, update

from etl.load import schema as s
from etl.load.bulk import chunks
from etl.load.changes import ChangeLog, record_removals


def drop_stale(
    connection: Connection, source_id: int, run_id: int, changes: ChangeLog | None = None
) -> tuple[int, int]:
    """Drop the sightings of a source that this run did not see again, set the venue, year
    and status of the papers it holds or held, and remove those seen nowhere else any more;
    (removed, deferred): see `remove_unseen_papers`. What changed is recorded in `changes`
    (a log of its own when none is given)."""
    changes = changes or ChangeLog(connection, run_id, source_id)
    watch = changes.before_finish()
    stale = and_(s.paper_sources.c.source_id == source_id, s.paper_sources.c.run_id != run_id)
    left = select(s.paper_sources.c.paper_pk).where(stale)
    seen_elsewhere = select(1).where(s.paper_sources.c.paper_pk == s.papers.c.pk, ~stale)
    candidates = list(
        connection.execute(
            select(s.papers.c.pk).where(s.papers.c.pk.in_(left), ~seen_elsewhere.exists())
        ).scalars()
    )
    derive_sighting_values(connection, source_id, run_id)
    connection.execute(delete(s.paper_sources).where(stale))
    removed = remove_unseen_papers(connection, candidates)
    changes.after_finish(watch)
    return removed


def forget_source(connection: Connection, source_id: int, run_id: int) -> tuple[int, int]:
    """Remove a source whose file is gone: its sightings, the papers seen nowhere else, and
    its row; (removed, deferred) as `drop_stale`."""
    removed, deferred = drop_stale(connection, source_id, run_id)
    connection.execute(delete(s.sources).where(s.sources.c.id == source_id))
    return removed, deferred


PREPRINT_VENUES = ("arxiv", "corr")


def derive_sighting_values(connection: Connection, source_id: int, run_id: int) -> None:
    """Set the venue, year and status of the papers a source holds or held from their
    sightings that remain: an accepted one's (status not reject, withdrawn or desk reject),
    else a preprint's (arXiv, CoRR), then one that names a venue, then the latest year's;
    among those, the smallest venue and status, so that the load order never decides."""
    live = s.paper_sources.alias("live")
    current = or_(live.c.source_id != source_id, live.c.run_id == run_id)
    status = func.lower(func.coalesce(live.c.status, ""))
    refused = or_(status.like("%reject%"), status.like("%withdr%"))
    # CoRR is arXiv's name in DBLP and in the BibTeX exported from it: a preprint venue
    preprint = or_(status.like("%preprint%"), func.lower(live.c.venue).in_(PREPRINT_VENUES))
    order = (
        case((refused, 2), (preprint, 1), else_=0),
        case((live.c.venue.is_(None), 1), else_=0),
        func.coalesce(live.c.year, 0).desc(),
        func.coalesce(live.c.venue, ""),
        func.coalesce(live.c.status, ""),
    )

    def derived(column: str) -> Any:
        return (
            select(live.c[column])
            .where(live.c.paper_pk == s.papers.c.pk, current)
            .order_by(*order)
            .limit(1)
            .scalar_subquery()
        )

    values = {name: derived(name) for name in ("venue", "year", "status")}
    touched = select(s.paper_sources.c.paper_pk).where(s.paper_sources.c.source_id == source_id)
    differs = or_(*(s.papers.c[name].is_distinct_from(v) for name, v in values.items()))
    lock_in_order(connection, s.papers.c.pk.in_(touched), differs)
    connection.execute(update(s.papers).where(s.papers.c.pk.in_(touched), differs).values(values))


def papers_seen_in(connection: Connection, source_id: int) -> set[int]:
    """Row numbers of the papers a source holds sightings of."""
    query = select(s.paper_sources.c.paper_pk).where(s.paper_sources.c.source_id == source_id)
    return set(connection.execute(query).scalars())


def lock_in_order(connection: Connection, *where: Any) -> None:
    """Lock the papers about to be updated (those matching `where`) in row-number order
    (PostgreSQL), so that loaders updating overlapping papers queue instead of deadlocking."""
    if connection.dialect.name == "postgresql":
        query = select(s.papers.c.pk).where(*where).order_by(s.papers.c.pk)
        connection.execute(query.with_for_update(key_share=True)).all()  # FOR NO KEY UPDATE


def remove_unseen_papers(connection: Connection, candidates: Sequence[int]) -> tuple[int, int]:
    """Delete the candidate papers that have no sighting left; (removed, deferred).

    On PostgreSQL another loader may be adding a sighting of a candidate in a transaction
    not committed yet: it holds a key-share lock on the paper (its foreign key). Each candidate
    is locked FOR UPDATE, skipping those another transaction holds, and the absence of any
    sighting is checked again in a new statement, which sees every sighting committed since;
    while the lock is held nobody can add one. A skipped paper is deferred: the run's last
    step removes papers without sightings once no loader is mid-source (`remove_all_unseen`).
    """
    if not candidates:
        return 0, 0
    locked: list[int] = []
    for part in chunks(sorted(candidates)):
        query = select(s.papers.c.pk).where(s.papers.c.pk.in_(part)).order_by(s.papers.c.pk)
        if connection.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        locked.extend(connection.execute(query).scalars())
    removed = 0
    for part in chunks(locked):
        result = connection.execute(
            delete(s.papers).where(s.papers.c.pk.in_(part), ~_has_sighting())
        )
        removed += result.rowcount or 0
    return removed, len(candidates) - len(locked)


def remove_all_unseen(connection: Connection, run_id: int | None = None) -> int:
    """Delete every paper with no sighting left (run where no loader is mid-source); with a
    run, recorded as removed by it."""
    if run_id is not None:
        record_removals(connection, run_id, ~_has_sighting())
    result = connection.execute(delete(s.papers).where(~_has_sighting()))
    return result.rowcount or 0


def _has_sighting() -> Any:
    return select(1).where(s.paper_sources.c.paper_pk == s.papers.c.pk).exists()

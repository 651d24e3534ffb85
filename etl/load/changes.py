"""Change events: what a run changed, written in the transaction of the change.

The writer calls a source's `ChangeLog` at a few points: after inserting papers, around
rewriting changed ones (title, abstract, authors, code and project links compared before and
after), and around the end of a source, where its sightings decide the venue, year and status
of its papers and remove the papers seen nowhere else. Only what differs is written, so a load
that changes nothing records nothing.

A run that starts on an empty database (a first load) or clears it (`--full-refresh`) records
itself as one event instead of one per paper: everything in it is new.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, select

from etl.load import schema as s
from etl.load.backend import backend_of
from etl.load.bulk import chunks
from etl.models import QUIET_CHANGE_KINDS, PaperRows

MAX_VALUE_CHARS = 1000
CUT_MARK = "…"
LABEL_CHARS = 90  # an untitled paper's label: its abstract's opening, as paper_labels cuts it
LINK_KINDS = ("code", "project")  # the links whose arrival or loss is an event
EVENT_COLUMNS = (
    "run_id",
    "paper_pk",
    "paper_id",
    "label",
    "venue",
    "year",
    "kind",
    "field",
    "old_value",
    "new_value",
    "created_at",
)
NO_DETAIL = (None, None, None)  # an event without field, old or new value
# papers.pk, papers.id, label, venue, year, kind, field, old value, new value
Event = tuple[int | None, str | None, str | None, str | None, int | None, str, str | None, Any, Any]


def bounded(value: object) -> str | None:
    """A value as stored in an event: text of at most MAX_VALUE_CHARS, marked where cut."""
    if value is None:
        return None
    text = str(value)
    if len(text) <= MAX_VALUE_CHARS:
        return text
    return text[: MAX_VALUE_CHARS - len(CUT_MARK)] + CUT_MARK


def label_of(paper_id: str, title: str | None, abstract: str | None) -> str:
    """A paper's label at the time of the event: its title, else its abstract's opening."""
    if title and title.strip():
        return title.strip()
    if abstract and abstract.strip():
        opening = abstract.strip()
        return opening if len(opening) <= LABEL_CHARS else opening[:LABEL_CHARS] + CUT_MARK
    return paper_id


def _label_column() -> Any:
    """The label, computed by the database (no abstract leaves it whole)."""
    p = s.papers.c
    return func.coalesce(
        func.nullif(func.trim(p.title), ""), func.substr(p.abstract, 1, LABEL_CHARS), p.id
    )


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def write_events(connection: Connection, run_id: int, events: Iterable[Event]) -> int:
    """Insert events (values bounded); how many."""
    at = now()
    rows = [
        (run_id, pk, pid, label, venue, year, kind, name, bounded(old), bounded(new), at)
        for pk, pid, label, venue, year, kind, name, old, new in events
    ]
    backend_of(connection).insert_rows(connection, s.change_events, EVENT_COLUMNS, rows)
    return len(rows)


def record_run_start(connection: Connection, run_id: int, full_refresh: bool) -> None:
    """A full refresh, or a run that starts on a database without papers, as one event."""
    if full_refresh:
        kind = "full_refresh"
    elif connection.execute(select(s.papers.c.pk).limit(1)).first() is None:
        kind = "first_load"
    else:
        return
    write_events(connection, run_id, [(None, None, None, None, None, kind, *NO_DETAIL)])


def is_quiet(connection: Connection, run_id: int) -> bool:
    """Whether the run records itself as one event (a first load, a full refresh)."""
    c = s.change_events.c
    query = select(c.id).where(c.run_id == run_id, c.kind.in_(QUIET_CHANGE_KINDS)).limit(1)
    return connection.execute(query).first() is not None


def record_removals(connection: Connection, run_id: int, where: Any) -> None:
    """Papers about to be deleted (those matching `where`) as removed, unless the run is quiet."""
    if is_quiet(connection, run_id):
        return
    p = s.papers.c
    query = select(p.pk, p.id, _label_column(), p.venue, p.year).where(where)
    rows = connection.execute(query).all()
    write_events(connection, run_id, [(*row, "paper_removed", *NO_DETAIL) for row in rows])


def paper_state(paper: PaperRows) -> dict[str, Any]:
    """The values of a derived paper that events compare (links: code and project URLs)."""
    return {
        "id": paper.id,
        "title": paper.title,
        "abstract": paper.abstract,
        "authors": "; ".join(paper.authors) or None,
        "venue": paper.venue,
        "year": paper.year,
        "status": paper.status,
    }


def _links(paper: PaperRows) -> set[tuple[str, str]]:
    return {(kind, url) for url, _host, kind, *_ in paper.links if kind in LINK_KINDS}


class ChangeLog:
    """Records one source's changes for one run (nothing when the run is quiet)."""

    def __init__(self, connection: Connection, run_id: int, source_id: int) -> None:
        self.connection = connection
        self.run_id = run_id
        self.source_id = source_id
        self.quiet = is_quiet(connection, run_id)
        # Which papers the source held before this run: a paper seen there for the first time
        # is a sighting added (papers.pk, read now, before this run's sightings are written).
        self.sighted_before: set[int] = set()
        if not self.quiet:
            c = s.paper_sources.c
            query = select(c.paper_pk).where(c.source_id == source_id).distinct()
            self.sighted_before = set(connection.execute(query).scalars())
        self.added: set[int] = set()  # papers added: no sighting_added event of their own

    def papers_added(self, papers: Sequence[tuple[int, PaperRows]]) -> None:
        if self.quiet or not papers:
            return
        self.added.update(pk for pk, _ in papers)
        write_events(self.connection, self.run_id, [_added(pk, p) for pk, p in papers])

    def papers_changed(self, changes: Sequence[tuple[int, PaperRows, PaperRows]]) -> None:
        """Events for what re-deriving papers changed: (row number, before, after)."""
        if self.quiet or not changes:
            return
        events: list[Event] = []
        for pk, old, new in changes:
            before, after = paper_state(old), paper_state(new)
            label = label_of(new.id, new.title, new.abstract)
            where = (pk, new.id, label, new.venue, new.year)
            for name, value in after.items():
                if before[name] != value:
                    events.append((*where, "paper_changed", name, before[name], value))
            old_links, new_links = _links(old), _links(new)
            for kind, url in sorted(new_links - old_links):
                events.append((*where, "link_added", kind, None, url))
            for kind, url in sorted(old_links - new_links):
                events.append((*where, "link_removed", kind, url, None))
        write_events(self.connection, self.run_id, events)

    def papers_removed(self, papers: Sequence[tuple[int, PaperRows]]) -> None:
        if self.quiet or not papers:
            return
        events = [
            (
                pk,
                p.id,
                label_of(p.id, p.title, p.abstract),
                p.venue,
                p.year,
                "paper_removed",
                *NO_DETAIL,
            )
            for pk, p in papers
        ]
        write_events(self.connection, self.run_id, events)

    def sightings_moved(self, current: set[int], removed: set[int]) -> None:
        """Events for the papers this source sights for the first time, or no longer (of those
        still stored), once its stale sightings are dropped."""
        if self.quiet:
            return
        path = self.connection.execute(
            select(s.sources.c.path).where(s.sources.c.id == self.source_id)
        ).scalar()
        added = sorted(current - self.sighted_before - self.added)
        gone = sorted(self.sighted_before - current - removed)
        p = s.papers.c
        events: list[Event] = []
        for kind, pks, old, new in (
            ("sighting_added", added, None, path),
            ("sighting_removed", gone, path, None),
        ):
            for part in chunks(pks):
                query = select(p.pk, p.id, _label_column(), p.venue, p.year).where(p.pk.in_(part))
                for row in self.connection.execute(query):
                    events.append((*row, kind, "source", old, new))
        write_events(self.connection, self.run_id, events)


def _added(pk: int, p: PaperRows) -> Event:
    label = label_of(p.id, p.title, p.abstract)
    return (pk, p.id, label, p.venue, p.year, "paper_added", *NO_DETAIL)

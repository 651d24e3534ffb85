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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, select

from etl.load import schema as s
from etl.load.bulk import chunks, insert_rows
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
    insert_rows(connection, s.change_events, EVENT_COLUMNS, rows)
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


@dataclass
class PaperState:
    """What events compare of a stored paper."""

    paper_id: str
    label: str
    venue: str | None
    year: int | None
    values: dict[str, Any]  # field -> value
    links: set[tuple[str, str]] = field(default_factory=set)  # (kind, url)

    def event(
        self, pk: int, kind: str, name: str | None = None, old: Any = None, new: Any = None
    ) -> Event:
        return (pk, self.paper_id, self.label, self.venue, self.year, kind, name, old, new)


Snapshot = dict[int, PaperState]  # by papers.pk


@dataclass
class SourceWatch:
    """A source's papers before its sightings decide (see `ChangeLog.before_finish`)."""

    papers: Snapshot
    current: set[int]  # the papers this run saw in the source


class ChangeLog:
    """Records one source's changes for one run (nothing when the run is quiet)."""

    def __init__(self, connection: Connection, run_id: int, source_id: int) -> None:
        self.connection = connection
        self.run_id = run_id
        self.source_id = source_id
        self.quiet = is_quiet(connection, run_id)
        self.added: set[int] = set()
        # Which papers the source held before this run: a paper seen there for the first time
        # is a sighting added (papers.pk, read now, before this run's sightings are written).
        self.sighted_before: set[int] = set()
        if not self.quiet:
            c = s.paper_sources.c
            query = select(c.paper_pk).where(c.source_id == source_id).distinct()
            self.sighted_before = set(connection.execute(query).scalars())

    def papers_added(self, papers: Sequence[PaperRows], pks: Mapping[str, int]) -> None:
        if self.quiet or not papers:
            return
        self.added.update(pks[p.id] for p in papers)
        write_events(
            self.connection,
            self.run_id,
            [_added(pks[p.id], p) for p in papers],
        )

    def before_update(self, pks: Sequence[int]) -> Snapshot:
        """Title, abstract, authors and links of papers about to be rewritten."""
        if self.quiet or not pks:
            return {}
        return self._text_state(pks)

    def after_update(self, before: Snapshot) -> None:
        """Events for what rewriting the papers changed."""
        if not before:
            return
        after = self._text_state(list(before))
        events: list[Event] = []
        for pk, old in before.items():
            new = after[pk]
            events.extend(_field_events(pk, old, new))
            for kind, url in sorted(new.links - old.links):
                events.append(new.event(pk, "link_added", kind, None, url))
            for kind, url in sorted(old.links - new.links):
                events.append(new.event(pk, "link_removed", kind, url, None))
        write_events(self.connection, self.run_id, events)

    def before_finish(self) -> SourceWatch | None:
        """The venue, year and status of the source's papers before its sightings decide them,
        and which of them this run saw (before the stale sightings are dropped)."""
        if self.quiet:
            return None
        c = s.paper_sources.c
        current_query = (
            select(c.paper_pk)
            .where(c.source_id == self.source_id, c.run_id == self.run_id)
            .distinct()
        )
        current = set(self.connection.execute(current_query).scalars())
        held = (current | self.sighted_before) - self.added
        return SourceWatch(self._sighting_state(sorted(held)), current)

    def after_finish(self, watch: SourceWatch | None) -> None:
        """Events for the papers removed, the venue, year and status changed, the sightings
        added and removed."""
        if watch is None:
            return
        after = self._sighting_state(list(watch.papers))
        path = self.connection.execute(
            select(s.sources.c.path).where(s.sources.c.id == self.source_id)
        ).scalar()
        events: list[Event] = []
        for pk, old in watch.papers.items():
            new = after.get(pk)
            if new is None:
                events.append(old.event(pk, "paper_removed"))
                continue
            events.extend(_field_events(pk, old, new))
            if pk in watch.current and pk not in self.sighted_before:
                events.append(new.event(pk, "sighting_added", "source", None, path))
            elif pk not in watch.current and pk in self.sighted_before:
                events.append(new.event(pk, "sighting_removed", "source", path, None))
        write_events(self.connection, self.run_id, events)

    def _sighting_state(self, pks: Sequence[int]) -> Snapshot:
        p = s.papers.c
        state: Snapshot = {}
        for part in chunks(pks):
            query = select(p.pk, p.id, _label_column(), p.venue, p.year, p.status).where(
                p.pk.in_(part)
            )
            for pk, pid, label, venue, year, status in self.connection.execute(query):
                values = {"venue": venue, "year": year, "status": status}
                state[pk] = PaperState(pid, label, venue, year, values)
        return state

    def _text_state(self, pks: Sequence[int]) -> Snapshot:
        p, pa, a = s.papers.c, s.paper_authors.c, s.authors.c
        pl, li = s.paper_links.c, s.links.c
        state: Snapshot = {}
        for part in chunks(pks):
            query = select(p.pk, p.id, p.title, p.abstract, p.venue, p.year).where(p.pk.in_(part))
            for pk, pid, title, abstract, venue, year in self.connection.execute(query):
                values = {"title": title, "abstract": abstract, "authors": []}
                state[pk] = PaperState(pid, label_of(pid, title, abstract), venue, year, values)
            authors = (
                select(pa.paper_pk, a.name)
                .join_from(s.paper_authors, s.authors, a.id == pa.author_id)
                .where(pa.paper_pk.in_(part))
                .order_by(pa.paper_pk, pa.position)
            )
            for pk, name in self.connection.execute(authors):
                state[pk].values["authors"].append(name)
            links = (
                select(pl.paper_pk, li.kind, li.url)
                .join_from(s.paper_links, s.links, li.id == pl.link_id)
                .where(pl.paper_pk.in_(part), li.kind.in_(LINK_KINDS))
            )
            for pk, kind, url in self.connection.execute(links):
                state[pk].links.add((kind, url))
        for paper in state.values():
            paper.values["authors"] = "; ".join(paper.values["authors"]) or None
        return state


def _added(pk: int, p: PaperRows) -> Event:
    label = label_of(p.id, p.title, p.abstract)
    return (pk, p.id, label, p.venue, p.year, "paper_added", *NO_DETAIL)


def _field_events(pk: int, old: PaperState, new: PaperState) -> list[Event]:
    """A `paper_changed` event per field whose value differs."""
    return [
        new.event(pk, "paper_changed", name, old.values[name], value)
        for name, value in new.values.items()
        if old.values[name] != value
    ]

"""Sightings: where each paper was seen, with the values that source gave (`paper_sources`).

A sighting is a file and a position in it. Its values (`SightingValues`: the record's content
hash, venue, year and status; the whole record as JSON) are what its paper is derived from
(etl.load.derive): a paper changes only when the set of distinct values its sightings give
changes, so a second copy of a record changes nothing. A source's sightings this run did not
see again are stale: the source ends by dropping them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection, and_, bindparam, delete, func, select

from etl.load import schema as s
from etl.load.backend import Backend
from etl.load.bulk import chunks
from etl.load.citations import write_edges
from etl.models import PaperRows


class SightingValues(NamedTuple):
    """What a sighting says that its paper is derived from (beside its record's JSON)."""

    content_hash: str
    venue: str | None
    year: int | None
    status: str | None

    @classmethod
    def of(cls, record: PaperRows) -> SightingValues:
        return cls(record.content_hash, record.venue, record.year, record.status)


SIGHTING_COLUMNS = (
    "paper_pk",
    "source_id",
    "position",
    "run_id",
    "venue",
    "year",
    "status",
    "content_hash",
    "record",
    "cited_by_count",
)
c = s.paper_sources.c


class Sightings:
    """One source's sightings, and the sightings of the papers they touch."""

    def __init__(self, connection: Connection, backend: Backend, source_id: int, run_id: int):
        self.connection = connection
        self.backend = backend
        self.source_id = source_id
        self.run_id = run_id

    def stale(self) -> Any:
        """The source's sightings this run has not seen (again)."""
        return and_(c.source_id == self.source_id, c.run_id != self.run_id)

    def at_positions(self, positions: Sequence[int]) -> dict[int, list[tuple[int, SightingValues]]]:
        """The source's stored sightings at these positions: (paper, values) by position."""
        found: dict[int, list[tuple[int, SightingValues]]] = {}
        for part in chunks(sorted(set(positions))):
            query = select(c.position, c.paper_pk, c.content_hash, c.venue, c.year, c.status).where(
                c.source_id == self.source_id, c.position.in_(part)
            )
            for position, pk, *values in self.connection.execute(query):
                found.setdefault(position, []).append((pk, SightingValues(*values)))
        return found

    def values_of(
        self, pks: Iterable[int], *, without_stale: bool = False
    ) -> dict[int, Counter[SightingValues]]:
        """How many sightings of each paper give each distinct values (counted by the database,
        however many copies a paper has)."""
        found: dict[int, Counter[SightingValues]] = {}
        for part in chunks(sorted(set(pks))):
            where = [c.paper_pk.in_(part)]
            if without_stale:
                where.append(~self.stale())
            query = (
                select(c.paper_pk, c.content_hash, c.venue, c.year, c.status, func.count())
                .where(*where)
                .group_by(c.paper_pk, c.content_hash, c.venue, c.year, c.status)
            )
            for pk, *values, count in self.connection.execute(query):
                found.setdefault(pk, Counter())[SightingValues(*values)] = count
        return found

    def records_of(self, pks: Iterable[int]) -> dict[int, dict[SightingValues, PaperRows]]:
        """One record of each paper's distinct sighting values (each record read once)."""
        found: dict[int, dict[SightingValues, PaperRows]] = {}
        for part in chunks(sorted(set(pks))):
            query = select(
                c.paper_pk, c.content_hash, c.venue, c.year, c.status, c.position, c.record
            ).where(c.paper_pk.in_(part))
            for pk, content_hash, venue, year, status, position, record in self.connection.execute(
                query
            ):
                values = SightingValues(content_hash, venue, year, status)
                held = found.setdefault(pk, {})
                if values not in held:
                    held[values] = PaperRows.from_record_json(
                        record, venue, year, status, content_hash, position
                    )
        return found

    def stale_papers(self) -> list[int]:
        """The papers the source's stale sightings name."""
        query = select(c.paper_pk).where(self.stale()).distinct()
        return sorted(self.connection.execute(query).scalars())

    def write(self, rows: Sequence[tuple[int, PaperRows]], *, first_load: bool) -> None:
        """Store sightings with this run's stamp and their records' values, and the edges
        their references give (etl.load.citations)."""
        values = [
            (
                pk,
                self.source_id,
                r.position,
                self.run_id,
                r.venue,
                r.year,
                r.status,
                r.content_hash,
                r.record_json(),
                r.cited_by_count,
            )
            for pk, r in rows
        ]
        if first_load:  # nothing to conflict with: a plain insert (COPY on PostgreSQL)
            self.backend.insert_rows(self.connection, s.paper_sources, SIGHTING_COLUMNS, values)
        else:
            self.backend.upsert_rows(
                self.connection,
                s.paper_sources,
                SIGHTING_COLUMNS,
                values,
                conflict=["paper_pk", "source_id", "position"],
                update=SIGHTING_COLUMNS[3:],
            )
        write_edges(self.connection, self.backend, self.source_id, rows, first_load=first_load)

    def stamp(self, sighted: Sequence[tuple[int, int]]) -> None:
        """Mark unchanged sightings (paper, position) as seen by this run."""
        if not sighted:
            return
        self.connection.execute(
            s.paper_sources.update()
            .where(
                c.paper_pk == bindparam("b_pk"),
                c.source_id == self.source_id,
                c.position == bindparam("b_position"),
            )
            .values(run_id=self.run_id),
            [{"b_pk": pk, "b_position": position} for pk, position in sighted],
        )

    def move(self, absorbed: int, survivor: int) -> None:
        """Make a paper's sightings another's (where both have one at a place, the other's
        stays)."""
        other = s.paper_sources.alias("other")
        both = (
            select(1)
            .where(
                other.c.paper_pk == survivor,
                other.c.source_id == c.source_id,
                other.c.position == c.position,
            )
            .exists()
        )
        self.connection.execute(delete(s.paper_sources).where(c.paper_pk == absorbed, both))
        self.connection.execute(
            s.paper_sources.update().where(c.paper_pk == absorbed).values(paper_pk=survivor)
        )

    def drop_stale(self) -> None:
        """Forget the source's sightings this run did not see."""
        self.connection.execute(delete(s.paper_sources).where(self.stale()))

    def papers_seen(self) -> int:
        """How many papers this run saw in the source."""
        query = select(func.count(c.paper_pk.distinct())).where(
            c.source_id == self.source_id, c.run_id == self.run_id
        )
        return int(self.connection.execute(query).scalar_one())

    def papers_held(self) -> set[int]:
        """The papers the source holds sightings of."""
        query = select(c.paper_pk).where(c.source_id == self.source_id).distinct()
        return set(self.connection.execute(query).scalars())


def has_sighting() -> Any:
    """Whether a paper has any sighting left (a correlated EXISTS on `papers`)."""
    return select(1).where(c.paper_pk == s.papers.c.pk).exists()

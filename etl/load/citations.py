"""Who cites whom (`citations`): the references each sighting gives, and the cited papers
they lead to.

An edge is a value its sighting gives, like a title: it is written with the sighting,
replaced when the sighting's record changes, and leaves with it (the table's key into
`paper_sources` cascades a delete, and a merge's move of a sighting to another paper). So the
table is the union of the edges of the sightings the database holds: any load order gives
the same rows, and removing a file removes its edges and nothing else.

The cited paper (`cited_paper_pk`) is what the cited key names now: the paper holding that
identity key (the one with the smallest id, should several hold it). `resolve` sets it where
it differs, so an edge resolves when the cited paper arrives (in the same run or a later one)
and un-resolves when it leaves or stops holding the key. A source resolves at its end;
rows another loader holds at that moment are left to the run's end, which resolves again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, and_, bindparam, delete, select, update

from etl.load import schema as s
from etl.load.backend import Backend, backend_of
from etl.models import PaperRows

EDGE_COLUMNS = ("paper_pk", "source_id", "position", "cited_key", "raw")
TEXT_PREFIX = "ref:"  # a reference known by its text only: it names no paper
c = s.citations.c


def edge_rows(source_id: int, rows: Sequence[tuple[int, PaperRows]]) -> list[tuple[Any, ...]]:
    """The citations rows of sightings (paper, record) of one source."""
    return [
        (pk, source_id, record.position, key, text)
        for pk, record in rows
        for key, text in record.references
    ]


def write_edges(
    connection: Connection,
    backend: Backend,
    source_id: int,
    rows: Sequence[tuple[int, PaperRows]],
    *,
    first_load: bool,
) -> None:
    """The edges of sightings just written: their previous edges (a record changed at its
    place) replaced."""
    if not first_load and rows:
        connection.execute(
            delete(s.citations).where(
                c.paper_pk == bindparam("b_pk"),
                c.source_id == source_id,
                c.position == bindparam("b_position"),
            ),
            [{"b_pk": pk, "b_position": record.position} for pk, record in rows],
        )
    backend.insert_rows(connection, s.citations, EDGE_COLUMNS, edge_rows(source_id, rows))


def holders() -> Any:
    """Each identity key with the paper it names: of the papers holding it, the one with the
    smallest id (a derived table, joined once, where a correlated subquery per edge would
    walk the papers in id order on PostgreSQL)."""
    k, p = s.paper_keys.c, s.papers.c
    other_key, other_paper = s.paper_keys.alias("other_key"), s.papers.alias("other_paper")
    smaller = (
        select(1)
        .select_from(other_key.join(other_paper, other_paper.c.pk == other_key.c.paper_pk))
        .where(other_key.c.key == k.key, other_paper.c.id < p.id)
        .exists()
    )
    return (
        select(k.key, k.paper_pk)
        .join(s.papers, p.pk == k.paper_pk)
        .where(~k.key.startswith(TEXT_PREFIX), ~smaller)
        .subquery("holders")
    )


def resolve(connection: Connection, backend: Backend) -> int:
    """Point each edge at the paper its cited key names now (or at none); the edges changed.
    Rows another loader holds are skipped (the run's end resolves them)."""
    holder = holders()
    stale = (
        select(c.paper_pk, c.source_id, c.position, c.cited_key, holder.c.paper_pk)
        .select_from(s.citations.outerjoin(holder, holder.c.key == c.cited_key))
        .where(
            ~c.cited_key.startswith(TEXT_PREFIX),
            c.cited_paper_pk.is_distinct_from(holder.c.paper_pk),
        )
        .order_by(c.paper_pk, c.source_id, c.position, c.cited_key)
    )
    changes = [
        {"b_pk": pk, "b_source": source, "b_position": position, "b_key": key, "b_now": now}
        for pk, source, position, key, now in connection.execute(
            backend.skipping_held(stale, of=s.citations)
        )
    ]
    if changes:
        connection.execute(
            update(s.citations)
            .where(
                and_(
                    c.paper_pk == bindparam("b_pk"),
                    c.source_id == bindparam("b_source"),
                    c.position == bindparam("b_position"),
                    c.cited_key == bindparam("b_key"),
                )
            )
            .values(cited_paper_pk=bindparam("b_now")),
            changes,
        )
    return len(changes)


def resolve_citations(connection: Connection) -> int:
    """`resolve`, on the connection's backend (the run's end)."""
    return resolve(connection, backend_of(connection))

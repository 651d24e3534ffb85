"""A paper's child rows, declared once: what each table holds, made from a derived paper.

The writer, the deletes and the change log iterate `CHILDREN`; a new extracted field is one
declaration here (and a column in the schema). Children that name a lookup row (an author, a
link, a listed term) or a method are staged first, with the lookup's own values in place of
its id, in temporary tables of the source's transaction; `ChildRows.flush` then adds the
lookup rows not stored yet and the children, each table in one set-based statement. A
source that shares the database with other loaders flushes once, at its end, holding the
right to add lookup rows (the backend's `hold_lookups`): so what a source writes commits or
rolls back with it, and loaders never wait on each other's lookup rows mid-source.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    delete,
    select,
    text,
)

from etl.load import schema as s
from etl.load.backend import Backend
from etl.load.bulk import chunks
from etl.load.methods import MENTION_COLUMNS, Mention, MethodWriter, staged_mentions
from etl.models import PaperRows

ChildRow = tuple[Any, ...]

# Temporary tables: not part of the schema (never migrated), one set per connection.
stage_metadata = MetaData()


@dataclass(frozen=True)
class Lookup:
    """A lookup table a child refers to: its columns a staged row gives (the first is its
    unique key) and the child's column holding its id. Where sources give one key different
    values of another column, the value kept is the one that sorts first, by the column's
    `ranked` order where it has one, else as text (a missing value last): so the order sources
    arrive in never decides."""

    table: Table
    columns: tuple[str, ...]
    reference: str
    ranked: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (column, its values, best first)

    def rank(self, column: str, value: str) -> str:
        """SQL for a column's value as it sorts: its rank, or the value itself."""
        order = dict(self.ranked).get(column)
        if order is None:
            return value
        cases = " ".join(f"WHEN '{name}' THEN {number}" for number, name in enumerate(order))
        return f"(CASE {value} {cases} ELSE {len(order)} END)"

    def unrank(self, column: str, rank: str) -> str:
        """SQL for the value of a rank `rank` computes (the inverse of `rank`)."""
        order = dict(self.ranked).get(column)
        if order is None:
            return rank
        cases = " ".join(f"WHEN {number} THEN '{name}'" for number, name in enumerate(order))
        return f"(CASE {rank} {cases} END)"


@dataclass(frozen=True)
class Child:
    """A child table: its columns as staged or inserted, and its rows for a paper."""

    table: Table
    columns: tuple[str, ...]
    rows: Callable[[int, PaperRows], Iterable[ChildRow]]
    lookup: Lookup | None = None

    @property
    def stage(self) -> Table:
        """The temporary table this child's rows wait in before a flush."""
        return _stage_table(self)


def author_rows(pk: int, p: PaperRows) -> list[ChildRow]:
    """(paper, position, homepage, name): one per author slot, repeats kept."""
    return [
        (pk, position, p.author_homepages[position - 1] if p.author_homepages else None, name)
        for position, name in enumerate(p.authors, 1)
    ]


def link_rows(pk: int, p: PaperRows) -> list[ChildRow]:
    """(paper, found in, url, host, kind, owner, repo): one per URL."""
    rows: dict[str, ChildRow] = {}
    for url, host, kind, owner, repo, found_in in p.links:
        rows.setdefault(url, (pk, found_in, url, host, kind, owner, repo))
    return list(rows.values())


def listed_rows(pk: int, p: PaperRows) -> list[ChildRow]:
    """(paper, position, key, kind, name, detail): one per term, at its first place."""
    rows: dict[str, ChildRow] = {}
    for position, (kind, name, detail) in enumerate(p.listed, 1):
        key = f"{kind}:{name}"
        rows.setdefault(key, (pk, position, key, kind, name, detail))
    return list(rows.values())


def acronym_rows(pk: int, p: PaperRows) -> list[ChildRow]:
    return list(dict.fromkeys((pk, acronym, expansion) for acronym, expansion in p.acronyms))


def topic_rows(pk: int, p: PaperRows) -> list[ChildRow]:
    return [(pk, slug, score, evidence) for slug, score, evidence in p.topics]


def task_rows(pk: int, p: PaperRows) -> list[ChildRow]:
    return [(pk, name, score, evidence) for name, score, evidence in p.tasks]


def mentions_of(pk: int, p: PaperRows) -> list[Mention]:
    """One per mention of a named artifact, keyed by its normalised name; two mentions with
    one name are one (introduced if either is, with the names of both)."""
    found: dict[str, Mention] = {}
    for position, (name, kind, role, surface, aliases, keys) in enumerate(p.methods, 1):
        if not keys:
            continue
        pairs = tuple(zip(keys, (name, *aliases), strict=False))
        held = found.get(keys[0])
        if held is None:
            found[keys[0]] = Mention(pk, keys[0], name, kind, role, surface, pairs, position)
            continue
        known = {key for key, _ in held.aliases}
        more = held.aliases + tuple(pair for pair in pairs if pair[0] not in known)
        if role == "introduced" and held.role != "introduced":
            held = held._replace(kind=kind, role=role, surface=surface)
        found[keys[0]] = held._replace(aliases=more)
    return list(found.values())


def mention_rows(pk: int, p: PaperRows) -> list[ChildRow]:
    """The mentions as staged rows (MENTION_COLUMNS but the method; names as JSON)."""
    return [
        (*m[:6], json.dumps(m.aliases, ensure_ascii=False), m.position) for m in mentions_of(pk, p)
    ]


# Link kinds, the most telling first: a URL one source gives as its code and another only
# cites in an abstract is the code's.
LINK_KINDS = ("code", "project", "paper", "data", "other")

CHILDREN = (
    Child(
        s.paper_authors,
        ("paper_pk", "position", "homepage", "name"),
        author_rows,
        Lookup(s.authors, ("name",), "author_id"),
    ),
    Child(
        s.paper_links,
        ("paper_pk", "found_in", "url", "host", "kind", "repo_owner", "repo_name"),
        link_rows,
        Lookup(
            s.links,
            ("url", "host", "kind", "repo_owner", "repo_name"),
            "link_id",
            ranked=(("kind", LINK_KINDS),),
        ),
    ),
    Child(
        s.paper_listed_terms,
        ("paper_pk", "position", "key", "kind", "name", "detail"),
        listed_rows,
        Lookup(s.listed_terms, ("key", "kind", "name", "detail"), "term_id"),
    ),
    Child(s.acronyms, ("paper_pk", "acronym", "expansion"), acronym_rows),
    Child(s.paper_topics, ("paper_pk", "topic_slug", "score", "evidence"), topic_rows),
    Child(s.paper_tasks, ("paper_pk", "task_name", "score", "evidence"), task_rows),
)
# Mentions are written with the methods their names lead to (etl.load.methods); a source
# sharing the database stages them, until its last step.
MENTIONS = Child(s.paper_methods, MENTION_COLUMNS[:-1], mention_rows)
STAGED = tuple(child for child in (*CHILDREN, MENTIONS) if child.lookup or child is MENTIONS)


STAGE_CHUNK = 900  # papers whose staged mentions are given their methods at a time
_STAGE_TYPES = {"paper_pk": BigInteger, "position": Integer, "score": Float}


def _stage_table(child: Child) -> Table:
    """The temporary table for a child's staged rows (made once per process)."""
    name = f"stage_{child.table.name}"
    if name not in stage_metadata.tables:
        Table(
            name,
            stage_metadata,
            *(Column(c, _STAGE_TYPES.get(c, Text)()) for c in child.columns),
            prefixes=["TEMPORARY"],
        )
    return stage_metadata.tables[name]


class ChildRows:
    """A source's child rows: direct ones inserted at once, staged ones at a flush (the
    lookups' at each batch's end, or when a source that shares the database ends; mentions
    as they come, or then)."""

    def __init__(self, connection: Connection, backend: Backend, *, deferred: bool) -> None:
        self.connection = connection
        self.backend = backend
        self.deferred = deferred
        self.methods = MethodWriter(connection, backend, shared=deferred)
        for child in STAGED:
            child.stage.create(connection, checkfirst=True)
            connection.execute(delete(child.stage))
        self.links = 0  # rows written, for the run's summary

    def add(self, papers: Sequence[tuple[int, PaperRows]]) -> None:
        """Write (or stage) every child row of these papers."""
        for child in CHILDREN:
            rows = [row for pk, paper in papers for row in child.rows(pk, paper)]
            if not rows:
                continue
            target = child.stage if child in STAGED else child.table
            self.backend.insert_rows(self.connection, target, child.columns, rows)
            if child.table is s.paper_links:
                self.links += len(rows)
        if self.deferred:
            rows = [row for pk, paper in papers for row in mention_rows(pk, paper)]
            self.backend.insert_rows(self.connection, MENTIONS.stage, MENTIONS.columns, rows)
        else:
            self.methods.add([m for pk, paper in papers for m in mentions_of(pk, paper)])

    def remove(self, pks: Sequence[int]) -> None:
        """Delete the child rows of these papers, stored or staged (the methods their stored
        mentions name are noted, to count again)."""
        self.dropping(pks)
        for part in chunks(sorted(pks)):
            for child in (*CHILDREN, MENTIONS):
                self.connection.execute(delete(child.table).where(child.table.c.paper_pk.in_(part)))

    def dropping(self, pks: Sequence[int]) -> None:
        """Before papers are deleted (their stored children go with them): their staged
        children are dropped, and the methods their stored mentions name noted."""
        c = s.paper_methods.c
        for part in chunks(sorted(pks)):
            leaving = select(c.method_id, c.aliases).where(c.paper_pk.in_(part))
            self.methods.leaving(self.connection.execute(leaving).all())
            for child in STAGED:
                stage = child.stage
                self.connection.execute(delete(stage).where(stage.c.paper_pk.in_(part)))

    def finish(self) -> None:
        """The source's last writes: staged children with their lookup rows, staged mentions
        with their methods; then the methods that changed are counted again."""
        self.flush_lookups()
        stage = MENTIONS.stage
        staged = sorted(self.connection.execute(select(stage.c.paper_pk).distinct()).scalars())
        for part in chunks(staged, STAGE_CHUNK):  # whole papers at a time
            rows = self.connection.execute(select(stage).where(stage.c.paper_pk.in_(part)))
            self.methods.add(list(staged_mentions(rows)))
        self.connection.execute(delete(stage))
        self.methods.finish()

    def flush_lookups(self) -> None:
        """Add the staged lookup rows not stored yet, then the staged children that name them."""
        for child in STAGED:
            if child.lookup is not None:
                self._flush(child, child.lookup)

    def _flush(self, child: Child, lookup: Lookup) -> None:
        stage, table = child.stage.name, lookup.table.name
        key, *others = lookup.columns
        chosen = "".join(f", {lookup.unrank(c, f'MIN({lookup.rank(c, c)})')}" for c in others)
        update = ", ".join(f"{c} = excluded.{c}" for c in others)
        # a value replaces the stored one when it sorts first (a missing one sorts last)
        better = " OR ".join(
            f"{lookup.rank(c, f'excluded.{c}')} < {lookup.rank(c, f'{table}.{c}')} "
            f"OR ({table}.{c} IS NULL AND excluded.{c} IS NOT NULL)"
            for c in others
        )
        on_conflict = (
            f"ON CONFLICT ({key}) DO UPDATE SET {update} WHERE {better}"
            if others
            else "ON CONFLICT DO NOTHING"
        )
        self.connection.execute(
            text(
                f"INSERT INTO {table} ({', '.join(lookup.columns)}) "
                f"SELECT {key}{chosen} FROM {stage} "
                f"WHERE {key} IS NOT NULL GROUP BY {key} {on_conflict}"
            )
        )
        own = [c for c in child.columns if c not in lookup.columns]
        self.connection.execute(
            text(
                f"INSERT INTO {child.table.name} ({', '.join(own)}, {lookup.reference}) "
                f"SELECT {', '.join(f'st.{c}' for c in own)}, lk.id FROM {stage} AS st "
                f"JOIN {table} AS lk ON lk.{key} = st.{key}"
            )
        )
        self.connection.execute(delete(child.stage))

"""What the writer reads back from the database before writing a batch: stored papers by id
and papers by identity key.

`StoredRows` asks the database each time. `RememberedRows` is for a run that writes alone
into a database that held no papers when it started (SQLite, where the run's lock file keeps
every other writer out): everything the writer could find there, this run wrote, so it keeps
what it wrote in memory and answers from there, with the answers the database would give. The
rows themselves are written exactly as before. A source whose transaction rolls back took its
rows with it: the run then calls `forget`, and every later question goes to the database.
Memory is bounded: past `REMEMBERED_ROWS` rows remembered the run forgets as well, and the rest
of it asks the database, as every later run does (a fresh run's memory would otherwise grow
with its papers: over a gigabyte for a million records).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from sqlalchemy import Connection, exists, select

from etl.load import schema as s
from etl.load.backend import backend_of
from etl.load.bulk import chunks

PaperOwners = dict[str, list[str]]  # identity key -> ids of the papers holding it, by row number
PaperKeySets = defaultdict[str, set[str]]  # paper id -> its identity keys


class StoredPaper(NamedTuple):
    """What the writer needs of a stored paper."""

    pk: int  # papers.pk, its row number
    content_hash: str


# Rows (papers, identity keys) a fresh run remembers at most, so that its memory
# stops growing with the papers it writes; past them the database answers the same questions
# (what the bound costs and holds: benchmarks/HISTORY.md).
REMEMBERED_ROWS = 200_000


class StoredRows:
    """Answers from the database (any backend, any number of loaders)."""

    def papers(self, connection: Connection, ids: Iterable[str]) -> dict[str, StoredPaper]:
        """(row number, content hash) of the stored papers with these ids."""
        columns = (s.papers.c.pk, s.papers.c.content_hash)
        found = backend_of(connection).select_rows(connection, s.papers.c.id, columns, ids)
        return {pid: StoredPaper(pk, content_hash) for pid, (pk, content_hash) in found.items()}

    def has_paper(self, connection: Connection, paper_id: str) -> bool:
        """Whether a paper with this id is stored."""
        query = select(s.papers.c.pk).where(s.papers.c.id == paper_id)
        return connection.execute(query).first() is not None

    def papers_by_keys(
        self, connection: Connection, keys: set[str], ids: set[str], bare: set[str]
    ) -> tuple[PaperOwners, PaperKeySets]:
        """Papers holding any of the keys (key -> paper ids, by row number; the other keys of
        those papers may be listed too), and every key of those papers and of papers holding
        any of the ids (paper id -> keys). Of the keys also in `bare`, only papers without an
        abstract key are wanted (see IdentityResolver.resolve); others may be listed too."""
        pk_c, key_c, id_c = s.paper_keys.c.paper_pk, s.paper_keys.c.key, s.papers.c.id
        owners: PaperOwners = defaultdict(list)
        keysets: PaperKeySets = defaultdict(set)
        pks = key_holders(connection, keys, bare)
        for part in chunks(sorted(ids)):  # papers holding the ids (with keys or not)
            for pk, paper_id in connection.execute(
                select(s.papers.c.pk, id_c).where(id_c.in_(part))
            ):
                pks.add(pk)
                keysets[paper_id] = set()
        joined = s.paper_keys.join(s.papers, s.papers.c.pk == pk_c)
        for part in chunks(sorted(pks)):
            rows = connection.execute(
                select(id_c, key_c).select_from(joined).where(pk_c.in_(part)).order_by(pk_c)
            )
            for paper_id, key in rows:
                keysets[paper_id].add(key)
                owners[key].append(paper_id)
        return owners, keysets

    def forget(self) -> None:
        """What was written is no longer all there (a rollback, or papers deleted)."""

    def wrote_papers(self, papers: Mapping[str, StoredPaper]) -> None:
        """Papers inserted or rewritten: id -> (row number, content hash)."""

    def wrote_keys(self, keys: Iterable[tuple[str, str]]) -> None:
        """(paper id, identity key) rows written to `paper_keys` (new or not)."""


class RememberedRows(StoredRows):
    """Answers from what this run wrote, while `active`; from the database once forgotten."""

    def __init__(self) -> None:
        self.active = True
        self._papers: dict[str, StoredPaper] = {}
        self._keys: dict[str, set[str]] = {}  # paper id -> keys
        self._owners: dict[str, list[str]] = {}  # key -> paper ids, in row-number order
        self._bare: dict[str, list[str]] = {}  # title key -> those without an abstract key

    @classmethod
    def start(cls, connection: Connection) -> RememberedRows | None:
        """Memory for a run alone on a database that holds no papers (None otherwise)."""
        if backend_of(connection).concurrent:  # other loaders may write meanwhile
            return None
        if connection.execute(select(s.papers.c.pk).limit(1)).first() is not None:
            return None
        return cls()

    def forget(self) -> None:
        """Stop answering from memory (the database no longer holds all that was written)."""
        self.active = False
        self._papers, self._keys, self._owners, self._bare = {}, {}, {}, {}

    def papers(self, connection: Connection, ids: Iterable[str]) -> dict[str, StoredPaper]:
        if not self.active:
            return super().papers(connection, ids)
        return {pid: self._papers[pid] for pid in ids if pid in self._papers}

    def has_paper(self, connection: Connection, paper_id: str) -> bool:
        if not self.active:
            return super().has_paper(connection, paper_id)
        return paper_id in self._papers

    def papers_by_keys(
        self, connection: Connection, keys: set[str], ids: set[str], bare: set[str]
    ) -> tuple[PaperOwners, PaperKeySets]:
        if not self.active:
            return super().papers_by_keys(connection, keys, ids, bare)
        owners: PaperOwners = defaultdict(list)
        keysets: PaperKeySets = defaultdict(set)
        for key in keys:
            holders = (self._bare if key in bare else self._owners).get(key)
            if holders:
                owners[key] = list(holders)
                for pid in holders:
                    if pid not in keysets:
                        keysets[pid] = set(self._keys[pid])
        for pid in ids:
            if pid in self._papers and pid not in keysets:
                keysets[pid] = set(self._keys.get(pid, ()))
        return owners, keysets

    def wrote_papers(self, papers: Mapping[str, StoredPaper]) -> None:
        if self.active:
            self._papers.update(papers)
            self._bound()

    def wrote_keys(self, keys: Iterable[tuple[str, str]]) -> None:
        if not self.active:
            return
        for pid, key in keys:
            held = self._keys.get(pid)
            if held is None:
                held = self._keys[pid] = set()
            elif key in held:
                continue
            had_abstract = any(k.startswith("abs:") for k in held)
            held.add(key)
            self._hold(self._owners, key, pid)
            if had_abstract:
                continue
            if key.startswith("title:"):
                self._hold(self._bare, key, pid)
            elif key.startswith("abs:"):  # no longer without one: off its titles' bare lists
                for title in held:
                    if title.startswith("title:"):
                        self._bare[title].remove(pid)
        self._bound()

    def _hold(self, owners_by_key: dict[str, list[str]], key: str, pid: str) -> None:
        """List the paper among the holders of the key, in row-number order."""
        owners = owners_by_key.get(key)
        if owners is None:
            owners_by_key[key] = [pid]
        elif self._row_number(owners[-1]) < self._row_number(pid):
            owners.append(pid)  # the usual case: a new paper, numbered above the others
        else:
            bisect.insort(owners, pid, key=self._row_number)

    def _bound(self) -> None:
        """Forget everything once more than REMEMBERED_ROWS rows are remembered: what was
        written is in the database (this run's transaction included), which answers from then
        on."""
        held = len(self._papers) + len(self._owners)
        if held > REMEMBERED_ROWS:
            self.forget()

    def _row_number(self, paper_id: str) -> int:
        return self._papers[paper_id].pk


def key_holders(connection: Connection, keys: set[str], bare: set[str]) -> set[int]:
    """Row numbers of the stored papers holding any of the keys; for the keys also in `bare`,
    only of those without an abstract key (see IdentityResolver.resolve)."""
    pk_c, key_c = s.paper_keys.c.paper_pk, s.paper_keys.c.key
    pks: set[int] = set()
    for part in chunks(sorted(keys - bare)):
        pks.update(connection.execute(select(pk_c).where(key_c.in_(part))).scalars())
    other = s.paper_keys.alias()
    has_abstract = exists().where(
        other.c.paper_pk == pk_c, other.c.key >= "abs:", other.c.key < "abs;"
    )
    for part in chunks(sorted(keys & bare)):
        query = select(pk_c).where(key_c.in_(part), ~has_abstract)
        pks.update(connection.execute(query).scalars())
    return pks

"""Writing transformed records (`PaperRows`): each is a sighting, and papers are derived from
their sightings (etl.load.derive), in set-based writes in the caller's transaction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, bindparam, delete, select, update

from etl.load import schema as s
from etl.load.backend import backend_of
from etl.load.bulk import chunks, highest_id, ids_since
from etl.load.changes import ChangeLog, record_removals
from etl.load.children import ChildRows
from etl.load.citations import resolve
from etl.load.derive import derive
from etl.load.foreign_keys import ForeignKeysCheckedAtEnd
from etl.load.identity import FileKeys, IdentityResolver
from etl.load.known import StoredPaper, StoredRows, key_holders
from etl.load.search_index import BulkSearchIndex
from etl.load.sightings import Sightings, SightingValues, has_sighting
from etl.models import PaperRows, Reject, SourceFile

# The columns of `papers` a paper's derived values fill, in the order of `paper_values`.
PAPER_COLUMNS = (
    "id",
    "venue",
    "year",
    "status",
    "title",
    "title_raw",
    "abstract",
    "abstract_raw",
    "keywords",
    "extra",
    "method_names",
    "content_hash",
)
# The fields of a derived paper its child rows are made from (etl.load.children).
CHILD_FIELDS = (
    "authors",
    "author_homepages",
    "links",
    "methods",
    "acronyms",
    "topics",
    "tasks",
    "listed",
)
_BOUND = tuple(f"b_{name}" for name in PAPER_COLUMNS)
RowNumbers = dict[str, int]  # papers.pk by papers.id, for the papers of a batch


def paper_values(p: PaperRows) -> tuple[object, ...]:
    """A derived paper's `papers` values, in the order of PAPER_COLUMNS."""
    return (
        p.id,
        p.venue,
        p.year,
        p.status,
        p.title,
        p.title_raw,
        p.abstract,
        p.abstract_raw,
        p.keywords,
        p.extra,
        p.method_names,
        p.content_hash,
    )


def now() -> datetime:
    """The current UTC time without tzinfo (stored as ISO text on SQLite)."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class LoadCounts:
    """What loading one source wrote."""

    records: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    links: int = 0
    methods: int = 0
    rejects: int = 0
    # Papers left with no sighting that another loader held at that moment: removed at the
    # end of the run, where no loader can be adding a sighting (remove_all_unseen).
    deferred: int = 0
    # Methods left with no mention while other loaders may be adding some: deleted by the
    # run's tidying.
    orphaned: int = 0
    merged: int = 0  # stored papers a record showed to be one with another

    def add(self, other: LoadCounts) -> None:
        """Accumulate another source's counts (for a run's totals)."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class PaperWriter:
    """Papers kept derived from their sightings while one source's sightings change."""

    def __init__(
        self,
        connection: Connection,
        source_id: int,
        run_id: int,
        stored: StoredRows,
        *,
        deferred: bool,
    ):
        """`deferred`: other loaders write meanwhile, so lookup rows and methods wait for the
        source's last step (etl.load.children)."""
        self.connection = connection
        self.backend = backend_of(connection)
        self.source_id = source_id
        self.run_id = run_id
        self.stored = stored
        self.counts = LoadCounts()
        self.sightings = Sightings(connection, self.backend, source_id, run_id)
        self.children = ChildRows(connection, self.backend, deferred=deferred)
        self.changes = ChangeLog(connection, run_id, source_id)
        self.search_index: BulkSearchIndex | None = None
        self.updated: set[int] = set()  # papers this source re-derived (counted once)

    def merge(self, merged: dict[str, str]) -> dict[str, str]:
        """Make one paper of stored papers a record showed to be one (absorbed id -> surviving
        id): the absorbed papers' sightings move to the survivor, which is derived again from
        them all (its id the strongest of them all), and the absorbed papers are removed.
        The survivors' new ids, by their ids before."""
        stored = self.stored.papers(self.connection, {*merged, *merged.values()})
        pairs = [
            (stored[gone].pk, stored[kept].pk)
            for gone, kept in merged.items()
            if gone in stored and kept in stored
        ]
        if not pairs:
            return {}
        survivors = sorted({kept for _, kept in pairs})
        ids_before = self._ids(survivors)
        before = self.sightings.records_of(survivors)
        absorbed = self.sightings.records_of([gone for gone, _ in pairs])
        for gone, kept in pairs:
            self.sightings.move(gone, kept)
        self.stored.forget()
        self.children.dropping([gone for gone, _ in pairs])
        for part in chunks(sorted(gone for gone, _ in pairs)):
            self.connection.execute(delete(s.papers).where(s.papers.c.pk.in_(part)))
        self.changes.papers_removed(
            [(gone, derive(list(absorbed[gone].values()))) for gone, _ in pairs]
        )
        after = {kept: dict(before[kept]) for kept in survivors}
        for gone, kept in pairs:
            after[kept].update(absorbed[gone])
        self.rederive(
            {kept: list(before[kept].values()) for kept in survivors},
            {kept: list(records.values()) for kept, records in after.items()},
        )
        self.counts.merged += len(pairs)
        ids_after = self._ids(survivors)
        return {
            ids_before[pk]: ids_after[pk] for pk in survivors if ids_before[pk] != ids_after[pk]
        }

    def rederive(
        self, before: dict[int, list[PaperRows]], after: dict[int, list[PaperRows]]
    ) -> None:
        """Rewrite the papers whose sightings' values changed from `before` to `after` (each a
        paper's records, one per distinct values), recording what changed (an id that another
        paper holds is not taken: the paper keeps its own)."""
        changed: list[tuple[int, PaperRows, PaperRows]] = []
        hashed: list[dict[str, object]] = []
        unknown: set[int] = set()  # papers with no sighting before (nothing to compare with)
        current = self._ids(list(after))
        for pk, records in after.items():
            new = derive(records)
            if new.id != current[pk] and self.stored.has_paper(self.connection, new.id):
                new = new._replace(id=current[pk])  # that id names another paper
            if not before.get(pk):
                unknown.add(pk)
                changed.append((pk, new._replace(id=current[pk]), new))
                continue
            old = derive(before[pk])._replace(id=current[pk])
            if _shown(new) != _shown(old):
                changed.append((pk, old, new))
            elif new.content_hash != old.content_hash:
                hashed.append({"b_pk": pk, "b_content_hash": new.content_hash})
        if hashed:  # what they show is the same: only what it is derived from changed
            self.connection.execute(
                update(s.papers)
                .where(s.papers.c.pk == bindparam("b_pk"))
                .values(content_hash=bindparam("b_content_hash")),
                hashed,
            )
        if not changed:
            return
        if self.search_index is not None:
            self.search_index.flush()  # the update trigger expects every row indexed
        self.connection.execute(
            update(s.papers)
            .where(s.papers.c.pk == bindparam("b_pk"))
            .values(
                {name: bindparam(f"b_{name}") for name in PAPER_COLUMNS[1:]}
                | {"updated_run_id": self.run_id}
            ),
            [
                {"b_pk": pk, **dict(zip(_BOUND[1:], paper_values(new)[1:], strict=True))}
                for pk, _, new in changed
            ],
        )
        renamed = [{"b_pk": pk, "b_id": new.id} for pk, old, new in changed if new.id != old.id]
        if renamed:  # a key column: only where it changes (its id now comes from another record)
            self.connection.execute(
                update(s.papers)
                .where(s.papers.c.pk == bindparam("b_pk"))
                .values(id=bindparam("b_id")),
                renamed,
            )
        pks = [pk for pk, _, _ in changed]
        rewritten = [
            (pk, new) for pk, old, new in changed if pk in unknown or _children_differ(old, new)
        ]
        self.children.remove([pk for pk, _ in rewritten])
        self.children.add(rewritten)
        self._replace_keys(changed)
        self.changes.papers_changed(changed)
        self.updated.update(pks)

    def _ids(self, pks: Sequence[int]) -> dict[int, str]:
        """The stored ids of papers."""
        found = self.backend.select_rows(self.connection, s.papers.c.pk, (s.papers.c.id,), pks)
        return {pk: paper_id for pk, (paper_id,) in found.items()}

    def _replace_keys(self, changed: Sequence[tuple[int, PaperRows, PaperRows]]) -> None:
        """The identity keys of re-derived papers: the union of their sightings' now."""
        rekeyed = [(pk, new) for pk, old, new in changed if old.keys != new.keys]
        for part in chunks(sorted(pk for pk, _ in rekeyed)):
            self.connection.execute(delete(s.paper_keys).where(s.paper_keys.c.paper_pk.in_(part)))
        rows = [(pk, key) for pk, new in rekeyed for key in new.keys]
        self.backend.insert_rows(self.connection, s.paper_keys, ("paper_pk", "key"), rows)
        renamed = any(old.id != new.id for _, old, new in changed)
        if renamed or any(set(old.keys) - set(new.keys) for _, old, new in changed):
            self.stored.forget()  # what it remembers of these papers is no longer so
            return
        self.stored.wrote_papers(
            {new.id: StoredPaper(pk, new.content_hash) for pk, _, new in changed}
        )
        self.stored.wrote_keys([(new.id, key) for _, new in rekeyed for key in new.keys])

    def drop_stale(self) -> None:
        """Drop the source's sightings this run did not see: their papers are derived again
        from the sightings left, and removed when none is left."""
        pks = self.sightings.stale_papers()
        left = self.sightings.values_of(pks, without_stale=True)
        now_all = self.sightings.values_of([pk for pk in pks if pk in left])
        changing = [pk for pk in left if set(left[pk]) != set(now_all[pk])]
        records = self.sightings.records_of([*changing, *(pk for pk in pks if pk not in left)])
        before = {pk: list(held.values()) for pk, held in records.items()}
        after = {pk: [r for v, r in records[pk].items() if v in left[pk]] for pk in changing}
        self.rederive(before, after)
        self.sightings.drop_stale()
        gone = [pk for pk in pks if pk not in left]
        removed = self.remove_unseen({pk: derive(before[pk]) for pk in gone if pk in before})
        self.counts.removed += len(removed)
        self.counts.deferred += len(gone) - len(removed)
        if removed:
            self.stored.forget()
        self.changes.sightings_moved(self.sightings.papers_held(), set(gone))

    def remove_unseen(self, candidates: dict[int, PaperRows]) -> list[int]:
        """Delete the candidate papers that have no sighting left; those removed.

        On PostgreSQL another loader may be adding a sighting of a candidate in a transaction
        not committed yet: it holds a key-share lock on the paper (its foreign key). Each
        candidate is locked, skipping those another transaction holds, and the absence of any
        sighting is checked again in a new statement, which sees every sighting committed
        since; while the lock is held nobody can add one. A skipped paper is left to the
        run's last step (`remove_all_unseen`), once no loader is mid-source.
        """
        locked: list[int] = []
        for part in chunks(sorted(candidates)):
            query = select(s.papers.c.pk).where(s.papers.c.pk.in_(part)).order_by(s.papers.c.pk)
            locked.extend(self.connection.execute(self.backend.skipping_held(query)).scalars())
        removed: list[int] = []
        for part in chunks(locked):
            found = select(s.papers.c.pk).where(s.papers.c.pk.in_(part), ~has_sighting())
            unseen = list(self.connection.execute(found).scalars())
            self.children.dropping(unseen)
            self.connection.execute(delete(s.papers).where(s.papers.c.pk.in_(unseen)))
            removed += unseen
        self.changes.papers_removed([(pk, candidates[pk]) for pk in removed])
        return removed

    def flush_children(self) -> None:
        """Write the staged children that name lookup rows."""
        self.children.flush_lookups()

    def finish_children(self) -> None:
        """The source's last writes: staged children and mentions, and the methods they
        change (holding the right to add lookup rows, where other loaders write)."""
        if self.children.deferred:
            self.backend.hold_lookups(self.connection)
        self.children.finish()
        self.counts.orphaned += self.children.methods.orphaned
        self.counts.methods = self.children.methods.written


class SourceLoader:
    """Loads one source's batches; `finish` drops the sightings the source no longer has."""

    def __init__(
        self,
        connection: Connection,
        source: SourceFile,
        run_id: int,
        fingerprint: str,
        stored: StoredRows | None = None,
    ):
        """`stored` answers what the database holds (StoredRows, asking it, by default)."""
        self.connection = connection
        self.backend = backend_of(connection)
        self.stored = stored if stored is not None else StoredRows()
        self.source = source
        self.run_id = run_id
        self.source_id = self._upsert_source(fingerprint)
        self.first_load = not self._has_provenance()
        self.search_index = BulkSearchIndex(connection)
        self.foreign_keys = ForeignKeysCheckedAtEnd(connection)
        # Whether other loaders may write the same papers and lookup rows meanwhile: unless
        # this load dropped the foreign keys (which locks them all out).
        self.shared = self.backend.concurrent and not self.foreign_keys.dropped
        self.papers = PaperWriter(
            connection, self.source_id, run_id, self.stored, deferred=self.shared
        )
        self.papers.search_index = self.search_index
        self.counts = self.papers.counts
        self.identity = IdentityResolver(connection, self.stored, self.source_id, run_id)
        self.held_up_front = False  # see hold_up_front
        self.backend.start_source(connection)

    def __enter__(self) -> SourceLoader:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """Leaving the source's writing: put back what a fast first load changed in the schema
        (the full-text insert trigger, the foreign keys). On an error the transaction's
        rollback puts the schema back (a PostgreSQL transaction that failed takes no more
        statements)."""
        if kind is None:
            self.restore_schema()

    def restore_schema(self) -> None:
        """Put back the insert trigger and the foreign keys a fast first load dropped (once)."""
        self.search_index.close()
        self.foreign_keys.restore()

    def _upsert_source(self, fingerprint: str) -> int:
        """The source's row, created or refreshed with this run's fingerprint."""
        values = {
            "path": self.source.path,
            "checksum": self.source.checksum,
            "fingerprint": fingerprint,
            "format": self.source.format,
            "venue": self.source.venue,
            "year": self.source.year,
            "size_bytes": self.source.size,
            "mtime_ns": self.source.mtime_ns,
            "record_count": 0,
            "reject_count": 0,
            "loaded_at": now(),
            "run_id": self.run_id,
        }
        changing = [k for k in values if k != "path"]
        self.backend.upsert_rows(
            self.connection,
            s.sources,
            list(values),
            [tuple(values.values())],
            conflict=["path"],
            update=changing,
        )
        query = select(s.sources.c.id).where(s.sources.c.path == self.source.path)
        return int(self.connection.execute(query).scalar_one())

    def _has_provenance(self) -> bool:
        """Whether an earlier run loaded papers from this source."""
        query = select(s.paper_sources.c.paper_pk).where(
            s.paper_sources.c.source_id == self.source_id
        )
        return self.connection.execute(query.limit(1)).first() is not None

    def hold_up_front(self, keys: FileKeys) -> None:
        """Before the source's first write, when other loaders may write meanwhile: hold every
        identity key its records give, then every stored paper they may be or it was seen
        with, each set in one global order (etl.load.locks: no cycle between loaders)."""
        if not self.shared:
            return
        self.backend.hold_identities(self.connection, keys.keys)
        papers = key_holders(self.connection, keys.keys, keys.bare)
        papers |= self.papers.sightings.papers_held()
        self.backend.hold_papers(self.connection, papers)
        self.held_up_front = True

    def write(self, records: Sequence[PaperRows], rejects: Sequence[Reject]) -> None:
        """Write a batch: each record a sighting of the paper it is; new papers inserted,
        papers whose sightings changed derived again."""
        self.counts.records += len(records) + len(rejects)
        if rejects:
            self._write_rejects(rejects)
        if not records:
            return
        if self.shared and not self.held_up_front:  # a caller that could not gather them
            self.backend.hold_identities(self.connection, (k for r in records for k in r.keys))
        ids, merged = self.identity.resolve(records)
        if merged:
            renamed = self.papers.merge(merged)
            ids = [renamed.get(paper_id, paper_id) for paper_id in ids]
        by_paper: dict[str, list[PaperRows]] = {}
        for record, paper_id in zip(records, ids, strict=True):
            by_paper.setdefault(paper_id, []).append(record)
        stored = self.stored.papers(self.connection, by_paper)
        pks: RowNumbers = {pid: paper.pk for pid, paper in stored.items()}
        fresh = {
            pid: derive(_distinct(records))._replace(id=pid)
            for pid, records in by_paper.items()
            if pid not in pks
        }
        if fresh:
            pks.update(self._insert_papers(list(fresh.values())))
            taken = [pid for pid in fresh if pid not in pks]  # another loader inserted them
            if taken:
                pks.update(self._row_numbers(taken))
                for pid in taken:
                    del fresh[pid]
        self._write_sightings(by_paper, pks, fresh)
        new = [(pks[pid], paper) for pid, paper in fresh.items()]
        self.papers.children.add(new)
        self.stored.wrote_papers({p.id: StoredPaper(pk, p.content_hash) for pk, p in new})
        self._write_keys(new)
        self.papers.changes.papers_added(new)
        self.counts.inserted += len(new)
        if not self.shared:
            self.papers.flush_children()

    def _write_sightings(
        self, by_paper: dict[str, list[PaperRows]], pks: RowNumbers, fresh: dict[str, PaperRows]
    ) -> None:
        """Store each record as a sighting (stamping those unchanged), then derive again the
        stored papers whose sightings now give different values."""
        previous = (
            {}
            if self.first_load
            else self.papers.sightings.at_positions(
                [r.position for records in by_paper.values() for r in records]
            )
        )
        written: list[tuple[int, PaperRows]] = []
        unchanged: list[tuple[int, int]] = []
        replaced: dict[int, Counter[SightingValues]] = {}
        for pid, records in by_paper.items():
            pk = pks[pid]
            for record in records:
                here = [v for owner, v in previous.get(record.position, ()) if owner == pk]
                if SightingValues.of(record) in here:
                    unchanged.append((pk, record.position))
                    continue
                written.append((pk, record))
                if pid not in fresh:
                    replaced.setdefault(pk, Counter()).update(here)
        new_pks = {pks[pid] for pid in fresh}
        mine: dict[int, dict[SightingValues, PaperRows]] = {}
        for pk, record in written:
            if pk not in new_pks:
                mine.setdefault(pk, {})[SightingValues.of(record)] = record
        before = self.papers.sightings.values_of(mine)
        changing: dict[int, Counter[SightingValues]] = {}
        for pk, given in mine.items():
            after = before.get(pk, Counter()) - replaced.get(pk, Counter())
            after.update(dict.fromkeys(given, 1))
            if set(after) != set(before.get(pk, ())):
                changing[pk] = after
        old = self.papers.sightings.records_of(changing)
        self.papers.sightings.write(written, first_load=self.first_load)
        self.papers.sightings.stamp(unchanged)
        self.papers.rederive(
            {pk: list(old.get(pk, {}).values()) for pk in changing},
            {pk: [mine[pk].get(v) or old[pk][v] for v in after] for pk, after in changing.items()},
        )

    def _insert_papers(self, papers: Sequence[PaperRows]) -> RowNumbers:
        """Insert new papers and index them for search; their row numbers (`papers.pk`)."""
        rows = [(*paper_values(p), self.run_id, self.run_id) for p in papers]
        columns = (*PAPER_COLUMNS, "created_run_id", "updated_run_id")
        if self.shared:
            inserted = self.backend.insert_new_returning(
                self.connection, s.papers, columns, rows, ("id", "pk")
            )
            return dict(inserted)
        mark = highest_id(self.connection, s.papers.c.pk)
        self.backend.insert_rows(self.connection, s.papers, columns, rows)
        self.search_index.index_new(mark)
        return ids_since(self.connection, s.papers.c.id, s.papers.c.pk, mark)

    def _row_numbers(self, ids: Iterable[str]) -> RowNumbers:
        found = self.backend.select_rows(self.connection, s.papers.c.id, (s.papers.c.pk,), ids)
        return {pid: pk for pid, (pk,) in found.items()}

    def _write_keys(self, papers: Sequence[tuple[int, PaperRows]]) -> None:
        """Remember what identifies each new paper, for the records of later batches and runs."""
        rows = list(dict.fromkeys((pk, key) for pk, p in papers for key in p.keys))
        self.backend.upsert_rows(
            self.connection, s.paper_keys, ("paper_pk", "key"), rows, conflict=["paper_pk", "key"]
        )
        self.stored.wrote_keys([(p.id, key) for _, p in papers for key in p.keys])

    def _write_rejects(self, rejects: Sequence[Reject]) -> None:
        self.counts.rejects += len(rejects)
        self.backend.insert_rows(
            self.connection,
            s.rejects,
            ("run_id", "source_path", "position", "reason", "raw"),
            [(self.run_id, r.source, r.position, r.reason, r.raw) for r in rejects],
        )

    def finish(self) -> LoadCounts:
        """Drop the sightings this source no longer has (removing papers seen nowhere else),
        write the staged children and recompute the methods the source touched."""
        self.search_index.flush()
        self.papers.drop_stale()
        self.papers.finish_children()
        # before the foreign keys come back: a merge may have removed a paper edges named
        resolve(self.connection, self.backend)
        self.restore_schema()
        counts = self.counts
        counts.updated = len(self.papers.updated)
        seen = self.papers.sightings.papers_seen()
        counts.unchanged = max(seen - counts.inserted - counts.updated, 0)
        counts.links = self.papers.children.links
        self.connection.execute(
            update(s.sources)
            .where(s.sources.c.id == self.source_id)
            .values(record_count=counts.records, reject_count=counts.rejects)
        )
        return counts


def _shown(paper: PaperRows) -> tuple[object, ...]:
    """What a derived paper shows: its row (but the hash of what it is derived from), its
    child rows' fields and its identity keys."""
    return (
        paper_values(paper)[:-1],
        *(getattr(paper, name) for name in CHILD_FIELDS),
        paper.keys,
    )


def _children_differ(old: PaperRows, new: PaperRows) -> bool:
    """Whether two derivations of a paper differ in what its child rows hold."""
    return any(getattr(old, name) != getattr(new, name) for name in CHILD_FIELDS)


def _distinct(records: Sequence[PaperRows]) -> list[PaperRows]:
    """One record of each distinct sighting values (a file listing a paper twice the same)."""
    return list({SightingValues.of(r): r for r in reversed(records)}.values())


def forget_source(connection: Connection, source_id: int, run_id: int) -> tuple[int, int]:
    """Remove a source whose file is gone: its sightings (its papers derived again from the
    sightings left, or removed where none is left) and its row; (removed, deferred)."""
    writer = PaperWriter(
        connection, source_id, run_id, StoredRows(), deferred=backend_of(connection).concurrent
    )
    writer.drop_stale()
    writer.finish_children()
    resolve(connection, writer.backend)
    connection.execute(delete(s.sources).where(s.sources.c.id == source_id))
    return writer.counts.removed, writer.counts.deferred


def remove_all_unseen(connection: Connection, run_id: int | None = None) -> int:
    """Delete every paper with no sighting left (run where no loader is mid-source); with a
    run, recorded as removed by it. The methods their mentions named are recomputed."""
    if run_id is not None:
        record_removals(connection, run_id, ~has_sighting())
    unseen = list(connection.execute(select(s.papers.c.pk).where(~has_sighting())).scalars())
    if not unseen:
        return 0
    backend = backend_of(connection)
    children = ChildRows(connection, backend, deferred=backend.concurrent)
    children.dropping(unseen)
    for part in chunks(unseen):
        connection.execute(delete(s.papers).where(s.papers.c.pk.in_(part)))
    children.methods.finish()
    return len(unseen)

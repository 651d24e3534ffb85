"""Writing transformed papers (`PaperRows`): set-based writes in the caller's transaction."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Connection,
    Table,
    bindparam,
    case,
    delete,
    func,
    select,
    update,
)

from etl.load import locks, sightings
from etl.load import schema as s
from etl.load.bulk import (
    chunks,
    highest_id,
    ids_since,
    insert_new_returning,
    insert_rows,
    select_rows,
    upsert_rows,
)
from etl.load.changes import ChangeLog
from etl.load.foreign_keys import ForeignKeysCheckedAtEnd
from etl.load.identity import FileKeys, IdentityResolver
from etl.load.known import StoredPaper, StoredRows, key_holders
from etl.load.methods import resolve_methods
from etl.load.search_index import BulkSearchIndex
from etl.models import (
    PaperRows,
    Reject,
    SourceFile,
)

# The columns of `papers` a new paper is inserted with, in the order of `paper_row`'s values.
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
    "created_run_id",
    "updated_run_id",
)
# Groups of a paper's child rows that a record replaces only when it has them: a record that
# lacks a field knows nothing about it (it does not say the paper has no authors).
TEXT_CHILDREN = (
    s.paper_methods,
    s.acronyms,
    s.paper_topics,
    s.paper_tasks,
    s.paper_listed_terms,
)
RowNumbers = dict[str, int]  # papers.pk by papers.id, for the papers of a batch
KeyedPaper = tuple[int, PaperRows]  # a paper with its row number


@dataclass
class ChildGroups:
    """The ids of changed papers whose authors, links and text-derived rows are replaced."""

    authors: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)
    text: set[str] = field(default_factory=set)


def paper_row(p: PaperRows, run_id: int) -> tuple[object, ...]:
    """A new paper's `papers` row, in the order of PAPER_COLUMNS."""
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
        run_id,
        run_id,
    )


def now() -> datetime:
    """The current UTC time without tzinfo (stored as ISO text on SQLite)."""
    return datetime.now(UTC).replace(tzinfo=None)


def resolve_ids(
    connection: Connection,
    stored: StoredRows,
    table: Table,
    columns: Sequence[str],
    rows: Mapping[Any, Sequence[Any]],
) -> dict[Any, int]:
    """Ids of lookup rows (authors, links) by key (the first column), inserting missing ones."""
    column = table.c[columns[0]]
    ids = stored.lookup(connection, column, table.c.id, rows)
    missing = [rows[k] for k in rows if k not in ids]
    if missing:  # no other writer adds them meanwhile: see SourceLoader.lookups
        mark = highest_id(connection, table.c.id)
        insert_rows(connection, table, columns, missing)
        created = ids_since(connection, column, table.c.id, mark)
        stored.wrote_lookups(column, created)
        ids.update(created)
    return ids


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
    # end of the run, where no loader can be adding a sighting (remove_unseen_papers).
    deferred: int = 0

    def add(self, other: LoadCounts) -> None:
        """Accumulate another source's counts (for a run's totals)."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class SourceLoader:
    """Loads one source's batches; `finish` removes papers the source no longer holds."""

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
        self.stored = stored if stored is not None else StoredRows()
        self.source = source
        self.run_id = run_id
        self.counts = LoadCounts()
        self.source_id = self._upsert_source(fingerprint)
        self.first_load = not self._has_provenance()
        self.search_index = BulkSearchIndex(connection)
        self.foreign_keys = ForeignKeysCheckedAtEnd(connection)
        # Whether other loaders may write the same papers and lookup rows meanwhile: on
        # PostgreSQL, unless this load dropped the foreign keys (which locks them all out).
        self.shared = connection.dialect.name == "postgresql" and not self.foreign_keys.dropped
        self.lookup_connection = connection.engine.connect() if self.shared else None
        self.identity = IdentityResolver(connection, self.stored)
        self.changes = ChangeLog(connection, run_id, self.source_id)
        self.held_up_front = False  # see hold_up_front
        if connection.dialect.name == "postgresql":
            _compress_with_lz4(connection)

    @contextmanager
    def lookups(self, table: Table) -> Iterator[Connection]:
        """Where to add a lookup table's new rows (authors, links, methods): the source's own
        transaction when no other loader can write meanwhile; otherwise a short transaction of
        their own, committed at once under the table's lock, so loaders add them one at a
        time and never wait on each other's sources (a lookup row committed for a source that
        then rolls back is an orphan, deleted like any other)."""
        if self.lookup_connection is None:
            yield self.connection
            return
        with self.lookup_connection.begin():
            locks.hold_lookup_table(self.lookup_connection, table.name)
            yield self.lookup_connection

    def __enter__(self) -> SourceLoader:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """Leaving the source's writing: put back what a fast first load changed in the schema
        (the full-text insert trigger, the foreign keys), and release the lookup connection.
        On an error the transaction's rollback puts the schema back (a PostgreSQL transaction
        that failed takes no more statements)."""
        try:
            if kind is None:
                self.restore_schema()
        finally:
            self.close()

    def restore_schema(self) -> None:
        """Put back the insert trigger and the foreign keys a fast first load dropped (once)."""
        self.search_index.close()
        self.foreign_keys.restore()

    def close(self) -> None:
        """Release the lookup connection (after `finish`, or when the source fails)."""
        if self.lookup_connection is not None:
            self.lookup_connection.close()
            self.lookup_connection = None

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
        upsert_rows(
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
        locks.hold_identities(self.connection, keys.keys)
        papers = key_holders(self.connection, keys.keys, keys.bare)
        papers |= sightings.papers_seen_in(self.connection, self.source_id)
        locks.hold_papers(self.connection, papers)
        self.held_up_front = True

    def write(self, papers: Sequence[PaperRows], rejects: Sequence[Reject]) -> None:
        """Write a batch: new papers inserted, changed ones rewritten, provenance for all."""
        self.counts.records += len(papers) + len(rejects)
        if rejects:
            self._write_rejects(rejects)
        if not papers:
            return
        if self.shared and not self.held_up_front:  # a caller that could not gather them
            locks.hold_identities(self.connection, (k for p in papers for k in p.keys))
        papers = self.identity.resolve(papers)
        latest: dict[str, PaperRows] = {}
        for paper in papers:  # a paper twice in a batch: its last version with an abstract
            if (
                paper.id not in latest
                or _has_abstract(paper)
                or not _has_abstract(latest[paper.id])
            ):
                latest[paper.id] = paper
        stored = self.stored.papers(self.connection, latest)
        fresh = [p for pid, p in latest.items() if pid not in stored]
        changed = [
            p
            for pid, p in latest.items()
            if pid in stored and stored[pid].content_hash != p.content_hash
        ]
        self.counts.inserted += len(fresh)
        self.counts.updated += len(changed)
        self.counts.unchanged += len(latest) - len(fresh) - len(changed)
        pks: RowNumbers = {pid: paper.pk for pid, paper in stored.items()}
        if fresh:
            pks.update(self._insert_papers(fresh))
        if len(pks) < len(latest):  # another loader inserted some of them meanwhile
            fresh, taken = self._taken_meanwhile(latest, fresh, pks)
            changed += taken
        self.changes.papers_added(fresh, pks)
        before = self.changes.before_update([pks[p.id] for p in changed])
        groups = self._update_papers(changed, pks) if changed else ChildGroups()
        self.stored.wrote_papers(
            {p.id: StoredPaper(pks[p.id], p.content_hash) for p in (*fresh, *changed)}
        )
        self._write_children(fresh, changed, groups, pks)
        self.changes.after_update(before)
        self._write_provenance(papers, pks)
        self._write_keys(papers, pks)

    def _taken_meanwhile(
        self, latest: dict[str, PaperRows], fresh: list[PaperRows], pks: RowNumbers
    ) -> tuple[list[PaperRows], list[PaperRows]]:
        """Papers another loader committed after this one looked: their row numbers go into
        `pks`; returns the papers this loader did insert, and the taken ones whose content
        differs (to rewrite, as if they had been stored before)."""
        taken = select_rows(
            self.connection,
            s.papers.c.id,
            (s.papers.c.pk, s.papers.c.content_hash),
            [pid for pid in latest if pid not in pks],
        )
        pks.update({pid: pk for pid, (pk, _) in taken.items()})
        differ = [
            latest[pid]
            for pid, (_, content_hash) in taken.items()
            if content_hash != latest[pid].content_hash
        ]
        self.counts.inserted -= len(taken)
        self.counts.updated += len(differ)
        self.counts.unchanged += len(taken) - len(differ)
        return [p for p in fresh if p.id not in taken], differ

    def _insert_papers(self, papers: Sequence[PaperRows]) -> RowNumbers:
        """Insert new papers and index them for search; their row numbers (`papers.pk`)."""
        rows = [paper_row(p, self.run_id) for p in papers]
        if self.shared:
            inserted = insert_new_returning(
                self.connection, s.papers, PAPER_COLUMNS, rows, ("id", "pk")
            )
            return dict(inserted)
        mark = highest_id(self.connection, s.papers.c.pk)
        insert_rows(self.connection, s.papers, PAPER_COLUMNS, rows)
        self.search_index.index_new(mark)
        return ids_since(self.connection, s.papers.c.id, s.papers.c.pk, mark)

    def _update_papers(self, papers: Sequence[PaperRows], pks: RowNumbers) -> ChildGroups:
        """Rewrite changed papers with what their new records know, and drop the child rows
        those records replace (rewritten next); the papers whose groups are replaced.

        What a record lacks stays as another record gave it: a title, keywords, extra fields,
        authors, links; the abstract (with the methods, acronyms, topics and tasks found in
        it) when the paper has a substantive abstract and the record has none, or when the
        paper has a title and the record has none (a list of bare abstracts does not undo
        what a titled record found)."""
        titled = self._titled([pks[p.id] for p in papers if p.title is None])
        with_abstract = self._with_abstract([pks[p.id] for p in papers if not _has_abstract(p)])
        keep_text = {
            p.id
            for p in papers
            if (not _has_abstract(p) and pks[p.id] in with_abstract)
            or (p.title is None and pks[p.id] in titled)
        }
        rows = [
            {
                "b_pk": pks[p.id],
                "b_title": p.title,
                "b_title_raw": p.title_raw,
                "b_abstract": p.abstract,
                "b_abstract_raw": p.abstract_raw,
                "b_method_names": p.method_names,
                "b_keywords": p.keywords,
                "b_extra": p.extra,
                "b_content_hash": p.content_hash,
                "b_keep_text": p.id in keep_text,
            }
            for p in papers
        ]
        keep = bindparam("b_keep_text", type_=Boolean)
        values: dict[str, Any] = {
            name: func.coalesce(bindparam(f"b_{name}"), s.papers.c[name])
            for name in ("title", "title_raw", "keywords", "extra")
        }
        for name in ("abstract", "abstract_raw", "method_names"):
            values[name] = case((keep, s.papers.c[name]), else_=bindparam(f"b_{name}"))
        values["content_hash"] = bindparam("b_content_hash")
        values["updated_run_id"] = self.run_id
        self.search_index.flush()
        statement = update(s.papers).where(s.papers.c.pk == bindparam("b_pk")).values(values)
        self.connection.execute(statement, rows)
        groups = ChildGroups(
            authors={p.id for p in papers if p.authors},
            links={p.id for p in papers if p.links},
            text={p.id for p in papers} - keep_text,
        )
        for tables, ids in (
            ((s.paper_authors,), groups.authors),
            ((s.paper_links,), groups.links),
            (TEXT_CHILDREN, groups.text),
        ):
            for table in tables:
                for part in chunks(sorted(pks[pid] for pid in ids)):
                    self.connection.execute(delete(table).where(table.c.paper_pk.in_(part)))
        return groups

    def _with_abstract(self, pks: Sequence[int]) -> set[int]:
        """Those of the papers a record with a substantive abstract made (an `abs:` key)."""
        found: set[int] = set()
        c = s.paper_keys.c
        for part in chunks(pks):
            query = select(c.paper_pk).where(c.paper_pk.in_(part), c.key >= "abs:", c.key < "abs;")
            found.update(self.connection.execute(query).scalars())
        return found

    def _titled(self, pks: Sequence[int]) -> set[int]:
        """Those of the papers that have a title."""
        titled: set[int] = set()
        for part in chunks(pks):
            query = select(s.papers.c.pk).where(
                s.papers.c.pk.in_(part), s.papers.c.title.is_not(None)
            )
            titled.update(self.connection.execute(query).scalars())
        return titled

    def _write_children(
        self,
        fresh: Sequence[PaperRows],
        changed: Sequence[PaperRows],
        groups: ChildGroups,
        pks: RowNumbers,
    ) -> None:
        """Authors, links, methods, acronyms, topics and tasks of new papers, and the groups of
        them that changed papers' records replace."""

        def keyed(ids: set[str]) -> list[KeyedPaper]:
            return [(pks[p.id], p) for p in fresh] + [
                (pks[p.id], p) for p in changed if p.id in ids
            ]

        self._write_authors(keyed(groups.authors))
        self._write_links(keyed(groups.links))
        text = keyed(groups.text)
        if not text:
            return
        self._write_methods(text)
        acronym_rows = dict.fromkeys(
            (pk, acronym, expansion) for pk, p in text for acronym, expansion in p.acronyms
        )
        insert_rows(
            self.connection, s.acronyms, ("paper_pk", "acronym", "expansion"), list(acronym_rows)
        )
        insert_rows(
            self.connection,
            s.paper_topics,
            ("paper_pk", "topic_slug", "score", "evidence"),
            [(pk, slug, score, evidence) for pk, p in text for slug, score, evidence in p.topics],
        )
        insert_rows(
            self.connection,
            s.paper_tasks,
            ("paper_pk", "task_name", "score", "evidence"),
            [(pk, name, score, evidence) for pk, p in text for name, score, evidence in p.tasks],
        )
        self._write_listed(text)

    def _write_authors(self, papers: Sequence[KeyedPaper]) -> None:
        names = {name: (name,) for _, p in papers for name in p.authors}
        if not names:
            return
        with self.lookups(s.authors) as connection:
            ids = resolve_ids(connection, self.stored, s.authors, ("name",), names)
        rows = [
            (
                pk,
                position,
                ids[name],
                p.author_homepages[position - 1] if p.author_homepages else None,
            )
            for pk, p in papers
            for position, name in enumerate(p.authors, 1)
        ]
        insert_rows(
            self.connection,
            s.paper_authors,
            ("paper_pk", "position", "author_id", "homepage"),
            rows,
        )

    def _write_links(self, papers: Sequence[KeyedPaper]) -> None:
        links = {
            url: (url, host, kind, owner, repo)
            for _, p in papers
            for url, host, kind, owner, repo, _found_in in p.links
        }
        if not links:
            return
        columns = ("url", "host", "kind", "repo_owner", "repo_name")
        with self.lookups(s.links) as connection:
            ids = resolve_ids(connection, self.stored, s.links, columns, links)
        rows = {
            (pk, ids[url]): (pk, ids[url], found_in)
            for pk, p in papers
            for url, *_, found_in in p.links
        }
        insert_rows(
            self.connection, s.paper_links, ("paper_pk", "link_id", "found_in"), list(rows.values())
        )
        self.counts.links += len(rows)

    def _write_listed(self, papers: Sequence[KeyedPaper]) -> None:
        """The tasks and methods a source lists for its papers, as it lists them."""
        terms = {
            f"{kind}:{name}": (f"{kind}:{name}", kind, name, detail)
            for _, p in papers
            for kind, name, detail in p.listed
        }
        if not terms:
            return
        columns = ("key", "kind", "name", "detail")
        with self.lookups(s.listed_terms) as connection:
            ids = resolve_ids(connection, self.stored, s.listed_terms, columns, terms)
        rows: dict[tuple[int, int], tuple[int, int, int]] = {}
        for pk, p in papers:
            for position, (kind, name, _detail) in enumerate(p.listed, 1):
                term = ids[f"{kind}:{name}"]
                rows.setdefault((pk, term), (pk, term, position))
        insert_rows(
            self.connection,
            s.paper_listed_terms,
            ("paper_pk", "term_id", "position"),
            list(rows.values()),
        )

    def _write_methods(self, papers: Sequence[KeyedPaper]) -> None:
        """Methods merge across papers through their alias keys; new ones are created in bulk."""
        mentions = [
            (pk, mention)
            for pk, p in papers
            for mention in p.methods
            if mention[-1]  # MethodValues' last field: its alias keys
        ]
        if not mentions:
            return
        with self.lookups(s.methods) as connection:
            rows = resolve_methods(connection, self.stored, mentions)
        insert_rows(
            self.connection,
            s.paper_methods,
            ("paper_pk", "method_id", "role", "surface"),
            list(rows.values()),
        )
        self.counts.methods += len(rows)

    def _write_provenance(self, papers: Sequence[PaperRows], pks: RowNumbers) -> None:
        """Where each paper was seen; a row seen again is stamped with this run."""
        rows = list(
            {
                (p.id, p.position): (
                    pks[p.id],
                    self.source_id,
                    p.position,
                    self.run_id,
                    *p.sighting,
                )
                for p in papers
            }.values()
        )
        columns = ("paper_pk", "source_id", "position", "run_id", "venue", "year", "status")
        if self.first_load:  # nothing to conflict with: a plain insert (COPY on PostgreSQL)
            insert_rows(self.connection, s.paper_sources, columns, rows)
            return
        upsert_rows(
            self.connection,
            s.paper_sources,
            columns,
            rows,
            conflict=["paper_pk", "source_id", "position"],
            update=["run_id", "venue", "year", "status"],
        )

    def _write_keys(self, papers: Sequence[PaperRows], pks: RowNumbers) -> None:
        """Remember what identifies each paper, for the records of later batches and runs."""
        keys = list(dict.fromkeys((p.id, key) for p in papers for key in p.keys))
        rows = [(pks[pid], key) for pid, key in keys]
        upsert_rows(
            self.connection, s.paper_keys, ("paper_pk", "key"), rows, conflict=["paper_pk", "key"]
        )
        self.stored.wrote_keys(keys)

    def _write_rejects(self, rejects: Sequence[Reject]) -> None:
        self.counts.rejects += len(rejects)
        insert_rows(
            self.connection,
            s.rejects,
            ("run_id", "source_path", "position", "reason", "raw"),
            [(self.run_id, r.source, r.position, r.reason, r.raw) for r in rejects],
        )

    def finish(self) -> LoadCounts:
        """Drop provenance this source no longer has, and papers seen nowhere else."""
        self.restore_schema()  # before the deletes below, whose cascades need the keys
        removed, self.counts.deferred = sightings.drop_stale(
            self.connection, self.source_id, self.run_id, self.changes
        )
        self.counts.removed = removed
        if removed:
            self.stored.forget()
        self.connection.execute(
            update(s.sources)
            .where(s.sources.c.id == self.source_id)
            .values(record_count=self.counts.records, reject_count=self.counts.rejects)
        )
        return self.counts


def _has_abstract(paper: PaperRows) -> bool:
    """Whether a record's abstract is substantive (it has an `abs:` identity key)."""
    return any(key.startswith("abs:") for key in paper.keys)


def _compress_with_lz4(connection: Connection) -> None:
    """Long text (abstracts) is compressed as it is stored; lz4 does it several times faster
    than the default pglz. For this transaction only, and only where the server has lz4."""
    available = connection.exec_driver_sql(
        "SELECT 1 FROM pg_settings "
        "WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
    ).first()
    if available:
        connection.exec_driver_sql("SET LOCAL default_toast_compression = 'lz4'")

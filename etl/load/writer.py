"""Writing paper bundles: set-based, chunked upserts inside the caller's transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Table, and_, bindparam, delete, func, select, text, update

from etl.load import schema as s
from etl.load.bulk import chunks, insert_rows, select_map, upsert_rows
from etl.load.search_index import BulkSearchIndex
from etl.models import PaperBundle, Reject, SourceFile, Topic


def now() -> datetime:
    """The current UTC time without tzinfo (stored as ISO text on SQLite)."""
    return datetime.now(UTC).replace(tzinfo=None)


def resolve_ids(
    connection: Connection, table: Table, key: str, rows: dict[Any, dict[str, Any]]
) -> dict[Any, int]:
    """Ids of lookup rows (authors, links) by key, inserting the missing ones in bulk."""
    column = table.c[key]
    ids = select_map(connection, column, table.c.id, rows)
    missing = [rows[k] for k in rows if k not in ids]
    if missing:
        upsert_rows(connection, table, missing)
        ids.update(select_map(connection, column, table.c.id, (r[key] for r in missing)))
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

    def add(self, other: LoadCounts) -> None:
        """Accumulate another source's counts (for a run's totals)."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class SourceLoader:
    """Loads one source's batches; `finish` removes papers the source no longer holds."""

    def __init__(self, connection: Connection, source: SourceFile, run_id: int, fingerprint: str):
        self.connection = connection
        self.source = source
        self.run_id = run_id
        self.counts = LoadCounts()
        self.source_id = self._upsert_source(fingerprint)
        self.search_index = BulkSearchIndex(connection)

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
        upsert_rows(self.connection, s.sources, [values], conflict=["path"], update=changing)
        query = select(s.sources.c.id).where(s.sources.c.path == self.source.path)
        return int(self.connection.execute(query).scalar_one())

    def write(self, bundles: Sequence[PaperBundle], rejects: Sequence[Reject]) -> None:
        """Write a batch: new papers inserted, changed ones rewritten, provenance for all."""
        self.counts.records += len(bundles) + len(rejects)
        if rejects:
            self._write_rejects(rejects)
        if not bundles:
            return
        latest = {b.paper.id: b for b in bundles}  # a paper twice in a batch: its last version
        existing = select_map(self.connection, s.papers.c.id, s.papers.c.content_hash, latest)
        fresh = [b for pid, b in latest.items() if pid not in existing]
        changed = [
            b for pid, b in latest.items() if pid in existing and existing[pid] != b.content_hash
        ]
        self.counts.inserted += len(fresh)
        self.counts.updated += len(changed)
        self.counts.unchanged += len(latest) - len(fresh) - len(changed)
        if fresh:
            mark = self.search_index.mark()
            insert_rows(
                self.connection, s.papers, [self._paper_row(b, created=True) for b in fresh]
            )
            self.search_index.index_new(mark)
        if changed:
            self._update_papers(changed)
        self._write_children([*fresh, *changed])
        self._write_provenance(bundles)

    def _paper_row(self, bundle: PaperBundle, *, created: bool) -> dict[str, Any]:
        paper = bundle.paper
        row = {
            "id": paper.id,
            "venue": paper.venue,
            "year": paper.year,
            "title": paper.title,
            "abstract": paper.abstract,
            "abstract_raw": paper.abstract_raw,
            "status": paper.status,
            "keywords": json.dumps(list(paper.keywords), ensure_ascii=False)
            if paper.keywords
            else None,
            "extra": paper.extra,
            "method_names": paper.method_names,
            "content_hash": bundle.content_hash,
            "updated_run_id": self.run_id,
        }
        if created:
            row["created_run_id"] = self.run_id
        return row

    def _update_papers(self, bundles: Sequence[PaperBundle]) -> None:
        """Rewrite changed papers and drop their derived rows (rewritten next)."""
        rows = [{**self._paper_row(b, created=False), "paper_key": b.paper.id} for b in bundles]
        columns: dict[str, Any] = {k: bindparam(k) for k in rows[0] if k not in ("id", "paper_key")}
        # Keep a title another source gave when this one has none.
        columns["title"] = func.coalesce(bindparam("title"), s.papers.c.title)
        statement = update(s.papers).where(s.papers.c.id == bindparam("paper_key")).values(columns)
        self.connection.execute(statement, rows)
        ids = [b.paper.id for b in bundles]
        for table in s.PAPER_CHILDREN:
            for part in chunks(ids):
                self.connection.execute(delete(table).where(table.c.paper_id.in_(part)))

    def _write_children(self, bundles: Sequence[PaperBundle]) -> None:
        """Authors, links, methods, acronyms and topics of newly written papers."""
        if not bundles:
            return
        self._write_authors(bundles)
        self._write_links(bundles)
        self._write_methods(bundles)
        acronym_rows = {
            (b.paper.id, a.acronym, a.expansion): {
                "paper_id": b.paper.id,
                "acronym": a.acronym,
                "expansion": a.expansion,
            }
            for b in bundles
            for a in b.acronyms
        }
        insert_rows(self.connection, s.acronyms, list(acronym_rows.values()))
        topic_rows = [
            {
                "paper_id": b.paper.id,
                "topic_slug": t.slug,
                "score": t.score,
                "evidence": ", ".join(t.evidence),
            }
            for b in bundles
            for t in b.topics
        ]
        insert_rows(self.connection, s.paper_topics, topic_rows)

    def _write_authors(self, bundles: Sequence[PaperBundle]) -> None:
        names = {name: {"name": name} for b in bundles for name in b.authors}
        if not names:
            return
        ids = resolve_ids(self.connection, s.authors, "name", names)
        rows = [
            {"paper_id": b.paper.id, "position": position, "author_id": ids[name]}
            for b in bundles
            for position, name in enumerate(b.authors, 1)
        ]
        insert_rows(self.connection, s.paper_authors, rows)

    def _write_links(self, bundles: Sequence[PaperBundle]) -> None:
        links = {
            link.url: {
                "url": link.url,
                "host": link.host,
                "kind": link.kind,
                "repo_owner": link.repo_owner,
                "repo_name": link.repo_name,
            }
            for b in bundles
            for link in b.links
        }
        if not links:
            return
        ids = resolve_ids(self.connection, s.links, "url", links)
        rows = {
            (b.paper.id, ids[link.url]): {
                "paper_id": b.paper.id,
                "link_id": ids[link.url],
                "found_in": link.found_in,
            }
            for b in bundles
            for link in b.links
        }
        insert_rows(self.connection, s.paper_links, list(rows.values()))
        self.counts.links += len(rows)

    def _write_methods(self, bundles: Sequence[PaperBundle]) -> None:
        """Methods merge across papers through their alias keys; new ones are created in bulk."""
        mentions = [(b.paper.id, m) for b in bundles for m in b.methods if m.keys]
        if not mentions:
            return
        all_keys = {k for _, m in mentions for k in m.keys}
        known = select_map(
            self.connection, s.method_aliases.c.key, s.method_aliases.c.method_id, all_keys
        )
        canonical = _cluster_keys(
            [m.keys for _, m in mentions if not any(k in known for k in m.keys)]
        )
        new_methods = {
            canonical[m.keys[0]]: {"key": canonical[m.keys[0]], "name": m.name, "kind": m.kind}
            for _, m in reversed(mentions)
            if m.keys[0] in canonical
        }
        if new_methods:
            upsert_rows(self.connection, s.methods, list(new_methods.values()))
            created = select_map(self.connection, s.methods.c.key, s.methods.c.id, new_methods)
            known.update({k: created[c] for k, c in canonical.items()})
        aliases: dict[str, dict[str, Any]] = {}
        rows: dict[tuple[str, int], dict[str, Any]] = {}
        for paper_id, mention in mentions:
            method_id = next(known[k] for k in mention.keys if k in known)
            spellings = (mention.name, *mention.aliases)
            for key, alias in zip(mention.keys, spellings, strict=False):
                aliases.setdefault(key, {"key": key, "alias": alias, "method_id": method_id})
            previous = rows.get((paper_id, method_id))
            if previous is None or mention.role == "introduced":
                rows[(paper_id, method_id)] = {
                    "paper_id": paper_id,
                    "method_id": method_id,
                    "role": mention.role,
                    "surface": mention.surface,
                }
        upsert_rows(self.connection, s.method_aliases, list(aliases.values()))
        insert_rows(self.connection, s.paper_methods, list(rows.values()))
        self.counts.methods += len(rows)

    def _write_provenance(self, bundles: Sequence[PaperBundle]) -> None:
        """Where each paper was seen; a row seen again is stamped with this run."""
        rows = {
            (b.paper.id, b.position): {
                "paper_id": b.paper.id,
                "source_id": self.source_id,
                "position": b.position,
                "run_id": self.run_id,
            }
            for b in bundles
        }
        upsert_rows(
            self.connection,
            s.paper_sources,
            list(rows.values()),
            conflict=["paper_id", "source_id", "position"],
            update=["run_id"],
        )

    def _write_rejects(self, rejects: Sequence[Reject]) -> None:
        self.counts.rejects += len(rejects)
        insert_rows(
            self.connection,
            s.rejects,
            [
                {
                    "run_id": self.run_id,
                    "source_path": r.source,
                    "position": r.position,
                    "reason": r.reason,
                    "raw": r.raw,
                }
                for r in rejects
            ],
        )

    def finish(self) -> LoadCounts:
        """Drop provenance this source no longer has, and papers seen nowhere else."""
        self.search_index.close()
        stale = and_(
            s.paper_sources.c.source_id == self.source_id, s.paper_sources.c.run_id != self.run_id
        )
        still_seen = select(1).where(
            s.paper_sources.c.paper_id == s.papers.c.id,
            ~and_(
                s.paper_sources.c.source_id == self.source_id,
                s.paper_sources.c.run_id != self.run_id,
            ),
        )
        result = self.connection.execute(
            delete(s.papers).where(
                s.papers.c.id.in_(select(s.paper_sources.c.paper_id).where(stale)),
                ~still_seen.exists(),
            )
        )
        self.counts.removed = result.rowcount or 0
        self.connection.execute(delete(s.paper_sources).where(stale))
        self.connection.execute(
            update(s.sources)
            .where(s.sources.c.id == self.source_id)
            .values(record_count=self.counts.records, reject_count=self.counts.rejects)
        )
        return self.counts


def _cluster_keys(key_groups: Sequence[tuple[str, ...]]) -> dict[str, str]:
    """Map each key to its cluster's canonical key; groups sharing a key form one cluster."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for keys in key_groups:
        root = find(keys[0])
        for key in keys[1:]:
            other = find(key)
            if other != root:
                parent[other] = root
    return {key: find(key) for key in parent}


def delete_orphans(connection: Connection) -> None:
    """Remove authors, links and methods no paper refers to any more."""
    for table, child, column in (
        (s.authors, s.paper_authors, "author_id"),
        (s.links, s.paper_links, "link_id"),
        (s.methods, s.paper_methods, "method_id"),
    ):
        connection.execute(
            delete(table).where(~select(1).where(child.c[column] == table.c.id).exists())
        )


def sync_topics(connection: Connection, topics: Sequence[Topic]) -> None:
    """Make the topics table hold the taxonomy's topics (parents first)."""
    rows = [
        {
            "slug": t.slug,
            "name": t.name,
            "parent_slug": t.parent,
            "terms": json.dumps(list(t.terms)),
        }
        for t in topics
    ]
    parents = {t.slug: t.parent for t in topics}

    def depth(slug: str | None) -> int:
        return 0 if slug is None else 1 + depth(parents.get(slug))

    ordered = sorted(rows, key=lambda r: depth(r["parent_slug"]))
    upsert_rows(
        connection, s.topics, ordered, conflict=["slug"], update=["name", "parent_slug", "terms"]
    )


@dataclass(frozen=True)
class SourceState:
    """What the database remembers of a source file from its last load."""

    checksum: str
    fingerprint: str
    format: str
    size: int
    mtime_ns: int | None


def source_state(connection: Connection, path: str) -> SourceState | None:
    """The recorded state of a source path, if it was loaded before."""
    c = s.sources.c
    row = connection.execute(
        select(c.checksum, c.fingerprint, c.format, c.size_bytes, c.mtime_ns).where(c.path == path)
    ).first()
    return SourceState(*row) if row else None


def touch_source(connection: Connection, path: str, mtime_ns: int) -> None:
    """Remember a new modification time for a file whose content did not change."""
    connection.execute(update(s.sources).where(s.sources.c.path == path).values(mtime_ns=mtime_ns))


def optimize_search(connection: Connection) -> None:
    """Merge the full-text index's segments after a large load (SQLite FTS5)."""
    if connection.dialect.name == "sqlite":
        connection.execute(text("INSERT INTO papers_fts(papers_fts) VALUES ('optimize')"))


def clear_data(connection: Connection) -> None:
    """Delete every paper and source (for --full-refresh); runs and rejects are history, kept."""
    for table in (*s.PAPER_CHILDREN, s.paper_sources, s.papers, s.sources):
        connection.execute(delete(table))
    delete_orphans(connection)

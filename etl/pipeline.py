"""The pipeline: the only module that wires extract, transform and load together."""

from __future__ import annotations

import glob
import itertools
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from etl import extract, load
from etl.config import mask_url, resolve_database_url, stored_url
from etl.errors import EtlError, SourceError, not_utf8, shown_bytes
from etl.extract.files import fingerprint as file_checksum
from etl.extract.files import resolved
from etl.failures import describe, is_database_failure
from etl.fingerprint import fingerprint
from etl.load.database import package_dir
from etl.models import Reject, RunReport, SourceFile, SourceReport
from etl.parallel import Result, TransformPool
from etl.progress import ProgressCallback, ReadMeter
from etl.signals import signals_held
from etl.spool import Spool
from etl.transform import Taxonomy, load_taxonomy

# Records per batch; one batch more than there are workers is in flight. Small enough to keep
# the workers busy and memory low, large enough for set-based writes (benchmarks/HISTORY.md).
BATCH_SIZE = 500
# ... and at most about this many characters, so that a batch of large records (each within
# the record size limit) stays small too.
BATCH_CHARS = 8 * 2**20
# A source rolled back because a concurrent loader changed a paper it shares (a deadlock
# between two sources' transactions, or a paper deleted under it) is loaded again, this often.
SOURCE_ATTEMPTS = 5
RETRIED_SQLSTATES = frozenset({"40P01", "40001", "23503"})
# Rejects kept of a file that fails for having too many (each holds at most 10,000 characters).
KEPT_REJECTS = 1_000


@dataclass(frozen=True)
class RunOptions:
    """What `etl run` was asked to do."""

    paths: tuple[str, ...] = ()
    database_url: str | None = None
    venue: str | None = None
    year: int | None = None
    taxonomy: str | None = None
    tagger: str = "model"  # topics and tasks by the learned tagger, or "rules" alone
    venues: str | None = None  # a TOML file of venues added to the packaged ones
    full_refresh: bool = False
    workers: int = 1
    wait: bool = False
    batch_size: int = BATCH_SIZE
    shard: tuple[int, int] | None = None  # (I, N): this loader takes files I, I+N, ... (1-based)
    remember_writes: bool = True  # False: the writer reads everything back (tests compare both)
    limits: extract.limits.Limits = extract.limits.DEFAULT  # what one record may cost
    source_format: str | None = None  # the shape of every file (etl.extract.FORMATS), not guessed
    prune: bool = False  # forget the sources under the given paths whose files are gone
    dask: str | None = None  # a Dask scheduler's address (or local, local:N) to load sources on


def default_paths() -> tuple[str, ...]:
    """The packaged seed lists, loaded when `etl run` is given no path."""
    return (str(package_dir("etl.seeds", "seeds")),)


def run(options: RunOptions, progress: ProgressCallback | None = None) -> RunReport:
    """Extract, transform and load every source; one transaction per source.

    Database and file-system failures are raised as the EtlError that names them
    (etl.failures), and the run is recorded as failed with that message.
    """
    started = time.perf_counter()
    if options.source_format is not None and options.source_format not in extract.FORMATS:
        names = ", ".join(extract.FORMATS)
        raise EtlError(f"unknown --source-format {options.source_format!r}; one of: {names}")
    url = resolve_database_url(options.database_url)
    if options.dask is not None:
        from etl.cluster import check_run

        check_run(url, options.dask)
    taxonomy = load_taxonomy(options.taxonomy, options.tagger)
    venues = extract.load_venues(options.venues)
    extract.use_venues(venues)
    extract.limits.use(options.limits)
    given = options.paths or default_paths()
    found = extract.discover_all([p for p in given if not _absent(p)] if options.prune else given)
    engine = load.create_db_engine(url)
    try:
        with load.run_lock(engine, wait=options.wait, exclusive=options.full_refresh) as lock:
            current = _run_class(options)(options, engine, taxonomy, venues, lock, progress)
            current.roots = source_roots(options.paths or default_paths())
            current.sources.extend(
                SourceReport(str(p), "unknown", "ignored", message="unsupported file type")
                for p in found.unsupported
            )
            current.sources.extend(
                SourceReport(str(p), "unknown", "ignored", message=why) for p, why in found.skipped
            )
            current.sources.extend(
                SourceReport(str(p), "unknown", "failed", message=f"{p}: {why}")
                for p, why in found.failed
            )
            with current.timed("migrate"):
                load.upgrade_to_head(engine)
            current.run_id, current.interrupted = load.start_run(
                engine, _options_record(options), lock
            )
            status, message = "failed", None
            try:
                with load.first_load_journal(engine):
                    current.load_all(shard(found.files, options.shard))
                status = current.status()
            except KeyboardInterrupt:
                status, message = "interrupted", "interrupted by the user"
                raise
            except Exception as exc:
                message = str(describe(exc, url))
                raise
            finally:
                report = current.report(status, started, mask_url(url))
                with signals_held():  # a second Ctrl-C must not leave the run `running`
                    load.finish_run(engine, report, message)
    except EtlError:
        raise
    except Exception as exc:
        if is_database_failure(exc):
            raise describe(exc, url) from exc
        raise
    finally:
        engine.dispose()
    return report


def _run_class(options: RunOptions) -> type[_Run]:
    """The local run, or one whose sources are loaded by a Dask cluster's workers."""
    if options.dask is None:
        return _Run
    from etl.cluster import DaskRun

    return DaskRun


def source_roots(paths: Sequence[str]) -> list[Path]:
    """The folders the user named: a folder itself, a file's own folder, a glob's folder
    before its first wildcard."""
    roots = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            roots.append(path.resolve())
        elif glob.has_magic(given):
            plain = list(itertools.takewhile(lambda part: not glob.has_magic(part), path.parts))
            roots.append(Path(*plain).resolve() if plain else Path.cwd())
        else:
            roots.append(resolved(path).parent)
    return roots


def shard(files: Sequence[Path], part: tuple[int, int] | None) -> list[Path]:
    """The files of shard I of N: the I-th of every N in sorted order (all, as found, for None).
    Loaders that split a corpus this way must each be given the same paths."""
    if part is None:
        return list(files)
    index, count = part
    return sorted(files)[index - 1 :: count]


class _Run:
    """One `etl run` in progress: what it was asked, where it writes, and what it has done."""

    def __init__(
        self,
        options: RunOptions,
        engine: Engine,
        taxonomy: Taxonomy,
        venues: extract.VenueTable,
        lock: load.RunLock,
        progress: ProgressCallback | None,
    ) -> None:
        self.options = options
        self.engine = engine
        self.taxonomy = taxonomy
        self.venues = venues
        self.lock = lock
        self.progress = progress
        self.meter = ReadMeter(progress)  # bytes read, for the estimate of the time left
        self.fingerprint = _fingerprint(taxonomy, venues, options)
        self.run_id = 0
        self.interrupted = 0  # earlier runs found dead: they may have left orphaned rows
        self.pool: TransformPool | None = None
        self.sources: list[SourceReport] = []
        self.counts = load.LoadCounts()
        self.stages: dict[str, float] = {}
        self.remembered: load.RememberedRows | None = None  # see start_memory
        self.roots: list[Path] = []  # the folders the user named (a file's own folder)

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the time spent inside to a stage's total."""
        tick = time.perf_counter()
        try:
            yield
        finally:
            self.stages[stage] = self.stages.get(stage, 0.0) + time.perf_counter() - tick

    def load_all(self, files: Sequence[Path]) -> None:
        """Load each source in its own transaction, then tidy shared rows."""
        self.prepare()
        self.meter.start(files)
        with ExitStack() as stack:
            self.pool = TransformPool(
                stack, self.options.workers, self.taxonomy, self.venues, self.options.limits
            )
            held = [path for path in files if not self._add(self.load_source(path, wait=False))]
            for path in held:  # another loader had them: wait for it (most are then unchanged)
                self._add(self.load_source(path, wait=True))
        if self.options.prune:
            self.prune()
        self.tidy()

    def prepare(self) -> None:
        """What comes before the first source: a full refresh's deletion, the topic and task
        sync, and the run's memory of its writes."""
        with self.engine.begin() as connection:
            load.hold_database(connection)
            if self.options.full_refresh:
                load.clear_data(connection)
            load.record_run_start(connection, self.run_id, self.options.full_refresh)
            load.sync_topics(connection, self.taxonomy.topics)
            load.sync_tasks(connection, self.taxonomy.tasks)
            self.start_memory(connection)

    def prune(self) -> None:
        """Forget the sources under the given paths (etl.extract.prune_scope) that are gone
        (etl.extract.gone_reasons): their sightings, and the papers seen nowhere else (each
        source in its own transaction)."""
        given = self.options.paths or default_paths()
        covered = extract.prune_scope(given)
        with self.engine.connect() as connection:
            known = [(i, path) for i, path in load.known_sources(connection) if covered(path)]
        gone = extract.gone_reasons(path for _, path in known)
        for source_id, path in known:
            if path in gone:
                self._forget(source_id, path, gone[path])
        for absent in filter(_absent, given):  # a gone file, or a glob matching only gone ones
            if not any(map(extract.prune_scope([absent]), gone)):
                why = "no file matches this pattern" if glob.has_magic(absent) else "no such file"
                message = f"{absent}: {why}, nor a source loaded from there"
                self._add(SourceReport(absent, "unknown", "failed", message=message))

    def _forget(self, source_id: int, path: str, why: str) -> None:
        """Forget one gone source, saying why and what left with it."""
        with self.transaction() as connection, signals_held():
            if not load.claim_source(connection, path, wait=True):
                return
            removed, deferred = load.forget_source(connection, source_id, self.run_id)
        if removed and self.remembered is not None:
            self.remembered.forget()
        self.counts.removed += removed
        self.counts.deferred += deferred
        message = f"{why}; {_papers(removed + deferred)} seen only there removed"
        self._add(SourceReport(path, "unknown", "pruned", message=message))

    def start_memory(self, connection: Connection) -> None:
        """Keep what this run writes in memory, when all the writer would read back is what
        this run wrote (etl.load.known). Unless the run was asked not to."""
        if self.options.remember_writes:
            self.remembered = load.RememberedRows.start(connection)

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A source's transaction; a rollback also forgets what the run remembered writing,
        since the database no longer holds all of it."""
        try:
            with self.engine.begin() as connection:
                yield connection
        except BaseException:
            if self.remembered is not None:
                self.remembered.forget()
            raise

    def _add(self, report: SourceReport | None) -> bool:
        """Count a source's outcome; False for a source another loader holds."""
        if report is None:
            return False
        self.sources.append(report)
        if self.progress:
            self.progress("source", 1)
        return True

    def tidy(self) -> None:
        """Delete orphaned lookup rows and papers whose removal another loader held up
        (waiting for other loaders to finish), and merge the search index's segments, when
        this run's work calls for it; then bring the planner's statistics up to date (in a
        transaction of its own, not holding other loaders up)."""
        counts = self.counts
        # Only these can leave rows no paper refers to: changed or removed papers, a source
        # that failed after adding its lookup rows, and a run that died meanwhile.
        failed = any(source.status == "failed" for source in self.sources)
        orphans = bool(
            counts.updated
            or counts.removed
            or counts.merged
            or counts.orphaned
            or failed
            or self.interrupted
        )
        unseen = bool(counts.deferred or self.interrupted)
        optimize = counts.inserted + counts.updated > 20_000  # many new FTS segments
        with self.timed("index"), self.engine.begin() as connection:
            if orphans or unseen:
                load.exclude_loaders(connection, self.lock)
            with signals_held():
                if unseen:
                    counts.removed += load.remove_all_unseen(connection, self.run_id)
                if orphans or unseen:
                    load.delete_orphans(connection)
                # edges a source left to the run's end (rows another loader held then)
                load.resolve_citations(connection)
                if optimize:
                    load.optimize_search(connection)
        changed = counts.inserted + counts.updated + counts.removed
        with self.timed("analyze"), self.engine.begin() as connection, signals_held():
            load.refresh_statistics(connection, changed)

    def load_source(self, path: Path, *, wait: bool) -> SourceReport | None:
        """Load one file atomically, again if a concurrent loader's change rolled it back."""
        self.meter.begin(path)
        report = self._load_attempts(path, wait=wait)
        if report is not None:
            self.meter.done(path)
        return report

    def _load_attempts(self, path: Path, *, wait: bool) -> SourceReport | None:
        """`load_source`'s attempts."""
        for _ in range(SOURCE_ATTEMPTS):
            try:
                return self._load_source(path, wait=wait)
            except DBAPIError as exc:
                if getattr(exc.orig, "sqlstate", None) not in RETRIED_SQLSTATES:
                    raise
                problem = str(exc.orig).splitlines()[0]
        message = f"{path}: rolled back {SOURCE_ATTEMPTS} times by other loaders ({problem})"
        return SourceReport(str(path), "unknown", "failed", message=message)

    def _load_source(self, path: Path, *, wait: bool) -> SourceReport | None:
        """Load one file atomically: all of its records, or (on a file-level error) none.
        None when another loader holds the file and `wait` is false."""
        source: SourceFile | None = None
        if not_utf8(str(path)):
            # Neither database stores text that is not Unicode; an escaped name stored
            # instead would no longer name the file (nor be told apart from a file really
            # named with a backslash), so the file fails, named with its bytes escaped.
            shown = shown_bytes(str(path))
            message = f"{shown}: the file name is not valid UTF-8: rename the file to load it"
            return SourceReport(shown, "unknown", "failed", message=message)
        try:
            with self.transaction() as connection:
                if not load.claim_source(connection, str(path), wait=wait):
                    return None
                arrival = self._arrival(connection, path)
                state, moved = arrival.state, arrival.moved_from
                fresh = self.options.full_refresh
                if state and not fresh and _looks_unchanged(path, state, self.fingerprint):
                    return _unchanged(str(path), state.format, moved)
                with self.timed("extract"):
                    source = _identified(path, self.options)
                known = (state.checksum, state.fingerprint) if state else None
                if not fresh and known == (source.checksum, self.fingerprint):
                    load.touch_source(connection, source.path, source.mtime_ns)
                    return _unchanged(source.path, source.format, moved)
                counts = self._write_source(connection, source)
                taken = self._take_over(connection, source.path, arrival.gone, counts)
        except SourceError as exc:
            where = (source.path, source.format) if source else (str(path), "unknown")
            kept = self._keep_rejects(exc.kept) if isinstance(exc, _TooManyRejects) else 0
            return SourceReport(*where, "failed", rejects=kept, message=str(exc))
        self.counts.add(counts)
        moved = moved or taken
        said = _moved_message(moved, counts.removed + counts.deferred) if moved else None
        return SourceReport(
            source.path, source.format, "loaded", counts.records, counts.rejects, said, moved
        )

    def _keep_rejects(self, rejects: Sequence[Reject]) -> int:
        """Write the first rejects of a source that failed for having too many (its own
        transaction rolled back), so that the `rejects` table shows why; how many."""
        with self.transaction() as connection, signals_held():
            load.record_rejects(connection, self.run_id, rejects)
        self.counts.rejects += len(rejects)
        return len(rejects)

    def _arrival(self, connection: Connection, path: Path) -> _Arrival:
        """What the database knows of a file: its state; for a path not seen before, the gone
        sources it may be, moved (a source with the same bytes takes its path at once)."""
        state = load.source_state(connection, str(path))
        if state is not None:
            return _Arrival(state)
        gone = self._gone_namesakes(connection, path)
        old = load.same_content(gone, str(path), _checksum(path)) if gone else None
        if old is not None and load.move_source(connection, old, str(path)):
            return _Arrival(load.source_state(connection, str(path)), old)
        return _Arrival(None, gone=[old for old, _ in gone])

    def _gone_namesakes(self, connection: Connection, path: Path) -> list[tuple[str, str]]:
        """(path, checksum) of the gone sources whose path ends as this file's does from the
        folder the user named down (a zip member is gone only with its archive or its entry)."""
        shallowest_first = sorted(self.roots, key=lambda root: len(root.parts))
        root = next((r for r in shallowest_first if path.is_relative_to(r)), path.parent)
        below = path.relative_to(root).as_posix()
        found = [x for x in load.moved_candidates(connection, below) if x[0] != str(path)]
        gone = extract.gone_reasons(old for old, _ in found)
        return [(old, checksum) for old, checksum in found if old in gone]

    def _take_over(
        self, connection: Connection, path: str, gone: Sequence[str], counts: load.LoadCounts
    ) -> str | None:
        """After loading a file not seen before: the gone source it holds enough papers of
        (etl.load.holds_enough), forgotten in the same transaction as the file moved and
        edited (its papers the file no longer lists leave); None when there is none."""
        shares = {}
        for candidate in gone:
            papers, held = load.moved_share(connection, candidate, path)
            if load.holds_enough(papers, held):
                shares[candidate] = held / papers
        old = load.taken_over(shares, path)
        if old is None or not load.claim_source(connection, old, wait=False):
            return None  # a source another loader holds stays, as gone files do
        source_id = load.source_id_of(connection, old)
        if source_id is None:  # another loader moved or forgot it meanwhile
            return None
        removed, deferred = load.forget_source(connection, source_id, self.run_id)
        if self.remembered is not None:
            self.remembered.forget()
        counts.removed += removed
        counts.deferred += deferred
        return old

    def _write_source(self, connection: Connection, source: SourceFile) -> load.LoadCounts:
        """Transform a source's records in batches and write them."""
        assert self.pool is not None
        with signals_held():
            loader = load.SourceLoader(
                connection, source, self.run_id, self.fingerprint, self.remembered
            )
        with loader:  # puts back what a fast first load changed in the schema, and closes
            batches = self.pool.transform(self._batches(source), partial(self.timed, "transform"))
            batches = _read_or_fail(source.path, batches)
            batches = _counted(source.path, batches, self.options.limits.rejects)
            if loader.shared:  # other loaders write meanwhile: every lock before any write
                batches = self._held_up_front(loader, batches)
            for papers, rejects in batches:
                with self.timed("load"), signals_held():
                    loader.write(papers, rejects)
                if self.progress:
                    self.progress("records", len(papers) + len(rejects))
                    self.meter.batch()
            with self.timed("load"), signals_held():  # the source's last writes
                return loader.finish()

    def _held_up_front(
        self, loader: load.SourceLoader, batches: Iterator[Result]
    ) -> Iterator[Result]:
        """Transform all of a source's batches first, kept on disk, and take every lock the
        source will hold from what its records are (etl.load.locks); then the batches."""
        spool: Spool[Result] = Spool()
        keys = load.FileKeys()
        try:
            for batch in batches:
                keys.add(batch[0])
                spool.add(batch)
            with self.timed("locks"), signals_held():
                loader.hold_up_front(keys)
        except BaseException:
            spool.close()
            raise
        return spool.drain()

    def _batches(self, source: SourceFile) -> Iterator[list[extract.Item]]:
        """Records in batches bounded in records and characters, timing the extraction (JSON
        Lines are parsed with the transform, in the workers)."""
        records = extract.read_items(source)
        while True:
            with self.timed("extract"):
                batch: list[extract.Item] = []
                size = 0
                for item in islice(records, self.options.batch_size):
                    batch.append(item)
                    size += extract.item_size(item)
                    if size > BATCH_CHARS:
                        break
            if not batch:
                return
            yield batch

    def status(self) -> str:
        """`succeeded`, or `partial` when a source failed or records were rejected."""
        failed = any(s.status == "failed" for s in self.sources)
        return "partial" if failed or self.counts.rejects else "succeeded"

    def report(self, status: str, started: float, database: str) -> RunReport:
        """The run's outcome and counts."""
        counts = self.counts
        return RunReport(
            run_id=self.run_id,
            status=status,
            sources=tuple(self.sources),
            papers_inserted=counts.inserted,
            papers_updated=counts.updated,
            papers_unchanged=counts.unchanged,
            papers_removed=counts.removed,
            links=counts.links,
            methods=counts.methods,
            rejects=counts.rejects,
            seconds=time.perf_counter() - started,
            stage_seconds=dict(self.stages),
            database=database,
        )


@dataclass(frozen=True)
class _Arrival:
    """What the database knows of a file about to be loaded: its state (None: a new source),
    the gone source it is when one with the same bytes took its path, and otherwise the
    gone sources it may be, moved and edited (etl.load.sources)."""

    state: load.SourceState | None
    moved_from: str | None = None
    gone: list[str] = field(default_factory=list)


def _unchanged(path: str, fmt: str, moved: str | None) -> SourceReport:
    """A source skipped as unchanged (perhaps moved from another path)."""
    message = _moved_message(moved, 0) if moved else None
    return SourceReport(path, fmt, "unchanged", message=message, moved_from=moved)


def _moved_message(old: str, removed: int) -> str:
    """What the summary says of a moved source."""
    left = f"; {_papers(removed)} it no longer lists removed" if removed else ""
    return f"moved from {old}{left}"


def _papers(count: int) -> str:
    return f"{count:,} paper{'' if count == 1 else 's'}"


def _absent(given: str) -> bool:
    """Whether a path given names nothing on disk: with `--prune`, not an error (the sources
    it names may be gone), unless it names no known source either."""
    if glob.has_magic(given) and not os.path.lexists(given):
        return not any(os.path.isfile(m) for m in glob.glob(given, recursive=True))
    return not os.path.lexists(given)


def _identified(path: Path, options: RunOptions) -> SourceFile:
    """The file identified (extract.identify); whatever reading its head raised is that
    file's failure."""
    try:
        return extract.identify(
            path, venue=options.venue, year=options.year, source_format=options.source_format
        )
    except Exception as exc:
        raise extract.unreadable(str(path), exc) from exc


def _read_or_fail(path: str, batches: Iterator[Result]) -> Iterator[Result]:
    """A source's transformed batches; whatever reading, parsing or transforming them raised
    (a reader's or decoder's error, a worker's MemoryError) is that source's failure, not the
    run's. The writes between them are not covered: a database failure stays the run's."""
    try:
        yield from batches
    except Exception as exc:
        raise extract.unreadable(path, exc) from exc


class _TooManyRejects(SourceError):
    """A file that is mostly rejects: it fails, and its first rejects are kept (caught by
    the source's load, never raised past it)."""

    def __init__(self, path: str, message: str, kept: list[Reject]) -> None:
        super().__init__(path, message)
        self.kept = kept


def _counted(path: str, batches: Iterator[Result], most: int) -> Iterator[Result]:
    """A source's batches, failing it (_TooManyRejects) once its rejects pass `most` and
    outnumber its records so far: a file that is mostly rejects (a binary or hostile file
    read as lines) would otherwise fill the `rejects` table with all of itself."""
    records = rejected = 0
    kept: list[Reject] = []
    for papers, rejects in batches:
        records += len(papers)
        rejected += len(rejects)
        kept.extend(rejects[: min(most, KEPT_REJECTS) - len(kept)])
        if rejected > most and rejected > records:
            raise _TooManyRejects(
                path,
                f"{rejected:,} of its first {records + rejected:,} records are rejects (over "
                f"--max-rejects {most:,}, and more than its records): the file fails; its "
                f"first {len(kept):,} rejects are kept in `rejects`",
                kept,
            )
        yield papers, rejects


def _fingerprint(taxonomy: Taxonomy, venues: extract.VenueTable, options: RunOptions) -> str:
    """What besides a file's bytes decides its papers: the loading code and package data
    (etl.fingerprint, the tagger's model among them), the taxonomy and the tagger chosen,
    venue spellings, overrides (venue, year, source format) and limits."""
    spellings = sorted(venues.names.items())
    inputs: list[object] = [taxonomy.topics, taxonomy.tasks, taxonomy.tagger, spellings]
    inputs += [options.venue, options.year]
    if options.source_format:
        inputs.append(options.source_format)
    if options.limits.for_records() != extract.limits.DEFAULT.for_records():
        inputs.append(options.limits.for_records())  # which records are rejected
    return fingerprint(inputs)


def _checksum(path: Path) -> str:
    """The file's SHA-256, or "" when it cannot be read (its load reports why)."""
    try:
        return file_checksum(path)[0]
    except SourceError:
        return ""


def _looks_unchanged(path: Path, state: load.SourceState, fingerprint: str) -> bool:
    """Same size, modification time and fingerprint as last loaded: no need to read it."""
    try:
        stat = extract.container_stat(str(path))  # a zip member's archive
    except OSError:
        return False
    return (state.fingerprint, state.size, state.mtime_ns) == (
        fingerprint,
        stat.st_size,
        stat.st_mtime_ns,
    )


def _options_record(options: RunOptions) -> dict[str, object]:
    """The run's options for the runs table: the database without any credential."""
    record = asdict(options)
    record["database_url"] = stored_url(resolve_database_url(options.database_url))
    del record["remember_writes"]  # how the writer works, not what the run was asked
    return record

"""The pipeline: the only module that wires extract, transform and load together."""

from __future__ import annotations

import hashlib
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path

from sqlalchemy import Engine

from etl import extract, load
from etl.config import mask_url, resolve_database_url, stored_url
from etl.errors import EtlError, SourceError
from etl.failures import describe, is_database_failure
from etl.load.database import package_dir
from etl.models import RunReport, SourceFile, SourceReport
from etl.parallel import TransformPool
from etl.transform import Taxonomy, load_taxonomy

# Bump when the transform's output changes, so unchanged sources are re-read once.
TRANSFORM_VERSION = "3"
# Records per batch; one batch more than there are workers is in flight. 500 rather than
# 1,000: at 100,000 records the wall was 67-72 s against 79 s, and the process tree peaked at
# 236 MB against 267 MB (250 gave 78 s): smaller batches keep the workers busier.
BATCH_SIZE = 500

ProgressCallback = Callable[[str, int], None]  # (event, count): "source" or "records"


@dataclass(frozen=True)
class RunOptions:
    """What `etl run` was asked to do."""

    paths: tuple[str, ...] = ()
    database_url: str | None = None
    venue: str | None = None
    year: int | None = None
    taxonomy: str | None = None
    venues: str | None = None  # a TOML file of venues added to the packaged ones
    full_refresh: bool = False
    workers: int = 1
    wait: bool = False
    batch_size: int = BATCH_SIZE


@dataclass
class _Totals:
    """Counts accumulated over a run's sources."""

    sources: list[SourceReport] = field(default_factory=list)
    counts: load.LoadCounts = field(default_factory=load.LoadCounts)
    stages: dict[str, float] = field(default_factory=dict)

    def time(self, stage: str, seconds: float) -> None:
        self.stages[stage] = self.stages.get(stage, 0.0) + seconds


def default_paths() -> tuple[str, ...]:
    """The packaged seed lists, loaded when `etl run` is given no path."""
    return (str(package_dir("etl.seeds", "seeds")),)


def run(options: RunOptions, progress: ProgressCallback | None = None) -> RunReport:
    """Extract, transform and load every source; one transaction per source.

    Database and file-system failures are raised as the EtlError that names them
    (etl.failures), and the run is recorded as failed with that message.
    """
    started = time.perf_counter()
    url = resolve_database_url(options.database_url)
    taxonomy = load_taxonomy(options.taxonomy)
    venues = extract.load_venues(options.venues)
    extract.use_venues(venues)
    found = extract.discover_all(options.paths or default_paths())
    files = found.files
    engine = load.create_db_engine(url)
    totals = _Totals(
        sources=[
            *(
                SourceReport(str(p), "unknown", "ignored", message="unsupported file type")
                for p in found.unsupported
            ),
            *(SourceReport(str(p), "unknown", "ignored", message=why) for p, why in found.skipped),
        ]
    )
    try:
        with load.run_lock(engine, wait=options.wait):
            tick = time.perf_counter()
            load.upgrade_to_head(engine)
            totals.time("migrate", time.perf_counter() - tick)
            run_id = load.start_run(engine, _options_record(options))
            status, message = "failed", None
            try:
                with load.first_load_journal(engine):
                    _load_all(engine, files, options, taxonomy, venues, run_id, totals, progress)
                status = _status(totals)
            except KeyboardInterrupt:
                status, message = "interrupted", "interrupted by the user"
                raise
            except Exception as exc:
                message = str(describe(exc, url))
                raise
            finally:
                report = _report(run_id, status, totals, started, mask_url(url))
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


def _load_all(
    engine: Engine,
    files: Sequence[Path],
    options: RunOptions,
    taxonomy: Taxonomy,
    venues: extract.VenueTable,
    run_id: int,
    totals: _Totals,
    progress: ProgressCallback | None,
) -> None:
    """Load each source in its own transaction, then tidy shared rows."""
    fingerprint = _fingerprint(taxonomy, venues, options)
    with engine.begin() as connection:
        if options.full_refresh:
            load.clear_data(connection)
        load.sync_topics(connection, taxonomy.topics)
        load.sync_tasks(connection, taxonomy.tasks)
    with ExitStack() as stack:
        pool = TransformPool(stack, options.workers, taxonomy, venues)
        for path in files:
            totals.sources.append(
                _load_source(engine, path, options, pool, run_id, fingerprint, totals, progress)
            )
            if progress:
                progress("source", 1)
    tick = time.perf_counter()
    with _signals_held(), engine.begin() as connection:
        if totals.counts.updated or totals.counts.removed:  # only these can orphan shared rows
            load.delete_orphans(connection)
        if totals.counts.inserted + totals.counts.updated > 20_000:  # many new FTS segments
            load.optimize_search(connection)
    totals.time("index", time.perf_counter() - tick)


def _load_source(
    engine: Engine,
    path: Path,
    options: RunOptions,
    pool: TransformPool,
    run_id: int,
    fingerprint: str,
    totals: _Totals,
    progress: ProgressCallback | None,
) -> SourceReport:
    """Load one file atomically: all of its records, or (on a file-level error) none."""
    with engine.connect() as connection:
        state = load.source_state(connection, str(path))
    if state and not options.full_refresh and _looks_unchanged(path, state, fingerprint):
        return SourceReport(str(path), state.format, "unchanged")
    tick = time.perf_counter()
    try:
        source = extract.identify(path, venue=options.venue, year=options.year)
    except SourceError as exc:
        return SourceReport(str(path), "unknown", "failed", message=str(exc))
    finally:
        totals.time("extract", time.perf_counter() - tick)
    if (
        state
        and not options.full_refresh
        and (state.checksum, state.fingerprint) == (source.checksum, fingerprint)
    ):
        with engine.begin() as connection:
            load.touch_source(connection, source.path, source.mtime_ns)
        return SourceReport(source.path, source.format, "unchanged")
    try:
        with engine.begin() as connection:
            with _signals_held():
                loader = load.SourceLoader(connection, source, run_id, fingerprint)
            for papers, rejects in pool.transform(
                _batches(source, options.batch_size, totals),
                lambda seconds: totals.time("transform", seconds),
            ):
                tick = time.perf_counter()
                with _signals_held():
                    loader.write(papers, rejects)
                totals.time("load", time.perf_counter() - tick)
                if progress:
                    progress("records", len(papers) + len(rejects))
            with _signals_held():
                counts = loader.finish()
    except SourceError as exc:
        return SourceReport(source.path, source.format, "failed", message=str(exc))
    totals.counts.add(counts)
    return SourceReport(source.path, source.format, "loaded", counts.records, counts.rejects)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while the loader writes; one that arrives meanwhile is
    delivered right after. Raised inside SQLite's executemany, the KeyboardInterrupt would
    leave a statement unfinished: SQLAlchemy then closes the connection without rolling back,
    the half-written transaction keeps the file locked while the exception propagates, and
    the run could not record itself as interrupted."""
    if not hasattr(signal, "pthread_sigmask"):  # not on Windows
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _batches(source: SourceFile, size: int, totals: _Totals) -> Iterator[list[extract.Item]]:
    """Records in bounded batches, timing the extraction (JSON Lines are parsed with the
    transform, in the workers)."""
    records = extract.read_items(source)
    while True:
        tick = time.perf_counter()
        batch = list(islice(records, size))
        totals.time("extract", time.perf_counter() - tick)
        if not batch:
            return
        yield batch


def _fingerprint(taxonomy: Taxonomy, venues: extract.VenueTable, options: RunOptions) -> str:
    """What besides a file's bytes decides its papers: transform version, taxonomy, venue
    spellings, overrides."""
    spellings = sorted(venues.names.items())
    decided_by = repr(
        (TRANSFORM_VERSION, taxonomy.topics, taxonomy.tasks, spellings, options.venue, options.year)
    )
    return hashlib.sha256(decided_by.encode("utf-8")).hexdigest()[:24]


def _looks_unchanged(path: Path, state: load.SourceState, fingerprint: str) -> bool:
    """Same size, modification time and fingerprint as last loaded: no need to read it."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return (state.fingerprint, state.size, state.mtime_ns) == (
        fingerprint,
        stat.st_size,
        stat.st_mtime_ns,
    )


def _status(totals: _Totals) -> str:
    """`succeeded`, or `partial` when a source failed or records were rejected."""
    failed = any(s.status == "failed" for s in totals.sources)
    return "partial" if failed or totals.counts.rejects else "succeeded"


def _options_record(options: RunOptions) -> dict[str, object]:
    """The run's options for the runs table: the database without any credential."""
    record = asdict(options)
    record["database_url"] = stored_url(resolve_database_url(options.database_url))
    return record


def _report(run_id: int, status: str, totals: _Totals, started: float, database: str) -> RunReport:
    counts = totals.counts
    return RunReport(
        run_id=run_id,
        status=status,
        sources=tuple(totals.sources),
        papers_inserted=counts.inserted,
        papers_updated=counts.updated,
        papers_unchanged=counts.unchanged,
        papers_removed=counts.removed,
        links=counts.links,
        methods=counts.methods,
        rejects=counts.rejects,
        seconds=time.perf_counter() - started,
        stage_seconds=dict(totals.stages),
        database=database,
    )

"""Runs past one machine: a run's sources loaded as tasks on a Dask cluster (`etl run --dask`).

The driver (the `etl run` process) does what a run does once: it takes the loaders' lock,
migrates, records the run, syncs topics and tasks, and at the end prunes, tidies and records
the outcome. Each source is one task: a worker loads it into the one PostgreSQL database
through the same per-source path as a local loader (`_Run.load_source`: the source's lock,
the identity locks, one transaction, reloaded when another loader's change rolled it back),
under the driver's run id. Workers coordinate through the database's locks exactly as
loaders started by hand do, so a Dask run, local runs and other Dask runs mix.

A worker that dies mid-source leaves nothing behind: its connection closes, the server rolls
its transaction back and releases its locks, and the scheduler runs the task again on
another worker (up to its `allowed-failures`; then the source is reported failed).
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy.engine import make_url

from etl import extract, load
from etl.errors import EtlError
from etl.failures import describe, is_database_failure
from etl.models import SourceReport
from etl.parallel import TransformPool
from etl.pipeline import RunOptions, _Run
from etl.transform import Taxonomy, load_taxonomy

if TYPE_CHECKING:
    from distributed import Client

PACKAGE = "paper-list-etl"
INSTALL_HINT = f"pip install '{PACKAGE}[dask]'"
CONNECT_SECONDS = 30  # how long the driver tries to reach a scheduler
# What a client raises when its scheduler goes away: its futures are cancelled (Dask's
# FutureCancelledError is a CancelledError), its connection closes (CommClosedError is an
# OSError), or a reconnection times out.
SCHEDULER_LOST = (CancelledError, OSError, TimeoutError)


def check_run(url: str, address: str) -> None:
    """Fail before anything is recorded when a `--dask` run cannot work: on SQLite (one
    writer, a file on one machine), without Dask installed, or with a malformed `local:N` or
    scheduler address."""
    if make_url(url).get_backend_name() != "postgresql":
        raise EtlError(
            "--dask needs a PostgreSQL database (--db postgresql+psycopg://USER@HOST/DB): "
            "SQLite has one writer, a file on one machine, which workers elsewhere cannot share"
        )
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise EtlError(f"--dask needs Dask's distributed scheduler: {INSTALL_HINT}") from exc
    if _is_local(address):
        _local_workers(address)
    else:
        _check_address(address)


def _check_address(address: str) -> None:
    """A scheduler address names a host, and a port that can exist (`tcp://HOST:PORT`): a
    port past 65535 would otherwise be waited on like an unreachable server."""
    parsed = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = parsed.port
    except ValueError:
        port = -1
    if not parsed.hostname or (port is not None and not 1 <= port <= 65535):
        raise EtlError(
            f"--dask {address!r} is not a scheduler address: expected tcp://HOST:PORT with a "
            "port from 1 to 65535, local or local:N"
        )


def _is_local(address: str) -> bool:
    """`local` or `local:N`: a cluster started by the run itself."""
    return address == "local" or address.startswith("local:")


def _local_workers(address: str) -> int | None:
    """How many worker processes `local:N` asks for (None: one a core)."""
    count = address.removeprefix("local").removeprefix(":")
    if count and not (count.isdigit() and int(count) >= 1):
        raise EtlError(f"--dask local:N needs a positive number of workers, got {address!r}")
    return int(count) if count else None


@dataclass(frozen=True)
class SourceJob:
    """What every task needs to load a source as part of the driver's run."""

    options: RunOptions
    url: str  # the database, as the driver was given it (workers connect with it)
    run_id: int
    fingerprint: str  # the driver's; a worker whose etl computes another one refuses to load
    roots: tuple[Path, ...]


@dataclass
class SourceOutcome:
    """What a task did: the source's report (None: another loader held it), what it wrote,
    and the time its stages took on the worker."""

    report: SourceReport | None
    counts: load.LoadCounts = field(default_factory=load.LoadCounts)
    stages: dict[str, float] = field(default_factory=dict)


class DaskRun(_Run):
    """A run whose sources are loaded by the workers of a Dask cluster."""

    def load_all(self, files: Sequence[Path]) -> None:
        """Send each source to the cluster, then (here) prune and tidy shared rows."""
        self.prepare()
        assert self.options.dask is not None
        job = SourceJob(
            options=self.options,
            url=self.engine.url.render_as_string(hide_password=False),
            run_id=self.run_id,
            fingerprint=self.fingerprint,
            roots=tuple(self.roots),
        )
        finished: dict[Path, SourceReport] = {}
        self.meter.start(files)
        try:
            with connect(self.options.dask) as client:
                held = self._load_on(client, job, files, finished, wait=False)
                # Another loader held them (a local run, or a worker that died and whose
                # connection the server has not closed yet): wait for it now, as a local
                # run does.
                self._load_on(client, job, held, finished, wait=True)
        except SCHEDULER_LOST as exc:
            self._add_unreported(files, finished)
            raise EtlError(
                f"lost the Dask scheduler at {self.options.dask!r} mid-run "
                f"({type(exc).__name__}); {len(finished)} of {len(files)} sources finished "
                "and are committed: rerun to load the rest"
            ) from exc
        finally:  # in the files' order, as a local run lists them, not as tasks finished
            self.sources.extend(finished[path] for path in files if path in finished)
        if self.options.prune:
            self.prune()
        self.tidy()

    def _add_unreported(self, files: Sequence[Path], finished: dict[Path, SourceReport]) -> None:
        """The sources workers committed for this run whose reports a lost scheduler never
        passed on: the run row counts them loaded."""
        with self.engine.connect() as connection:
            committed = load.paths_loaded_in(connection, self.run_id)
        for path in files:
            if path not in finished and str(path) in committed:
                message = "committed by a worker; the scheduler was lost before it reported"
                finished[path] = SourceReport(str(path), "unknown", "loaded", message=message)

    def _load_on(
        self,
        client: Client,
        job: SourceJob,
        paths: Sequence[Path],
        finished: dict[Path, SourceReport],
        *,
        wait: bool,
    ) -> list[Path]:
        """Load the sources as tasks, counting each as it finishes (its report into
        `finished`); the ones another loader held (without `wait`), in the given order."""
        from distributed import as_completed

        futures = {
            client.submit(load_source_task, job, str(path), wait, pure=False): path
            for path in paths
        }
        held: list[Path] = []
        try:
            for future in as_completed(futures):
                path = futures[future]
                outcome = _outcome(future, path)
                if outcome.report is None:
                    held.append(path)
                    continue
                self.counts.add(outcome.counts)
                for stage, seconds in outcome.stages.items():
                    self.stages[stage] = self.stages.get(stage, 0.0) + seconds
                finished[path] = outcome.report
                if self.progress:
                    self.progress("records", outcome.report.records + outcome.report.rejects)
                    self.progress("source", 1)
                self.meter.done(path)
        except BaseException:
            # A task already running finishes its source (a thread cannot be stopped); the
            # others never start.
            client.cancel(list(futures))
            raise
        return sorted(held, key=list(paths).index)


def _outcome(future: Any, path: Path) -> SourceOutcome:
    """A task's outcome; a source whose workers kept dying is reported failed."""
    from distributed import KilledWorker

    try:
        outcome: SourceOutcome = future.result()
    except KilledWorker:
        message = (
            f"{path}: the Dask workers loading it died more often than the scheduler allows "
            "(distributed.scheduler.allowed-failures); rerun to load it"
        )
        return SourceOutcome(SourceReport(str(path), "unknown", "failed", message=message))
    return outcome


@contextmanager
def connect(address: str) -> Iterator[Client]:
    """A client of the scheduler at `address`, or of a cluster started here for `local`
    (one worker process a core) or `local:N` (N worker processes)."""
    from distributed import Client, LocalCluster

    if _is_local(address):
        with (
            LocalCluster(
                n_workers=_local_workers(address),
                threads_per_worker=1,  # the transform holds the GIL: a process a worker
                processes=True,
                dashboard_address=":0",  # any free port: several runs may start one
                # its warnings (a worker slow to stop on a busy machine) are not the run's
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = Client(address, timeout=CONNECT_SECONDS)
    # unreachable (a timeout is an OSError), no address, or a protocol needing more (tls://)
    except (OSError, ValueError, TypeError) as exc:
        raise EtlError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from exc
    with _quiet("distributed"), client:  # quiet until the client has closed
        _check_workers(client)
        yield client


@contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Only critical records of a library's logger: its tracebacks of a lost connection would
    bury the run's own one-line error."""
    names = [n for n in logging.root.manager.loggerDict if n == name or n.startswith(f"{name}.")]
    loggers = [logging.getLogger(n) for n in {name, *names}]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _check_workers(client: Client) -> None:
    """The scheduler has workers, and every one has this version of etl installed (a task
    needs its code)."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except TimeoutError as exc:
        address = client.scheduler.address if client.scheduler else "the scheduler"
        raise EtlError(f"no Dask worker joined {address} within {CONNECT_SECONDS} s") from exc
    ours = importlib.metadata.version(PACKAGE)
    found = client.run(importlib.metadata.version, PACKAGE, on_error="return")
    for worker, version in sorted(found.items()):
        if isinstance(version, BaseException):
            raise EtlError(f"the Dask worker {worker} does not have etl installed: {INSTALL_HINT}")
        if version != ours:
            raise EtlError(f"the Dask worker {worker} has etl {version}, this machine {ours}")


def load_source_task(job: SourceJob, path: str, wait: bool) -> SourceOutcome:
    """On a worker: load one source as part of the driver's run, holding the loaders' lock
    shared meanwhile (so that the end-of-run deletion of orphans, ours or another run's, waits
    for it, as it waits for any loader)."""
    options = job.options
    try:
        taxonomy, venues = _transform_inputs(options.taxonomy, options.tagger, options.venues)
        extract.use_venues(venues)
        extract.limits.use(options.limits)
        engine = load.create_db_engine(job.url)
        try:
            with load.run_lock(engine, wait=True, exclusive=False) as lock, ExitStack() as stack:
                loader = _Run(options, engine, taxonomy, venues, lock, None)
                if loader.fingerprint != job.fingerprint:
                    raise EtlError(
                        "a Dask worker computes another fingerprint than the run (another "
                        "version of etl, or other taxonomy or venues files): install the same "
                        "etl everywhere and give every machine the same files"
                    )
                loader.run_id = job.run_id
                loader.roots = list(job.roots)
                # The cluster's workers are the processes: the transform runs inline.
                loader.pool = TransformPool(stack, 1, taxonomy, venues, options.limits)
                report = loader.load_source(Path(path), wait=wait)
                return SourceOutcome(report, loader.counts, loader.stages)
        finally:
            engine.dispose()
    except EtlError as exc:  # sent back as plain EtlError: subclasses may not unpickle
        raise EtlError(str(exc)) from None
    except Exception as exc:
        if is_database_failure(exc):
            raise EtlError(str(describe(exc, job.url))) from None
        raise


@functools.lru_cache(maxsize=4)
def _transform_inputs(
    taxonomy: str | None, tagger: str, venues: str | None
) -> tuple[Taxonomy, extract.VenueTable]:
    """The taxonomy and venues a worker transforms with, read once per worker process."""
    return load_taxonomy(taxonomy, tagger), extract.load_venues(venues)

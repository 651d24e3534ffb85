"""Running the pure transform in worker processes.

Workers import only this module, the models, the extract and transform stages (not SQLAlchemy
or the loader), so each stays small. They parse JSON Lines records (sent as their text)
and return `PaperRows`, which unpickle quickly in the loading process.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractContextManager, ExitStack, contextmanager

from etl.extract import Item, VenueTable, limits, parse_item, use_venues
from etl.models import PaperRows, RawRecord, Reject
from etl.signals import signals_held
from etl.transform import Taxonomy, transform_records

Batch = list[Item]
Result = tuple[list[PaperRows], list[Reject]]
# Times what it encloses: the transform inline, or the wait for a worker's result.
Timer = Callable[[], AbstractContextManager[None]]


def default_workers() -> int:
    """The machine's cores."""
    return os.cpu_count() or 1


class TransformPool:
    """Runs the transform inline, or in worker processes once a run has several batches."""

    def __init__(
        self,
        stack: ExitStack,
        workers: int,
        taxonomy: Taxonomy,
        venues: VenueTable | None = None,
        record_limits: limits.Limits = limits.DEFAULT,
    ):
        self.stack = stack
        self.workers = max(1, workers)
        self.taxonomy = taxonomy
        self.venues = venues
        self.limits = record_limits
        self.executor: Executor | None = None
        self.batches_seen = 0

    def transform(self, batches: Iterable[Batch], timer: Timer) -> Iterator[Result]:
        """Transformed batches in input order; one batch more than there are workers in flight."""
        pending: list[Future[Result]] = []
        for batch in batches:
            self.batches_seen += 1
            executor = self._executor()
            if executor is None:
                with timer():
                    result = transform_batch(batch, self.taxonomy)
                yield result
                continue
            with signals_held():  # submit may start a worker: never half-started
                pending.append(executor.submit(transform_batch, batch, None))
            while len(pending) > self.workers:
                yield self._wait(pending.pop(0), timer)
        while pending:
            yield self._wait(pending.pop(0), timer)

    def _wait(self, future: Future[Result], timer: Timer) -> Result:
        """A worker's result; its exception (a MemoryError) is raised here, for the source
        it was transforming to fail alone. A worker that died (killed for its memory) broke
        the pool: the next source starts another."""
        try:
            with timer():
                return future.result()
        except BrokenProcessPool:
            self.executor = None
            raise

    def _executor(self) -> Executor | None:
        if self.workers == 1 or self.batches_seen < 2:
            return None
        if self.executor is None:
            context = multiprocessing.get_context("spawn")
            self.executor = self.stack.enter_context(
                _stopped_on_failure(
                    ProcessPoolExecutor(
                        self.workers,
                        mp_context=context,
                        initializer=_init_worker,
                        initargs=(self.taxonomy, self.venues, self.limits, os.getpid()),
                    )
                )
            )
        return self.executor


@contextmanager
def _stopped_on_failure(executor: ProcessPoolExecutor) -> Iterator[ProcessPoolExecutor]:
    """The pool, shut down when the run is done with it; when the run is interrupted or fails,
    its workers are killed at once instead of finishing batches nobody will write (they only
    compute, so nothing of theirs needs finishing)."""
    try:
        yield executor
    except BaseException:
        # No public way stops a busy worker; `_processes` has been there since Python 3.2.
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.kill()
        raise
    executor.shutdown(wait=True)


_worker_taxonomy: Taxonomy | None = None


def _init_worker(
    taxonomy: Taxonomy, venues: VenueTable | None, record_limits: limits.Limits, parent: int
) -> None:
    """Give a worker the run's taxonomy, venues and limits, and make it exit if the run is
    killed."""
    global _worker_taxonomy
    _worker_taxonomy = taxonomy
    # Ctrl-C reaches every process of the terminal's group: the run stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    if venues is not None:  # JSON Lines records are read in the workers
        use_venues(venues)
    limits.use(record_limits)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()


def _exit_when_orphaned(parent: int) -> None:
    """A killed run (kill -9) cannot stop its workers; they notice and stop themselves
    (also when the run died before this worker finished starting)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def transform_batch(batch: Sequence[Item], taxonomy: Taxonomy | None) -> Result:
    """Parse what is left to parse, then transform a batch into rows for the writer; rejects
    pass through untouched."""
    chosen = taxonomy or _worker_taxonomy
    assert chosen is not None, "worker started without a taxonomy"
    records = [parse_item(item) for item in batch]
    raw = [item for item in records if isinstance(item, RawRecord)]
    papers = [PaperRows.from_bundle(bundle) for bundle in transform_records(raw, chosen)]
    rejects = [item for item in records if isinstance(item, Reject)]
    return papers, rejects

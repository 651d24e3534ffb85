"""etl's writer alone: a fresh SQLite load of N generated records without the transform's cost.

Usage: python benchmarks/bench_writer.py [--n 100000] [--seed 1] [--repeats 1] [--profile FILE]
       [--cache-mib MIB]

The records are transformed once, on every core, and the rows the workers return are kept in
`out/` (keyed by N, seed and the digest of the loading code and data). Each repeat is then a
real `etl run` into a fresh file, `--workers 1`, whose transform pool hands back those rows
instead of
computing them: migrations, identity resolution, every insert, the search index and the
commit all run as in any load, so the load and index stages it prints are the writer's own,
at sizes where a full run would spend most of its time transforming. `--profile` writes a
cProfile of the last repeat. Asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pickle
import statistics
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import ClassVar

from bench_load import OUT, dataset, remove_sqlite

import etl.load.database
import etl.pipeline
from etl.fingerprint import code_and_data_digest
from etl.parallel import Batch, Result, Timer, TransformPool
from etl.pipeline import RunOptions, run


class RecordingPool(TransformPool):
    """Transforms as usual, and keeps every result for `ReplayingPool`."""

    results: ClassVar[list[Result]] = []

    def transform(self, batches: Iterable[Batch], timer: Timer) -> Iterator[Result]:
        for result in super().transform(batches, timer):
            RecordingPool.results.append(result)
            yield result


class ReplayingPool(TransformPool):
    """Hands back the recorded results, batch for batch, without transforming."""

    results: ClassVar[list[Result]] = []

    def transform(self, batches: Iterable[Batch], timer: Timer) -> Iterator[Result]:
        replay = iter(ReplayingPool.results)
        for _ in batches:  # read as a run reads them (the extract stage stays timed)
            yield next(replay)


def transformed_rows(source: Path, workers: int) -> list[Result]:
    """The transform's results for the file, computed once and cached beside it."""
    cache = OUT / f"{source.stem}-rows-{code_and_data_digest()[:12]}.pickle"
    if cache.exists():
        with cache.open("rb") as handle:
            return pickle.load(handle)  # written by this script
    print(f"transforming {source.name} once → {cache}", flush=True)
    scratch = OUT / "bench_writer-transform.db"
    remove_sqlite(scratch)
    etl.pipeline.TransformPool = RecordingPool  # type: ignore[misc]
    try:
        run(RunOptions(paths=(str(source),), database_url=f"sqlite:///{scratch}", workers=workers))
    finally:
        etl.pipeline.TransformPool = TransformPool  # type: ignore[misc]
        remove_sqlite(scratch)
    partial = cache.with_suffix(".partial")
    with partial.open("wb") as handle:
        pickle.dump(RecordingPool.results, handle, protocol=pickle.HIGHEST_PROTOCOL)
    partial.rename(cache)
    return RecordingPool.results


def write_once(source: Path, database: Path, profile: Path | None) -> dict[str, float]:
    """One fresh load through the replaying pool: the run's stage seconds and its wall."""
    remove_sqlite(database)
    options = RunOptions(paths=(str(source),), database_url=f"sqlite:///{database}", workers=1)
    etl.pipeline.TransformPool = ReplayingPool  # type: ignore[misc]
    profiler = cProfile.Profile() if profile else None
    try:
        tick, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        report = run(options)
        if profiler:
            profiler.disable()
        wall = time.perf_counter() - tick
        cpu = time.process_time() - cpu
    finally:
        etl.pipeline.TransformPool = TransformPool  # type: ignore[misc]
    if profiler and profile:
        profiler.dump_stats(profile)
    stages = dict(report.stage_seconds)
    return {
        "load": stages.get("load", 0.0),
        "index": stages.get("index", 0.0),
        "wall": wall,
        "cpu": cpu,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="records (default 100,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2, help="for the one-off transform")
    parser.add_argument("--profile", type=Path, help="cProfile output of the last repeat")
    parser.add_argument(
        "--cache-mib", type=int, help="SQLite page cache per connection (default: etl's own)"
    )
    args = parser.parse_args(argv)
    if args.cache_mib:
        etl.load.database.SQLITE_CACHE_KIB = args.cache_mib * 1024
    source = dataset(args.n, args.seed)
    ReplayingPool.results = transformed_rows(source, args.workers)
    # A run holds a few batches at a time, not all of them: keep the garbage collector from
    # scanning the replayed rows, which would slow the writer as a run's never is.
    gc.collect()
    gc.freeze()
    database = OUT / "bench_writer.db"
    runs = []
    for repeat in range(args.repeats):
        last = repeat == args.repeats - 1
        runs.append(write_once(source, database, args.profile if last else None))
        print(
            f"repeat {repeat + 1}: load {runs[-1]['load']:.2f} s, index {runs[-1]['index']:.2f} s,"
            f" run {runs[-1]['wall']:.2f} s, run CPU {runs[-1]['cpu']:.2f} s",
            flush=True,
        )
    writer = statistics.median(r["load"] + r["index"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    print(f"etl writer (load + index), {args.n:,} records: {writer:.2f} s (median)")
    print(f"the run's CPU (process time, main process), {args.n:,} records: {cpu:.2f} s (median)")
    remove_sqlite(database)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

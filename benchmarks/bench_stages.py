"""Where etl's CPU goes, per record, beside the CPU that the load target leaves it.

Usage: python benchmarks/bench_stages.py [--n 20000] [--seed 1] [--cores C] [--ratio 2.0]

1. sqlite-utils insert + enable-fts of N generated records (as bench_load.py runs it): its
   wall time sets the target, `ratio` times that wall. On C cores a run that short can use at
   most ratio x wall x C CPU seconds: the budget.
2. `etl run --workers 1` of the same records into a fresh SQLite file: with one process, its
   own seconds per stage are CPU seconds of one core. The load and index stages are what the
   main process does in any run, however many workers transform.
3. In this process, on the same records (fresh caches, as in a worker): the transform's steps,
   each of etl.transform's calls timed for one pass, and what a worker does around them (JSON
   parsing, flattening to PaperRows, pickling batches to and from the workers). A worker's
   steps are CPU (process) time; the transform's calls are timed by the wall clock and given
   their share of the transform's CPU time.

Prints microseconds per record for each, and the budget per record. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

from bench_load import ETL_OK, OUT, Bench, dataset, remove_sqlite, tool
from measure import Sample

import etl.transform
from etl.extract import identify, parse_item, read_items
from etl.models import PaperRows, RawRecord
from etl.transform import load_taxonomy, transform

# etl.transform's calls, in the order `transform` makes them
TRANSFORM_STEPS = (
    "clean_text",
    "find_acronyms",
    "emphasized",
    "find_methods",
    "collect_links",
    "topics_and_tasks",
    "identify",
    "external_ids",
    "content_hash",
)


WALL = "wall "  # the key of a worker step's wall time


def etl_stage_seconds(database: Path) -> dict[str, float]:
    """The seconds per stage that etl recorded for its last run in the database."""
    with sqlite3.connect(database) as connection:
        row = connection.execute("SELECT stage_seconds FROM runs ORDER BY id DESC").fetchone()
    stages: dict[str, float] = json.loads(row[0])
    return stages


@contextmanager
def timed_steps(totals: dict[str, float]) -> Iterator[None]:
    """Wrap etl.transform's calls so that each adds its seconds to `totals`; unwrapped after."""
    originals = {name: getattr(etl.transform, name) for name in TRANSFORM_STEPS}

    def timer(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            tick = time.perf_counter()
            result = function(*args, **kwargs)
            totals[name] = totals.get(name, 0.0) + time.perf_counter() - tick
            return result

        return call

    for name, function in originals.items():
        setattr(etl.transform, name, timer(name, function))
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(etl.transform, name, function)


def worker_steps(records: Path, batch_size: int) -> dict[str, float]:
    """Seconds of each step a worker takes over all the records, in this process."""
    taxonomy = load_taxonomy()
    seconds: dict[str, float] = {}

    @contextmanager
    def step(name: str) -> Iterator[None]:
        """CPU time of a step (and its wall time, to scale the transform's calls by)."""
        tick, wall = time.process_time(), time.perf_counter()
        yield
        seconds[name] = seconds.get(name, 0.0) + time.process_time() - tick
        seconds[WALL + name] = seconds.get(WALL + name, 0.0) + time.perf_counter() - wall

    items = read_items(identify(records))
    with timed_steps(seconds):
        while batch := list(islice(items, batch_size)):
            with step("pickle to worker"):
                received = pickle.loads(pickle.dumps(batch))
            with step("parse JSON"):
                parsed = [parse_item(item) for item in received]
            with step("transform"):
                bundles = [transform(r, taxonomy) for r in parsed if isinstance(r, RawRecord)]
            with step("PaperRows"):
                rows = [PaperRows.from_bundle(b) for b in bundles]
            with step("pickle back"):  # to the loader
                pickle.loads(pickle.dumps((rows, [])))
    return seconds


def print_report(
    n: int,
    args: argparse.Namespace,
    su: Sample,
    one_process: Sample,
    stages: dict[str, float],
    steps: dict[str, float],
) -> None:
    """The three measurements per record, and the budget."""
    us = 1e6 / n
    budget = args.ratio * su.wall * args.cores
    loader = stages.get("load", 0.0) + stages.get("index", 0.0)
    print(f"\n{n:,} records; microseconds per record of one core's CPU")
    print(f"sqlite-utils insert + enable-fts: {su.wall:.2f} s wall, {su.cpu:.2f} s CPU")
    print(f"  = {su.cpu * us:.0f} us of CPU per record for its whole load")
    print(
        f"budget: etl in <= {args.ratio:g} x {su.wall:.2f} s on {args.cores} cores may use "
        f"{budget:.1f} s of CPU = {budget * us:.0f} us per record"
    )
    stage_list = ", ".join(f"{k} {v:.2f}" for k, v in stages.items())
    print(
        f"etl run --workers 1: {one_process.wall:.2f} s wall, {one_process.cpu:.2f} s CPU "
        f"({stage_list})"
    )
    print(
        f"  = {one_process.cpu * us:.0f} us per record; "
        f"load + index stages alone {loader * us:.0f} us"
    )
    # the transform's calls are timed by the wall clock (a CPU clock costs a system call per
    # reading): their shares of the transform's wall time, applied to its CPU time
    scale = steps["transform"] / steps[WALL + "transform"]
    parts = sum(steps.get(name, 0.0) for name in TRANSFORM_STEPS) * scale
    print("worker steps, in this process (CPU time):")
    for name in ("pickle to worker", "parse JSON", "transform"):
        print(f"  {name:<22}{steps[name] * us:>8.0f}")
    for name in TRANSFORM_STEPS:
        print(f"    {name:<20}{steps.get(name, 0.0) * scale * us:>8.0f}")
    print(f"    {'(the rest)':<20}{(steps['transform'] - parts) * us:>8.0f}")
    for name in ("PaperRows", "pickle back"):
        print(f"  {name:<22}{steps[name] * us:>8.0f}")
    worker = sum(v for k, v in steps.items() if k not in TRANSFORM_STEPS and not k.startswith(WALL))
    print(f"  {'a worker in all':<22}{worker * us:>8.0f}")
    print(
        f"etl needs {(worker + loader) * us:.0f} us per record (worker steps + load and index) "
        f"against a budget of {budget * us:.0f}"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="records (default 20,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ratio", type=float, default=2.0, help="the target: etl/sqlite-utils")
    parser.add_argument("--batch-size", type=int, default=500, help="records per worker batch")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    OUT.mkdir(exist_ok=True)
    records = dataset(args.n, args.seed)
    bench = Bench(records, workers=1, timeout=None, etl_env=None)
    su_db, etl_db = OUT / "stages_sqlite_utils.db", OUT / "stages_etl.db"
    remove_sqlite(su_db)
    su = bench.sqlite_utils_load(su_db)
    remove_sqlite(etl_db)
    one_process = bench.run(
        [tool("etl"), "run", str(records), "--db", f"sqlite:///{etl_db}", "--workers", "1"],
        "etl run",
    )
    stages = etl_stage_seconds(etl_db) if one_process.returncode in ETL_OK else {}
    for path in (su_db, etl_db):
        remove_sqlite(path)
    if su.returncode or not stages:
        return 1
    print_report(args.n, args, su, one_process, stages, worker_steps(records, args.batch_size))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where one loader's time goes on PostgreSQL: statements, round trips and server waits.

Usage: python benchmarks/bench_statements.py [--n 20000] [--files 16] [--seed 1] [--top 25]
                                             [--pg-server URL] [--sqlite]

Loads the generated corpus of bench_loaders.py (N records in K files) into a fresh database
with one loader, in this process (`--workers 1`), while

- every statement SQLAlchemy sends is timed from the client (the round trip: the server's
  work and the wait for it), grouped by its first words, with its count (the rows `COPY`
  sends into staging tables go through the driver directly and are not counted);
- another connection samples, every 20 ms, what the loader's server sessions are doing
  (`pg_stat_activity`: running, waiting for a lock, for I/O, for the client...).

Prints the run's stages, the statements by total time, and the samples by wait. With
`--sqlite` it loads the same files into a fresh SQLite file instead (the stages only), for the
ratio the issue asks for. Asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import threading
import time
from collections import Counter, defaultdict
from typing import Any

from bench_load import DEFAULT_PG_SERVER, recreate_database
from bench_loaders import corpus
from sqlalchemy import event
from sqlalchemy.engine import Engine

from etl.pipeline import RunOptions, run

DATABASE = "etl_bench_statements"
WORDS = re.compile(r"\s+")


class Statements:
    """Client-side time of every statement, by its shape (first words, numbers dropped)."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.count: Counter[str] = Counter()
        self.rows: Counter[str] = Counter()
        self.started: dict[int, float] = {}

    def before(self, conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        self.started[id(cursor)] = time.perf_counter()

    def after(self, conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        spent = time.perf_counter() - self.started.pop(id(cursor), time.perf_counter())
        shape = WORDS.sub(" ", re.sub(r"\d+", "N", statement)).strip()[:110]
        self.seconds[shape] += spent
        self.count[shape] += 1
        if isinstance(params, list):
            self.rows[shape] += len(params)

    def commit(self, conn: Any) -> None:
        self.count["COMMIT"] += 1


def sample_waits(url: str, stop: threading.Event, found: Counter[str]) -> None:
    """Count what the database's other sessions are doing, every 20 ms (through psycopg
    itself, so that these queries are not counted among the loader's statements)."""
    import psycopg

    query = (
        "SELECT coalesce(wait_event_type || ':' || wait_event, 'running:' || state) "
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND state IS NOT NULL AND state <> 'idle'"
    )
    plain = url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(plain, autocommit=True) as connection:
        while not stop.is_set():
            for (what,) in connection.execute(query):
                found[what] += 1
            found["(samples)"] += 1
            time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--pg-server", default=DEFAULT_PG_SERVER)
    parser.add_argument("--sqlite", action="store_true", help="load into SQLite instead")
    args = parser.parse_args()
    folder = corpus(args.n, args.files, args.seed)
    if args.sqlite:
        with tempfile.TemporaryDirectory() as scratch:
            url = f"sqlite:///{scratch}/papers.db"
            report = run(RunOptions(paths=(str(folder),), database_url=url, workers=1))
        print(f"SQLite: {report.seconds:.1f} s", _stages(report.stage_seconds))
        return
    url = recreate_database(args.pg_server, DATABASE)
    statements = Statements()
    event.listen(Engine, "before_cursor_execute", statements.before)
    event.listen(Engine, "after_cursor_execute", statements.after)
    event.listen(Engine, "commit", statements.commit)
    waits: Counter[str] = Counter()
    stop = threading.Event()
    sampler = threading.Thread(target=sample_waits, args=(url, stop, waits))
    sampler.start()
    try:
        report = run(RunOptions(paths=(str(folder),), database_url=url, workers=1))
    finally:
        stop.set()
        sampler.join()
        recreate_database(args.pg_server, DATABASE, drop_only=True)
    total = sum(statements.seconds.values())
    print(f"PostgreSQL: {report.seconds:.1f} s", _stages(report.stage_seconds))
    calls = sum(c for k, c in statements.count.items() if k != "COMMIT")
    print(f"{calls:,} statements, {statements.count['COMMIT']:,} commits, {total:.1f} s in them")
    print(f"{'seconds':>8} {'calls':>7} {'rows':>8}  statement")
    ranked = sorted(statements.seconds.items(), key=lambda item: -item[1])
    for shape, seconds in ranked[: args.top]:
        count, rows = statements.count[shape], statements.rows[shape]
        print(f"{seconds:8.2f} {count:7d} {rows:8d}  {shape}")
    samples = waits.pop("(samples)", 1)
    print(f"server sessions over {samples} samples (share of samples):")
    for what, count in waits.most_common():
        print(f"  {count / samples:6.1%}  {what}")


def _stages(stages: dict[str, float]) -> str:
    return "(" + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()) + ")"


if __name__ == "__main__":
    main()

"""Four loaders on files that share many papers with their neighbours, against a serial load.

Usage (from the repository root, which holds the tests' helpers):
    PYTHONPATH=. python benchmarks/bench_shared_loaders.py [--files 8] [--per-file 3000]
        [--shared 500] [--loaders 4] [--runs 5] [--pg-server URL]

The full size of the concurrent-loaders test (tests/e2e/test_concurrent_loaders.py runs a
smaller one): records of about 23 rows a paper (authors, links, methods and acronyms shared
between papers), each file's lines shuffled, `shared` records of each file also in the next. Loads
them once serially, then `--runs` times with `--loaders` `etl run --shard I/L` processes
started together into a fresh database; for each run prints the loaders' exit codes, the
server's deadlock count, the wall time, and whether every table equals the serial load's by
natural keys. Exits 1 if any run differs or a loader failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from bench_load import DEFAULT_PG_SERVER, OUT, recreate_database
from sqlalchemy import create_engine, text

from etl.load import upgrade_to_head
from tests.helpers import (
    LOADERS_KEY,
    fetch_one,
    load,
    snapshot,
    wait_until_blocked,
    write_shared_heavy,
)

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [sys.executable, "-m", "etl", "run", "-q", "--workers", "1"]
DEADLOCKS = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"


def together(folder: Path, url: str, loaders: int) -> tuple[list[int], float]:
    """Start the loaders at once (held back until all wait); their exit codes and the wall."""
    engine = create_engine(url)
    try:
        upgrade_to_head(engine)
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), LOADERS_KEY)
            processes = [
                subprocess.Popen(
                    [*COMMAND, str(folder), "--shard", f"{index}/{loaders}", "--db", url],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                )
                for index in range(1, loaders + 1)
            ]
            wait_until_blocked(url, sessions=loaders, seconds=600)
            started = time.perf_counter()
            connection.execute(text("SELECT pg_advisory_unlock(:a, :b)"), LOADERS_KEY)
            connection.commit()
        codes = [process.wait() for process in processes]
        return codes, time.perf_counter() - started
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--per-file", type=int, default=3000)
    parser.add_argument("--shared", type=int, default=500)
    parser.add_argument("--loaders", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pg-server", default=DEFAULT_PG_SERVER)
    args = parser.parse_args()
    folder = OUT / f"shared-heavy-{args.files}x{args.per_file}-{args.shared}"
    if not folder.exists():
        write_shared_heavy(folder, args.files, args.per_file, args.shared)
    serial_url = recreate_database(args.pg_server, "etl_bench_shared_serial")
    started = time.perf_counter()
    load(serial_url, folder)
    print(f"serial load: {time.perf_counter() - started:.1f} s", flush=True)
    expected = snapshot(serial_url)
    print(f"{len(expected['papers']):,} papers")
    failed = False
    for number in range(1, args.runs + 1):
        url = recreate_database(args.pg_server, "etl_bench_shared")
        codes, wall = together(folder, url, args.loaders)
        same = snapshot(url) == expected
        deadlocks = fetch_one(url, DEADLOCKS)
        print(
            f"run {number}: exit codes {codes}, {deadlocks} deadlocks, {wall:.1f} s, equal: {same}"
        )
        failed = failed or not same or any(codes)
    for name in ("etl_bench_shared", "etl_bench_shared_serial"):
        recreate_database(args.pg_server, name, drop_only=True)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()

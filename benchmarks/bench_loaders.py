"""Several `etl run` processes loading one corpus into one PostgreSQL database at once.

Usage: python benchmarks/bench_loaders.py [--n 200000] [--files 16] [--loaders 1,2,4]
                                          [--workers 1] [--claim] [--pg-server URL] [--seed 1]
                                          [--rev REV]

Generates N records split into K JSON Lines files (benchmarks/generate.py --files, cached in
benchmarks/out/), then for each loader count L: a fresh database, L real `etl run` processes
started together on the same folder, each given `--shard I/L` (or, with --claim, all of them
every file: they claim files through the database). Prints the wall time from the first
start to the last exit, the loaders' CPU (user + system, all their processes), the local
server's CPU over the same span, and the papers loaded. `--rev` runs a committed revision
(benchmarks/snapshot.py), isolated from edits in the working tree; a revision from before
`--shard` can only be run with one loader. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import generate
import snapshot
from bench_load import DEFAULT_PG_SERVER, OUT, recreate_database
from measure import processes_cpu_seconds

DATABASE = "etl_bench_loaders"


def corpus(n: int, files: int, seed: int) -> Path:
    """The cached folder of N generated records in K files."""
    folder = OUT / f"records-{n}-s{seed}-v{generate.VERSION}-files{files}"
    if not folder.exists():
        print(f"generating {n:,} records in {files} files → {folder}", flush=True)
        partial = folder.with_suffix(".partial")
        generate.generate(n, partial, seed=seed, files=files)
        partial.rename(folder)
    return folder


def load_together(
    folder: Path, url: str, loaders: int, workers: int, claim: bool, env: dict[str, str] | None
) -> dict[str, float | None]:
    """Start `loaders` etl runs at once; their wall, CPU, and the server's CPU meanwhile."""
    server_before = processes_cpu_seconds("postgres")
    children_before = os.times()
    started = time.perf_counter()
    processes = []
    for index in range(1, loaders + 1):
        command = [sys.executable, "-m", "etl", "run", str(folder), "-q", "--db", url]
        command += ["--workers", str(workers)]
        if not claim and loaders > 1:
            command += ["--shard", f"{index}/{loaders}"]
        processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env))
    outputs = [process.communicate()[0] for process in processes]
    wall = time.perf_counter() - started
    children_after = os.times()
    server_after = processes_cpu_seconds("postgres")
    failed = [p.returncode for p in processes if p.returncode not in (0, 3)]
    if failed:
        raise SystemExit(f"a loader failed ({failed}):\n" + "\n".join(outputs))
    cpu = (children_after.children_user - children_before.children_user) + (
        children_after.children_system - children_before.children_system
    )
    server = None if server_before is None or server_after is None else server_after - server_before
    return {"wall": wall, "cpu": cpu, "server": server}


def papers(url: str) -> int:
    """How many papers the database holds."""
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1)) as connection:
        row = connection.execute("SELECT count(*) FROM papers").fetchone()
    return int(row[0]) if row else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--loaders", default="1,2,4", help="loader counts, comma separated")
    parser.add_argument("--workers", type=int, default=1, help="transform workers per loader")
    parser.add_argument("--claim", action="store_true", help="no --shard: claim files in the db")
    parser.add_argument("--pg-server", default=DEFAULT_PG_SERVER)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rev", help="a committed revision to run (default: the working tree)")
    args = parser.parse_args()
    env = snapshot.environment(snapshot.prepare(args.rev)) if args.rev else None
    folder = corpus(args.n, args.files, args.seed)
    mode = "claiming files through the database" if args.claim else "--shard I/L"
    code = f"revision {args.rev}" if args.rev else "the working tree"
    print(
        f"{args.n:,} records in {args.files} files, {mode}, --workers {args.workers} each, {code}"
    )
    print(
        f"{'loaders':>7} {'wall s':>8} {'speed-up':>8} {'loaders CPU s':>14} {'server CPU s':>13}"
    )
    first = None
    for count in (int(c) for c in args.loaders.split(",")):
        url = recreate_database(args.pg_server, DATABASE)
        result = load_together(folder, url, count, args.workers, args.claim, env)
        wall, cpu, server = result["wall"] or 0.0, result["cpu"] or 0.0, result["server"]
        first = first or wall
        server_cpu = "" if server is None else f"{server:13.1f}"
        print(
            f"{count:7d} {wall:8.1f} {first / wall:7.2f}x "
            f"{cpu:14.1f} {server_cpu}  ({papers(url):,} papers)",
            flush=True,
        )
    recreate_database(args.pg_server, DATABASE, drop_only=True)


if __name__ == "__main__":
    main()

"""Reads on PostgreSQL after several loads with autovacuum off, before and after `ANALYZE`.

Usage: python benchmarks/bench_analyze.py LISTS_FOLDER [--rev REV] [--pg-server URL]
                                          [--repeats 3] [--keep]

The planner's statistics come from `ANALYZE`; with autovacuum off (common on a server tuned for
bulk loads, or switched off for one database) only the loader can keep them current. This loads
the folder's lists (sorted by name) into a fresh database whose tables have autovacuum off, as
a user would over a few days: the first list alone, the next two by two `etl run` processes at
once, the next alone, the rest by two processes at once. Then it times `SELECT * FROM
method_lineage` (every row fetched; best of `--repeats`) and `etl report`, runs `ANALYZE` by
hand, and times both again. `--rev` runs a committed revision of etl (benchmarks/snapshot.py),
e.g. the one before the loader analysed what it wrote.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_load import DEFAULT_PG_SERVER, recreate_database
from snapshot import prepare, resolve

ROOT = Path(__file__).resolve().parent.parent
DATABASE = "etl_bench_analyze"
STATISTICS = (
    "SELECT relname, n_live_tup, n_mod_since_analyze, last_analyze IS NOT NULL "
    "OR last_autoanalyze IS NOT NULL FROM pg_stat_user_tables "
    "WHERE relname IN ('papers', 'paper_methods', 'paper_sources', 'acronyms') ORDER BY relname"
)


def etl(environment: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m etl ARGS` with the chosen revision first on the path."""
    return subprocess.run(
        [sys.executable, "-m", "etl", *args], env=environment, capture_output=True, text=True
    )


def load(environment: dict[str, str], url: str, *files: Path) -> None:
    """One loader per file, started together; each must finish (exit 0, or 3 for rejects)."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "etl", "run", "-q", str(path), "--db", url],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in files
    ]
    for process, path in zip(processes, files, strict=True):
        _, errors = process.communicate()
        if process.returncode not in (0, 3):
            raise SystemExit(f"loading {path} failed ({process.returncode}): {errors}")


def autovacuum_off(url: str) -> None:
    """Switch autovacuum (and so auto-analyze) off for every table of the database."""
    import psycopg

    with psycopg.connect(_plain(url), autocommit=True) as connection:
        names = [
            r[0]
            for r in connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            )
        ]
        for name in names:
            connection.execute(
                f'ALTER TABLE "{name}" SET (autovacuum_enabled = false, '
                "toast.autovacuum_enabled = false)"
            )


def reads(environment: dict[str, str], url: str, repeats: int) -> tuple[float, float, int]:
    """Best wall time of `SELECT * FROM method_lineage` (fetched), that of `etl report`, rows."""
    import psycopg

    lineage = []
    rows = 0
    with psycopg.connect(_plain(url)) as connection:
        for _ in range(repeats):
            started = time.perf_counter()
            rows = len(connection.execute("SELECT * FROM method_lineage").fetchall())
            lineage.append(time.perf_counter() - started)
            connection.rollback()
    report = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(repeats):
            started = time.perf_counter()
            done = etl(environment, "report", "--db", url, "-o", str(Path(folder) / "r.html"))
            report.append(time.perf_counter() - started)
            if done.returncode != 0:
                raise SystemExit(f"etl report failed: {done.stderr}")
    return min(lineage), min(report), rows


def statistics(url: str) -> list[tuple[object, ...]]:
    """What the statistics views say of the main tables (live rows, changes since analysed)."""
    import psycopg

    with psycopg.connect(_plain(url)) as connection:
        return [tuple(row) for row in connection.execute(STATISTICS)]


def _plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lists", type=Path, help="a folder of list files (six or more)")
    parser.add_argument("--rev", help="a committed revision of etl to run (default: this tree)")
    parser.add_argument("--pg-server", default=DEFAULT_PG_SERVER)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()
    environment = dict(os.environ)
    code = "the working tree"
    if args.rev:
        environment["PYTHONPATH"] = str(prepare(args.rev))
        code = f"revision {resolve(args.rev)}"
    files = sorted(p for p in args.lists.iterdir() if p.is_file())
    if len(files) < 6:
        raise SystemExit(f"{args.lists}: needs six list files or more, found {len(files)}")
    url = recreate_database(args.pg_server, DATABASE)
    with tempfile.TemporaryDirectory() as empty:
        etl(environment, "run", "-q", empty, "--db", url)  # the schema, before autovacuum goes
    autovacuum_off(url)
    steps = [files[:1], files[1:3], files[3:4], files[4:]]
    started = time.perf_counter()
    for step in steps:
        load(environment, url, *step)
    loading = time.perf_counter() - started
    print(
        f"etl: {code}; {len(files)} lists loaded in {len(steps)} runs ({loading:.1f} s), "
        "two of them by two loaders at once, autovacuum off"
    )
    print("table statistics (table, live rows, changed since analysed, ever analysed):")
    for row in statistics(url):
        print("   ", row)
    lineage, report, rows = reads(environment, url, args.repeats)
    print(
        f"as loaded:        method_lineage {lineage:7.2f} s ({rows:,} rows), "
        f"etl report {report:6.2f} s"
    )
    import psycopg

    with psycopg.connect(_plain(url), autocommit=True) as connection:
        connection.execute("ANALYZE")
    lineage, report, rows = reads(environment, url, args.repeats)
    print(
        f"after ANALYZE:    method_lineage {lineage:7.2f} s ({rows:,} rows), "
        f"etl report {report:6.2f} s"
    )
    if not args.keep:
        recreate_database(args.pg_server, DATABASE, drop_only=True)


if __name__ == "__main__":
    main()

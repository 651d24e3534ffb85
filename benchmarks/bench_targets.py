"""The load-throughput targets in one run: every figure of docs/performance.md's table.

Usage: python benchmarks/bench_targets.py [--n 100000] [--loaders-n 200000] [--cores C]
                                          [--skip-postgres] [--skip-loaders] [--seed 1]

On N generated records (cached in benchmarks/out/):
1. sqlite-utils insert + enable-fts into a fresh file (the bare loader);
2. `etl run --workers 1` into a fresh file: its load + index stages are etl's writer;
3. the data model's floor: the rows of (2) re-inserted by plain sqlite3 (bench_floor.py);
4. `etl run` with its default workers into a fresh file: wall time against the CPU time of
   all its processes divided by the cores (1.0 = every core busy for the whole run);
5. PostgreSQL: `etl run` into a fresh database against COPY + weighted tsvector + GIN;
6. 1, 2 and 4 concurrent loaders on PostgreSQL over --loaders-n records (bench_loaders.py).
Then one table: each measure, its baseline, the ratio and the target. One run of each (the
figures move by several percent between runs: repeat the script to see by how much). Asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from functools import partial

from bench_floor import writer_and_floor
from bench_load import (
    DEFAULT_PG_SERVER,
    ETL_OK,
    OUT,
    PG_COPY_DB,
    PG_ETL_DB,
    Bench,
    dataset,
    recreate_database,
    remove_sqlite,
    with_server_cpu,
)
from bench_loaders import DATABASE, corpus, load_together
from measure import Sample


@dataclass(frozen=True)
class Row:
    """One line of the result: a measure against its baseline, and the target ratio."""

    measure: str
    value: float
    baseline_name: str
    baseline: float
    target: float | None

    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("nan")

    def line(self) -> str:
        target = "" if self.target is None else f"<= {self.target:.1f}x"
        met = "" if self.target is None else ("met" if self.ratio() <= self.target else "NOT met")
        return (
            f"{self.measure:<44}{self.value:9.2f}  {self.baseline_name:<28}{self.baseline:9.2f}"
            f"{self.ratio():8.2f}x  {target:<8} {met}"
        )


def checked(sample: Sample, what: str) -> Sample:
    """The sample, or exit when its command failed (the figures would mean nothing)."""
    if sample.returncode not in ETL_OK:
        sys.exit(f"{what} failed with exit status {sample.returncode}")
    return sample


def sqlite_rows(bench: Bench, cores: int) -> list[Row]:
    """sqlite-utils, the floor, etl's writer, and the default run's use of the cores."""
    su_db, one_db, floor_db, default_db = (
        OUT / f"targets_{name}.db" for name in ("sqlite_utils", "etl_one", "floor", "etl")
    )
    for path in (su_db, one_db, default_db):
        remove_sqlite(path)
    su = checked(bench.sqlite_utils_load(su_db), "sqlite-utils").wall
    print(f"  sqlite-utils {su:.2f} s", flush=True)
    measured = writer_and_floor(bench, one_db, floor_db)
    if measured is None:
        sys.exit("etl run --workers 1 failed")
    writer, floor = measured.writer, measured.floor
    print(f"  etl writer {writer:.2f} s, floor {floor:.2f} s ({measured.rows:,} rows)", flush=True)
    default = checked(bench.etl_run(f"sqlite:///{default_db}"), "etl run")
    print(f"  etl run {default.wall:.2f} s wall, {default.cpu:.2f} s CPU", flush=True)
    for path in (su_db, one_db, floor_db, default_db):
        remove_sqlite(path)
    return [
        Row("data-model floor (plain sqlite3)", floor, "sqlite-utils", su, 2.0),
        Row("etl load + index stages (--workers 1)", writer, "the floor", floor, 1.1),
        Row(
            f"etl run wall (default workers, {cores} cores)",
            default.wall,
            "its CPU / cores",
            default.cpu / cores,
            1.1,
        ),
        Row("etl run wall (default workers)", default.wall, "sqlite-utils", su, None),
    ]


def postgres_rows(bench: Bench, server: str) -> list[Row]:
    """A fresh PostgreSQL load against COPY + tsvector + GIN."""
    etl_url, copy_url = (recreate_database(server, name) for name in (PG_ETL_DB, PG_COPY_DB))
    etl = checked(with_server_cpu(partial(bench.etl_run, etl_url)), "etl run (PostgreSQL)")
    copy = checked(with_server_cpu(partial(bench.pg_copy, copy_url)), "COPY baseline")
    print(f"  PostgreSQL: etl {etl.wall:.2f} s, COPY {copy.wall:.2f} s", flush=True)
    for name in (PG_ETL_DB, PG_COPY_DB):
        recreate_database(server, name, drop_only=True)
    return [Row("etl run into PostgreSQL", etl.wall, "COPY + tsvector + GIN", copy.wall, 1.5)]


def loader_rows(n: int, seed: int, server: str) -> list[Row]:
    """1, 2 and 4 loaders sharing one corpus, each count against one loader."""
    folder = corpus(n, 16, seed)
    walls: dict[int, float] = {}
    for count in (1, 2, 4):
        url = recreate_database(server, DATABASE)
        walls[count] = load_together(folder, url, count, 1, False, None)["wall"] or 0.0
        print(f"  {count} loader(s): {walls[count]:.1f} s", flush=True)
    recreate_database(server, DATABASE, drop_only=True)
    return [
        Row(f"{count} loaders, {n:,} records, PostgreSQL", walls[count], "1 loader", walls[1], None)
        for count in (1, 2, 4)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--loaders-n", type=int, default=200_000)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg-server", default=DEFAULT_PG_SERVER)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-loaders", action="store_true")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    bench = Bench(dataset(args.n, args.seed), workers=None, timeout=None, etl_env=None)
    print(f"{args.n:,} records, {args.cores} cores", flush=True)
    rows = sqlite_rows(bench, args.cores)
    if not args.skip_postgres:
        rows += postgres_rows(bench, args.pg_server)
    if not args.skip_loaders:
        rows += loader_rows(args.loaders_n, args.seed, args.pg_server)
    print(f"\n{'measure':<44}{'s':>9}  {'against':<28}{'s':>9}{'ratio':>9}  target")
    for row in rows:
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())

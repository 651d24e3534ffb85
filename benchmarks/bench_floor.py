"""The data model's floor: etl's own rows, written again by plain sqlite3 into etl's schema.

Usage: python benchmarks/bench_floor.py [--n 100000] [--seed 1] [--repeats 1]

1. sqlite-utils insert + enable-fts of N generated records (bench_load.py's baseline).
2. `etl run --workers 1` of the same records into a fresh SQLite file; its load and index
   stages (from the `runs` row etl records) are what its writer spent.
3. The floor: every row that run wrote, read back table by table (parents before children)
   and inserted with `sqlite3` `executemany` into an empty file made by etl's migrations (the
   same keys, indexes, FTS5 table and triggers; the same page size and first-load journal as
   etl), in one transaction. The full-text index is filled as a bulk load fills it (etl's
   first load, sqlite-utils' enable-fts): the insert trigger dropped for the load, the index
   built from the rows in one statement after them, the trigger put back. Only the inserts,
   the index and the commit are timed.

So the floor is what the data model costs before any code of etl's runs, and etl's writer is
compared with it. Prints the three and the ratios floor / sqlite-utils and etl / floor.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench_load import ETL_OK, OUT, Bench, dataset, remove_sqlite, tool
from bench_stages import etl_stage_seconds

from etl.load import create_db_engine, upgrade_to_head
from etl.load.database import SQLITE_CACHE_KIB
from etl.load.schema import metadata
from etl.load.search_index import INSERT_TRIGGER


def empty_etl_database(path: Path) -> None:
    """A new SQLite file holding etl's schema, made by etl's own migrations."""
    remove_sqlite(path)
    engine = create_db_engine(f"sqlite:///{path}")
    try:
        upgrade_to_head(engine)
    finally:
        engine.dispose()


def table_order(source: sqlite3.Connection) -> list[str]:
    """etl's tables, parents before children, that the loaded file holds."""
    present = {row[0] for row in source.execute("SELECT name FROM sqlite_master")}
    return [t.name for t in metadata.sorted_tables if t.name in present]


def copy_rows(source: Path, target: Path) -> tuple[float, float, int]:
    """Insert every row of `source`'s etl tables into `target` in one transaction: (wall s,
    CPU s, rows). Rows are read before the clock starts."""
    with sqlite3.connect(source) as reader:
        tables = {
            name: (
                [c[1] for c in reader.execute(f"PRAGMA table_info({name})")],
                reader.execute(f"SELECT * FROM {name} ORDER BY rowid").fetchall(),
            )
            for name in table_order(reader)
        }
    writer = sqlite3.connect(target, isolation_level=None)
    writer.execute("PRAGMA journal_mode = DELETE")  # as etl's first load into an empty file
    writer.execute("PRAGMA synchronous = NORMAL")
    writer.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    writer.execute("PRAGMA foreign_keys = ON")
    (trigger,) = writer.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (INSERT_TRIGGER,)
    ).fetchone()
    wall, cpu = time.perf_counter(), time.process_time()
    writer.execute("BEGIN")
    writer.execute(f"DROP TRIGGER {INSERT_TRIGGER}")
    for name, (columns, rows) in tables.items():
        marks = ", ".join("?" for _ in columns)
        writer.executemany(f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({marks})", rows)
    writer.execute("INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')")
    writer.execute(trigger)
    writer.execute("COMMIT")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    writer.close()
    return wall, cpu, sum(len(rows) for _, rows in tables.values())


@dataclass(frozen=True)
class WriterAndFloor:
    """etl's writer (load + index stages of a `--workers 1` run) and the floor of its rows."""

    writer: float
    floor: float
    floor_cpu: float
    rows: int


def writer_and_floor(bench: Bench, etl_db: Path, floor_db: Path) -> WriterAndFloor | None:
    """Run `etl run --workers 1` into a fresh `etl_db`, then re-insert its rows into a fresh
    `floor_db`; None when the run failed."""
    remove_sqlite(etl_db)
    command = [tool("etl"), "run", str(bench.records), "--db", f"sqlite:///{etl_db}"]
    run = bench.run([*command, "--workers", "1"], "etl run --workers 1")
    if run.returncode not in ETL_OK:
        return None
    stages = etl_stage_seconds(etl_db)
    empty_etl_database(floor_db)
    wall, cpu, rows = copy_rows(etl_db, floor_db)
    return WriterAndFloor(stages.get("load", 0.0) + stages.get("index", 0.0), wall, cpu, rows)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="records (default 100,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1, help="alternated runs of each")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    OUT.mkdir(exist_ok=True)
    records = dataset(args.n, args.seed)
    bench = Bench(records, workers=1, timeout=None, etl_env=None)
    su_db, etl_db, floor_db = (OUT / f"floor_{n}.db" for n in ("sqlite_utils", "etl", "floor"))
    su_walls, etl_writer, floor_walls, floor_cpus = [], [], [], []
    rows = 0
    for i in range(args.repeats):
        remove_sqlite(su_db)
        su_walls.append(bench.sqlite_utils_load(su_db).wall)
        measured = writer_and_floor(bench, etl_db, floor_db)
        if measured is None:
            return 1
        etl_writer.append(measured.writer)
        floor_walls.append(measured.floor)
        floor_cpus.append(measured.floor_cpu)
        rows = measured.rows
        print(
            f"  repeat {i + 1}/{args.repeats}: sqlite-utils {su_walls[-1]:.2f} s, "
            f"floor {measured.floor:.2f} s, etl load+index {measured.writer:.2f} s",
            flush=True,
        )
    for path in (su_db, etl_db, floor_db):
        remove_sqlite(path)
    su, floor, writer = (statistics.median(v) for v in (su_walls, floor_walls, etl_writer))
    print(f"\n{args.n:,} records, {rows:,} rows in etl's tables (medians of {args.repeats})")
    print(f"sqlite-utils insert + enable-fts   {su:8.2f} s")
    print(
        f"data-model floor (plain sqlite3)   {floor:8.2f} s  "
        f"({statistics.median(floor_cpus):.2f} CPU s)  = {floor / su:.2f} x sqlite-utils"
    )
    print(f"etl load + index stages            {writer:8.2f} s  = {writer / floor:.2f} x the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())

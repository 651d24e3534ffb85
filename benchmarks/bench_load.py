"""Load benchmark: `etl run` against sqlite-utils (SQLite) and a plain COPY (Postgres).

Usage: python benchmarks/bench_load.py [--n 100000] [--repeats 3] [--workers W] [--rev REV]
                                       [--postgres] [--skip-sqlite] [--keep] [--json OUT]

Generates N records once (cached in benchmarks/out/), then alternates, R times:
  SQLite:   etl run FILE into a fresh file; etl run again on the same file and database
            (the rerun); sqlite-utils insert --nl --pk id + enable-fts --fts5 into a fresh file.
  Postgres: etl run FILE into a fresh database; pg_copy.py (COPY + weighted tsvector + GIN)
            into another fresh database.
Each command runs as a subprocess under measure.py, which records its wall time, CPU time and
peak RSS; on Postgres, the local server's CPU during each run is measured too. Failed runs are
reported and left out of the statistics. Prints medians and the ratios; no timing is asserted.
`--rev HEAD` benchmarks a committed snapshot of etl (see snapshot.py) instead of the live
working tree.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import generate
import snapshot
from measure import MeasureTimeout, Sample, measure, processes_cpu_seconds

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
DEFAULT_PG_SERVER = "postgresql+psycopg://root@127.0.0.1:5432"
PG_ETL_DB = "bench_etl"
PG_COPY_DB = "bench_copy"
ETL_OK = (0, 3)  # 3: etl loaded the data but rejected some records


@dataclass
class Series:
    """Every sample of one measured tool; statistics use the successful ones."""

    tool: str
    ok_codes: tuple[int, ...] = (0,)
    samples: list[Sample] = field(default_factory=list)

    def ok(self) -> list[Sample]:
        """The samples whose command succeeded."""
        return [s for s in self.samples if s.returncode in self.ok_codes]

    def median_wall(self) -> float:
        """Median wall seconds of the successful runs (nan if none)."""
        return _median([s.wall for s in self.ok()])

    def median_cpu(self) -> float:
        """Median CPU seconds (the command and its workers, all cores) of the successful runs."""
        return _median([s.cpu for s in self.ok()])

    def median_server_cpu(self) -> float | None:
        """Median CPU seconds of the database server during the successful runs, if measured."""
        values = [s.server_cpu for s in self.ok() if s.server_cpu is not None]
        return _median(values) if values else None

    def peak_mb(self) -> float:
        """Largest single-process peak RSS over the successful runs."""
        return max((s.peak_mb for s in self.ok()), default=float("nan"))

    def tree_peak_mb(self) -> float:
        """Largest sampled whole-tree RSS (parallel workers summed) over the successful runs."""
        values = [s.tree_peak_mb for s in self.ok() if s.tree_peak_mb is not None]
        return max(values, default=float("nan"))

    def summary(self) -> dict[str, object]:
        """Numbers for the JSON output."""
        return {
            "tool": self.tool,
            "median_wall_s": round(self.median_wall(), 3),
            "walls_s": [round(s.wall, 3) for s in self.ok()],
            "median_cpu_s": round(self.median_cpu(), 3),
            "median_server_cpu_s": _rounded(self.median_server_cpu()),
            "failed_runs": len(self.samples) - len(self.ok()),
            "peak_mb": round(self.peak_mb(), 1),
            "tree_peak_mb": round(self.tree_peak_mb(), 1),
        }


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass(frozen=True)
class Bench:
    """What every measured command shares: the records, etl's options, limits, environment."""

    records: Path
    workers: int | None
    timeout: float | None
    etl_env: dict[str, str] | None  # None: the installed (working-tree) etl

    def run(self, cmd: list[str], what: str, env: dict[str, str] | None = None) -> Sample:
        """Measure one command; report a failure with the end of its output."""
        # Run from out/, so no child imports etl from the current folder by accident.
        sample = measure(cmd, timeout=self.timeout, env=env, cwd=OUT)
        if sample.returncode != 0:
            tail = "\n".join(sample.output.strip().splitlines()[-12:])
            print(f"warning: {what} exited {sample.returncode}:\n{tail}", file=sys.stderr)
        return sample

    def etl_run(self, url: str) -> Sample:
        """One measured `etl run` of the records into `url`."""
        cmd = [tool("etl"), "run", str(self.records), "--db", url, "--quiet"]
        if self.workers:
            cmd += ["--workers", str(self.workers)]
        return self.run(cmd, "etl run", self.etl_env)

    def sqlite_utils_load(self, db: Path) -> Sample:
        """`sqlite-utils insert` then `enable-fts`, measured apart: walls add, peaks max."""
        su = tool("sqlite-utils")
        insert_cmd = [su, "insert", str(db), "papers", str(self.records), "--nl", "--pk", "id"]
        insert = self.run(insert_cmd, "sqlite-utils insert")
        fts_cmd = [su, "enable-fts", str(db), "papers", "title", "abstract", "--fts5"]
        fts = self.run(fts_cmd, "sqlite-utils enable-fts")
        trees = [t for t in (insert.tree_peak_mb, fts.tree_peak_mb) if t is not None]
        return Sample(
            wall=insert.wall + fts.wall,
            cpu=insert.cpu + fts.cpu,
            peak_mb=max(insert.peak_mb, fts.peak_mb),
            tree_peak_mb=max(trees) if trees else None,
            returncode=insert.returncode or fts.returncode,
            output=insert.output + fts.output,
        )

    def pg_copy(self, url: str) -> Sample:
        """The COPY + tsvector + GIN baseline into `url`."""
        cmd = [sys.executable, str(HERE / "pg_copy.py"), str(self.records), url]
        return self.run(cmd, "pg_copy.py")


def with_server_cpu(run: Callable[[], Sample]) -> Sample:
    """Run a measured command and add the local PostgreSQL server's CPU during it (nothing is
    added when no process called `postgres` is visible: a remote server)."""
    before = processes_cpu_seconds("postgres")
    sample = run()
    after = processes_cpu_seconds("postgres")
    if before is None or after is None:
        return sample
    return dataclasses.replace(sample, server_cpu=after - before)


def tool(name: str) -> str:
    """A console script from this virtualenv (next to the interpreter), else from PATH."""
    sibling = Path(sys.executable).with_name(name)
    found = str(sibling) if sibling.exists() else shutil.which(name)
    if not found:
        sys.exit(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def dataset(n: int, seed: int) -> Path:
    """The cached JSON Lines file of N records, generated on first use."""
    path = OUT / f"records-{n}-s{seed}-v{generate.VERSION}.jsonl"
    if not path.exists():
        print(f"generating {n:,} records → {path}", flush=True)
        partial = path.with_suffix(".partial")
        generate.generate(n, partial, seed=seed)
        partial.rename(path)
    return path


def remove_sqlite(path: Path) -> None:
    """Delete a SQLite database, its journal files and etl's run lock file, for a fresh load."""
    for suffix in ("", "-wal", "-shm", "-journal", ".lock"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def bench_sqlite(bench: Bench, repeats: int) -> list[Series]:
    """Alternate a fresh etl run, its rerun, and sqlite-utils, `repeats` times."""
    etl_db, su_db = OUT / "etl.db", OUT / "sqlite_utils.db"
    fresh = Series("etl run (fresh)", ETL_OK)
    rerun = Series("etl run (rerun, unchanged)", ETL_OK)
    baseline = Series("sqlite-utils insert + enable-fts")
    for i in range(repeats):
        remove_sqlite(etl_db)
        fresh.samples.append(bench.etl_run(f"sqlite:///{etl_db}"))
        if fresh.samples[-1].returncode in ETL_OK:
            rerun.samples.append(bench.etl_run(f"sqlite:///{etl_db}"))
        remove_sqlite(su_db)
        baseline.samples.append(bench.sqlite_utils_load(su_db))
        print(f"  sqlite repeat {i + 1}/{repeats}: {progress(fresh, rerun, baseline)}", flush=True)
    remove_sqlite(su_db)
    etl_summary("last fresh etl run", fresh)
    return [fresh, rerun, baseline]


def progress(*series: Series) -> str:
    """The latest wall time of each series, for a line of progress."""
    return ", ".join(f"{s.tool} {s.samples[-1].wall:.1f} s" for s in series if s.samples)


def etl_summary(title: str, series: Series) -> None:
    """Show etl's own summary lines (papers; seconds per stage) from its last successful run."""
    ok = series.ok()
    if not ok:
        return
    for line in ok[-1].output.splitlines():
        if line.strip().startswith(("papers", "seconds")):
            print(f"  {title}: {line.strip()}")


def recreate_database(server: str, name: str, *, drop_only: bool = False) -> str:
    """Drop (and unless `drop_only`, create) a database on the server; return its URL."""
    import psycopg

    admin = server.replace("postgresql+psycopg://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def bench_postgres(bench: Bench, repeats: int, server: str, keep: bool) -> list[Series]:
    """Alternate etl run into a fresh database and the COPY baseline, `repeats` times."""
    etl = Series("etl run (Postgres, fresh)", ETL_OK)
    baseline = Series("COPY + tsvector + GIN")
    for i in range(repeats):
        etl_url, copy_url = (recreate_database(server, db) for db in (PG_ETL_DB, PG_COPY_DB))
        etl.samples.append(with_server_cpu(partial(bench.etl_run, etl_url)))
        baseline.samples.append(with_server_cpu(partial(bench.pg_copy, copy_url)))
        print(f"  postgres repeat {i + 1}/{repeats}: {progress(etl, baseline)}", flush=True)
    if keep:
        print(f"  kept the last loaded databases: {server}/{PG_ETL_DB} and {PG_COPY_DB}")
    else:
        recreate_database(server, PG_ETL_DB, drop_only=True)
        recreate_database(server, PG_COPY_DB, drop_only=True)
    etl_summary("last Postgres etl run", etl)
    return [etl, baseline]


def print_table(title: str, series: list[Series], ratio: tuple[str, Series, Series]) -> None:
    """A fixed-width table of medians and peaks, then the ratio of two series."""
    print(f"\n{title}")
    server = any(s.median_server_cpu() is not None for s in series)
    heads = ("ok/runs", "median s", "min s", "max s", "cpu s", "peak MB", "tree MB")
    print(
        f"{'tool':<36}" + "".join(f"{h:>10}" for h in heads) + ("  server cpu s" if server else "")
    )
    for s in series:
        walls = [x.wall for x in s.ok()] or [float("nan")]
        cells = [f"{len(s.ok())}/{len(s.samples)}"]
        cells += [f"{v:.2f}" for v in (s.median_wall(), min(walls), max(walls), s.median_cpu())]
        cells += [f"{s.peak_mb():.0f}", f"{s.tree_peak_mb():.0f}"]
        row = f"{s.tool:<36}" + "".join(f"{c:>10}" for c in cells)
        if server:
            server_cpu = s.median_server_cpu()
            row += f"{float('nan') if server_cpu is None else server_cpu:>14.2f}"
        print(row)
    label, top, bottom = ratio
    print(
        f"ratio {label}: wall {top.median_wall() / bottom.median_wall():.2f}x, "
        f"cpu {total_cpu(top) / total_cpu(bottom):.2f}x, "
        f"peak {top.peak_mb() / bottom.peak_mb():.2f}x"
    )


def total_cpu(series: Series) -> float:
    """Median CPU seconds of the command plus, where measured, the database server's."""
    return series.median_cpu() + (series.median_server_cpu() or 0.0)


def describe_code(rev: str | None) -> tuple[str, dict[str, str] | None]:
    """What etl code runs (for the header) and the environment that selects it."""
    if rev:
        site = snapshot.prepare(rev)
        return f"etl at commit {snapshot.resolve(rev)} (snapshot)", snapshot.environment(site)
    dirty = snapshot.git("status", "--porcelain", "etl").strip()
    state = " + uncommitted changes in etl/" if dirty else ""
    return f"etl from the working tree at {snapshot.resolve('HEAD')}{state}", None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--n", type=int, default=100_000, help="records to load (default 100000)")
    add("--repeats", type=int, default=3, help="runs of each tool (default 3)")
    add("--workers", type=int, help="etl run --workers (default: etl's own default)")
    add("--seed", type=int, default=1, help="generator seed (default 1)")
    add("--rev", help="benchmark this git revision of etl (a snapshot), not the working tree")
    add("--postgres", action="store_true", help="also compare on PostgreSQL")
    add("--skip-sqlite", action="store_true", help="skip the SQLite comparison")
    add(
        "--pg-server",
        default=os.environ.get("BENCH_PG_SERVER", DEFAULT_PG_SERVER),
        help=f"server URL without a database (default {DEFAULT_PG_SERVER})",
    )
    add("--keep", action="store_true", help=f"keep the Postgres dbs {PG_ETL_DB} and {PG_COPY_DB}")
    add("--timeout", type=float, help="kill any single command after this many seconds")
    add("--json", type=Path, help="also write the results as JSON to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the selected comparisons and print (and optionally save) the results."""
    args = parse_args(argv)
    OUT.mkdir(exist_ok=True)
    records = dataset(args.n, args.seed)
    code, env = describe_code(args.rev)
    bench = Bench(records, args.workers, args.timeout, env)
    print(
        f"N={args.n:,} ({records.stat().st_size / 1e6:,.0f} MB), repeats={args.repeats}, "
        f"workers={args.workers or 'etl default'}, cpus={os.cpu_count()}; {code}",
        flush=True,
    )
    results: dict[str, object] = {"n": args.n, "repeats": args.repeats, "code": code}
    results["workers"] = args.workers
    try:
        if not args.skip_sqlite:
            fresh, rerun, baseline = bench_sqlite(bench, args.repeats)
            table = [fresh, rerun, baseline]
            print_table(f"SQLite, {args.n:,} records", table, ("etl/sqlite-utils", fresh, baseline))
            print(f"ratio rerun/fresh: {rerun.median_wall() / fresh.median_wall():.1%}")
            results["sqlite"] = [s.summary() for s in table]
        if args.postgres:
            etl, copy = bench_postgres(bench, args.repeats, args.pg_server, args.keep)
            print_table(f"PostgreSQL, {args.n:,} records", [etl, copy], ("etl/COPY", etl, copy))
            results["postgres"] = [s.summary() for s in (etl, copy)]
    except MeasureTimeout as exc:
        print(f"error: {exc}; try a smaller --n", file=sys.stderr)
        return 1
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What recording change events costs a load: a first load, and a reload of an edited list.

Usage: python benchmarks/bench_changes.py [--n 20000] [--seed 1] [--repeats 1]
       [--database-url URL] [--profile]

Each repeat loads, with `--workers 1`, into a fresh database: another list first (so the
database is not empty and the reload records events paper by paper), then the list of N
generated records (`first`), then that list edited in place (`reload`: 5% of titles changed,
2% of records dropped, 2% new ones added, every other record the same). Prints the CPU time
(process time of this process, where `--workers 1` transforms and writes) of the `first` and
`reload` runs, median over repeats. Run it from a checkout of each revision to compare (set
PYTHONPATH to that checkout). `--profile` runs the loads under cProfile and prints, per run,
the time spent inside the change log's entry points (etl/load/changes.py) beside the run's
total: the events' own cost, which the noise of whole-run timings on a busy machine hides.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from bench_load import dataset

from etl.pipeline import RunOptions, run


def edited(records: list[str], n_new: int, seed_records: list[str]) -> list[str]:
    """The list with every 20th title changed, every 50th record dropped, `n_new` added."""
    out = []
    for number, line in enumerate(records):
        if number % 50 == 1:
            continue
        if number % 20 == 2:
            record = json.loads(line)
            record["title"] = str(record.get("title", "")) + " (revised)"
            line = json.dumps(record)
        out.append(line)
    return out + seed_records[:n_new]


ENTRY_POINTS = (
    "__init__",
    "papers_added",
    "before_update",
    "after_update",
    "before_finish",
    "after_finish",
    "record_run_start",
    "record_removals",
)


def timed_run(paths: list[Path], url: str, profiled: bool) -> float:
    options = RunOptions(paths=tuple(str(p) for p in paths), database_url=url, workers=1)
    profile = cProfile.Profile() if profiled else None
    tick = time.process_time()
    if profile is not None:
        profile.enable()
    report = run(options)
    if profile is not None:
        profile.disable()
    took = time.process_time() - tick
    assert report.status == "succeeded", report.status
    if profile is not None:
        stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
        inside = sum(
            cumulative
            for (path, _, name), (_, _, _, cumulative, _) in stats.items()
            if path.endswith("etl/load/changes.py") and name in ENTRY_POINTS
        )
        print(f"  change log {inside:.3f} s of {took:.2f} s (under cProfile)")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--database-url", help="a PostgreSQL database (emptied first)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    records = dataset(args.n, args.seed).read_text("utf-8").splitlines()
    others = dataset(args.n // 10, args.seed + 1).read_text("utf-8").splitlines()
    extra = dataset(args.n // 50 + 1, args.seed + 2).read_text("utf-8").splitlines()
    times: dict[str, list[float]] = {"first": [], "reload": []}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as folder:
            other = Path(folder, "other.jsonl")
            other.write_text("\n".join(others[: max(1, args.n // 100)]) + "\n", "utf-8")
            listed = Path(folder, "list.jsonl")
            listed.write_text("\n".join(records) + "\n", "utf-8")
            url = args.database_url or f"sqlite:///{folder}/bench.db"
            if args.database_url:
                _empty_postgres(url)
            timed_run([other], url, args.profile)
            times["first"].append(timed_run([other, listed], url, args.profile))
            listed.write_text("\n".join(edited(records, args.n // 50, extra)) + "\n", "utf-8")
            times["reload"].append(timed_run([other, listed], url, args.profile))
    for name, values in times.items():
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"{name}: {statistics.median(values):.2f} s CPU (median of {shown})")
    return 0


def _empty_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    engine.dispose()


if __name__ == "__main__":
    raise SystemExit(main())

"""Load the same files in every order and check that the database comes out the same.

    python tools/load_orders.py FILE... [--workers N] [--repos FILE]

Each order of the files is loaded into a fresh SQLite database twice: in one run (the files
given in that order) and in a run per file. Every table is then read by natural keys (ids,
names, URLs; never row numbers) and compared with the first load's. With `--repos FILE` (one of
the files), it also counts how many of the code links that file shows alone in the
`papers_with_code` view it still shows there with the others.
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy.engine import make_url

from etl.pipeline import RunOptions, run
from tests.helpers import snapshot


def load_order(files: list[Path], folder: Path, *, one_run: bool, workers: int) -> str:
    """A fresh database loaded with the files in this order; its URL."""
    url = f"sqlite:///{folder / 'papers.db'}"
    batches = [files] if one_run else [[path] for path in files]
    for batch in batches:
        run(RunOptions(paths=tuple(map(str, batch)), database_url=url, workers=workers))
    return url


def code_urls(url: str) -> set[str]:
    """The code links `papers_with_code` shows."""
    with sqlite3.connect(make_url(url).database) as connection:
        return {row[0] for row in connection.execute("SELECT code_url FROM papers_with_code")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--repos", type=Path, help="a list whose repositories must all arrive")
    args = parser.parse_args()
    files = [path.resolve() for path in args.files]
    reference = None
    identical = True
    with tempfile.TemporaryDirectory() as scratch:
        wanted: set[str] = set()
        if args.repos:  # what the list alone shows
            alone = Path(scratch) / "alone"
            alone.mkdir()
            wanted = code_urls(
                load_order([args.repos.resolve()], alone, one_run=True, workers=args.workers)
            )
        for number, order in enumerate(itertools.permutations(files)):
            for one_run in (True, False):
                folder = Path(scratch) / f"{number}-{int(one_run)}"
                folder.mkdir()
                started = time.perf_counter()
                url = load_order(list(order), folder, one_run=one_run, workers=args.workers)
                tables = snapshot(url)
                names = " ".join(path.name for path in order)
                how = "one run" if one_run else "a run per file"
                if reference is None:
                    reference = tables
                    verdict = "reference"
                else:
                    differ = [t for t in tables if tables[t] != reference[t]]
                    identical &= not differ
                    verdict = "identical" if not differ else "DIFFERS: " + ", ".join(differ)
                counts = " ".join(f"{t}={len(tables[t])}" for t in ("papers", "paper_links"))
                seconds = time.perf_counter() - started
                print(f"{names} ({how}): {verdict}; {counts}; {seconds:.1f} s", flush=True)
                if args.repos:
                    shown = code_urls(url) & wanted
                    print(f"  {args.repos.name}: {len(shown)} of {len(wanted)} repositories")
    print("all orders identical" if identical else "orders differ")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())

"""The most expensive search etl accepts: 32 terms (31 ORed words and an exclusion), 1000 rows.

Usage: python benchmarks/bench_search_limits.py DATABASE [--repeats 5]

DATABASE is a SQLite file path (or sqlite:/// URL) or a postgresql+psycopg:// URL of a
database loaded by `etl run`. Prints the median and maximum wall time of etl.read.search
(ranking and snippets) for that query. Longer searches are refused before they reach the
database (etl/query_language.py), so this bounds what one `etl search` can cost.
"""

from __future__ import annotations

import argparse
import statistics
import time

from etl import query_language
from etl.config import resolve_database_url
from etl.read import open_reader, search

WORDS = (
    "model language memory cache attention graph learning training data network method task "
    "performance results approach framework neural large inference quantization reasoning "
    "benchmark dataset vision image text optimization policy reward agent diffusion"
).split()


def main() -> None:
    """Time the widest accepted search on one database."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    query = " OR ".join(WORDS[: query_language.MAX_TERMS - 1]) + ' -"xyzzy"'
    parsed = query_language.parse(query)
    engine = open_reader(resolve_database_url(args.database))
    seconds = []
    try:
        for _ in range(args.repeats):
            started = time.perf_counter()
            rows = search(engine, query, 1000).rows
            seconds.append(time.perf_counter() - started)
    finally:
        engine.dispose()
    print(
        f"{len(query)} characters, {parsed.terms} terms, {len(rows)} rows: "
        f"median {statistics.median(seconds) * 1000:.1f} ms, max {max(seconds) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()

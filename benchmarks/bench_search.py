"""Search benchmark: the library's ranked search with snippets against the bare ranked query.

Usage: python benchmarks/bench_search.py DATABASE [--queries 1000] [--limit 10] [--seed 1]
                                         [--warmup 50] [--rev REV] [--json OUT]
                                         [--bare-database URL]

DATABASE is a SQLite file path (or sqlite:/// URL) or a postgresql+psycopg:// URL of a
database loaded by `etl run`. Queries are 1-3 consecutive words from abstracts sampled
deterministically from the database itself. Per query, in alternating order, it times:
  SQLite:   bare `papers_fts MATCH ? ORDER BY bm25(papers_fts) LIMIT 10` (sqlite3, rowids only)
  Postgres: bare `websearch_to_tsquery` + `ts_rank` top 10 over papers.search_vector (psycopg)
  both:     etl.read.search(engine, query, limit), in-process (SQLAlchemy, ranks + snippets).
`--bare-database` runs the bare Postgres query against another database holding a `papers`
table with `id` and `search_vector`, such as the COPY baseline `bench_load.py --postgres
--keep` leaves (`bench_copy`): the ranked query as one would write it over a plain table.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import re
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import snapshot
from sqlalchemy import Engine, text

SQLITE_BARE = (
    "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY bm25(papers_fts) LIMIT ?"
)
POSTGRES_BARE = """
SELECT id FROM papers, websearch_to_tsquery('english', %s) AS q
WHERE search_vector @@ q ORDER BY ts_rank(search_vector, q) DESC LIMIT %s
"""
SAMPLE_ABSTRACTS = 3000
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}")
STOPWORD_TEXT = (
    "the and for with that this from are our its which into than such can has have their "
    "these those while without also both each more most over under when where been being "
    "not but all any other only via per use using used show shows texttt href github http "
    "https com"
)
STOPWORDS = frozenset(STOPWORD_TEXT.split())

Timed = Callable[[str], int]


def database_url(target: str) -> str:
    """A SQLAlchemy URL for a path or URL given on the command line."""
    return target if "://" in target else f"sqlite:///{Path(target).resolve()}"


def database_name(url: str) -> str:
    """The database part of a URL, for messages."""
    return url.rsplit("/", 1)[-1]


def draw_queries(engine: Engine, count: int, seed: int) -> list[str]:
    """`count` queries of 1-3 consecutive content words from abstracts chosen by id order."""
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT abstract FROM papers WHERE abstract IS NOT NULL ORDER BY id LIMIT :n"),
            {"n": SAMPLE_ABSTRACTS},
        )
        documents = [words for (abstract,) in rows if len(words := content_words(abstract)) >= 3]
    if not documents:
        sys.exit("the database has no abstracts to draw queries from")
    rng = random.Random(seed)
    queries = []
    for _ in range(count):
        words = rng.choice(documents)
        length = rng.choice((1, 1, 2, 2, 2, 3))
        start = rng.randrange(len(words) - length + 1)
        queries.append(" ".join(words[start : start + length]))
    return queries


def content_words(abstract: str) -> list[str]:
    """The abstract's words in order, lower-cased, without stopwords and markup commands."""
    return [w for w in (m.lower() for m in WORD_RE.findall(abstract)) if w not in STOPWORDS]


def sqlite_bare(url: str, limit: int) -> Timed:
    """The bare ranked FTS5 query through the standard library, read-only."""
    path = url.removeprefix("sqlite:///")
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    def run(match: str) -> int:
        return len(connection.execute(SQLITE_BARE, (match, limit)).fetchall())

    return run


def postgres_bare(url: str, limit: int) -> Timed:
    """The bare websearch_to_tsquery + ts_rank top-N query through psycopg."""
    import psycopg

    connection = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1))
    connection.autocommit = True

    def run(query: str) -> int:
        return len(connection.execute(POSTGRES_BARE, (query, limit)).fetchall())

    return run


def import_read(rev: str | None) -> ModuleType:
    """`etl.read` from the working tree, or from a committed snapshot of `rev`."""
    if rev:
        sys.path.insert(0, str(snapshot.prepare(rev)))
    return importlib.import_module("etl.read")


def library(read: ModuleType, engine: Engine, limit: int) -> Timed:
    """The library's search, as `etl search` calls it."""

    def run(query: str) -> int:
        return len(read.search(engine, query, limit).rows)

    return run


def time_ms(run: Timed, argument: str) -> tuple[float, int]:
    """Milliseconds one call takes, and the rows it returned."""
    started = time.perf_counter()
    rows = run(argument)
    return (time.perf_counter() - started) * 1000, rows


def summary(times: list[float], hits: list[int]) -> dict[str, float]:
    """Median, p95 and mean latency, and the mean number of rows returned."""
    return {
        "median_ms": round(statistics.median(times), 3),
        "p95_ms": round(statistics.quantiles(times, n=100)[94], 3),
        "mean_ms": round(statistics.fmean(times), 3),
        "mean_rows": round(statistics.fmean(hits), 2),
    }


def bench(
    queries: list[str], bare: Timed, lib: Timed, bare_arg: Callable[[str], str], warmup: int
) -> dict[str, Any]:
    """Time both per query, alternating which goes first; the first `warmup` are not kept."""
    for query in queries[:warmup]:
        bare(bare_arg(query))
        lib(query)
    results: dict[str, tuple[list[float], list[int]]] = {"bare": ([], []), "library": ([], [])}
    for i, query in enumerate(queries):
        argument = bare_arg(query)
        order = (("bare", bare, argument), ("library", lib, query))
        for name, run, arg in order if i % 2 == 0 else reversed(order):
            ms, rows = time_ms(run, arg)
            results[name][0].append(ms)
            results[name][1].append(rows)
    return {name: summary(*values) for name, values in results.items()}


def print_results(results: dict[str, Any], bare_name: str) -> None:
    """A table of latencies for both ways, then the library/bare ratios."""
    print(
        f"{'query':<28}" + "".join(f"{h:>10}" for h in ("median ms", "p95 ms", "mean ms", "rows"))
    )
    for name, label in (("bare", bare_name), ("library", "etl.read.search (snippets)")):
        r = results[name]
        cells = [f"{r[k]:.2f}" for k in ("median_ms", "p95_ms", "mean_ms")] + [
            f"{r['mean_rows']:.1f}"
        ]
        print(f"{label:<28}" + "".join(f"{c:>10}" for c in cells))
    ratio = results["library"]["median_ms"] / results["bare"]["median_ms"]
    p95_ratio = results["library"]["p95_ms"] / results["bare"]["p95_ms"]
    print(f"ratio library/bare: median {ratio:.2f}x, p95 {p95_ratio:.2f}x")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database", help="SQLite path or URL, or a postgresql+psycopg:// URL")
    parser.add_argument("--queries", type=int, default=1000, help="queries to time (default 1000)")
    parser.add_argument("--limit", type=int, default=10, help="rows per query (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="query sampling seed (default 1)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed queries first (default 50)")
    parser.add_argument("--rev", help="search with this git revision of etl (a snapshot)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    parser.add_argument(
        "--bare-database",
        help="Postgres only: run the bare query on this database (default: DATABASE)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Draw the queries, time both ways, print medians, p95 and the ratio."""
    args = parse_args(argv)
    url = database_url(args.database)
    read = import_read(args.rev)
    engine = read.open_reader(url)
    dialect = engine.dialect.name
    queries = draw_queries(engine, args.queries, args.seed)
    if dialect == "sqlite":
        bare, bare_arg, bare_name = (
            sqlite_bare(url, args.limit),
            read.to_fts5_query,
            "bare FTS5 bm25",
        )
    else:
        bare_url = args.bare_database or url
        bare, bare_arg, bare_name = postgres_bare(bare_url, args.limit), str, "bare ts_rank"
        if args.bare_database:
            print(f"bare query on {database_name(bare_url)}, the library on {database_name(url)}")
    with engine.connect() as connection:
        papers = connection.execute(text("SELECT count(*) FROM papers")).scalar_one()
    examples = ", ".join(repr(q) for q in queries[:3])
    print(
        f"{dialect}, {papers:,} papers, {len(queries)} queries (e.g. {examples}), top {args.limit}"
    )
    results = bench(queries, bare, library(read, engine, args.limit), bare_arg, args.warmup)
    print_results(results, bare_name)
    if args.json:
        payload = {"dialect": dialect, "papers": papers, "queries": len(queries), **results}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Citations benchmark: `related_papers` for one paper, and the cost citations add to a load.

Usage: python benchmarks/bench_citations.py URL [--papers 3000] [--cites 15] [--outside 10]
                                            [--queries 50] [--view-queries 0] [--seed 1]
                                            [--folder DIR]

Writes made-up OpenAlex pages (`--papers` works in pages of 200, each citing `--cites` works
of the set, earlier ones more often, and `--outside` works the database does not hold; their
abstracts from tests.helpers.record, so methods and tasks are found), loads them into URL (a
new SQLite file path or an empty PostgreSQL database) with `etl run`, reloads one page with
its references changed (one source's resolve pass over every edge), then times
`etl related` (its per-paper query and the names of why) for `--queries` papers drawn at
random, and `SELECT ... FROM related_papers WHERE paper_id = :id` for the first
`--view-queries` of them (the view computes every pair first: seconds to minutes). Prints the
figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import text

from etl.read import open_reader
from etl.related import related
from tests.helpers import fetch, load, record

PAGE = 200


def work(number: int, rng: random.Random, papers: int, cites: int, outside: int) -> dict[str, Any]:
    """A made-up OpenAlex work citing earlier works of the set (skewed to the first ones)."""
    made = record(rng, number)
    index: dict[str, list[int]] = {}
    for spot, word in enumerate(made["abstract"].split()):
        index.setdefault(word, []).append(spot)
    cited = {int(papers * rng.random() ** 2) + 1 for _ in range(cites)} - {number}
    cited |= {10_000_000 + rng.randrange(papers * 5) for _ in range(outside)}
    return {
        "id": f"https://openalex.org/W{number}",
        "title": made["title"],
        "publication_year": 2020 + number % 5,
        "abstract_inverted_index": index,
        "referenced_works": [f"https://openalex.org/W{n}" for n in sorted(cited)],
        "cited_by_count": rng.randrange(500),
    }


def write_pages(folder: Path, papers: int, cites: int, outside: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for start in range(1, papers + 1, PAGE):
        works = [
            work(n, rng, papers, cites, outside)
            for n in range(start, min(start + PAGE, papers + 1))
        ]
        path = folder / f"works-{start:07d}.json"
        path.write_text(json.dumps({"results": works}), "utf-8")
        paths.append(path)
    return paths


def timed_load(url: str, folder: Path) -> float:
    started = time.perf_counter()
    report = load(url, folder)
    assert report.status == "succeeded", report
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--papers", type=int, default=3000)
    parser.add_argument("--cites", type=int, default=15)
    parser.add_argument("--outside", type=int, default=10)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--folder")
    parser.add_argument(
        "--view-queries", type=int, default=0, help="papers to read from the view (slow)"
    )
    args = parser.parse_args()
    url = args.url if "://" in args.url else f"sqlite:///{args.url}"
    folder = Path(args.folder or tempfile.mkdtemp(prefix="bench-citations-"))
    folder.mkdir(parents=True, exist_ok=True)
    pages = write_pages(folder, args.papers, args.cites, args.outside, args.seed)
    first = timed_load(url, folder)
    changed = pages[0]
    changed.write_text(changed.read_text("utf-8").replace("W10000", "W19999"), "utf-8")
    reload = timed_load(url, folder)
    (edges,) = fetch(url, "SELECT COUNT(*), COUNT(cited_paper_pk) FROM citations")
    ids = [str(r[0]) for r in fetch(url, "SELECT id FROM papers ORDER BY id")]
    rng = random.Random(args.seed)
    wanted = [rng.choice(ids) for _ in range(args.queries)]
    engine = open_reader(url)
    view, command, answers = [], [], []
    try:
        related(engine, wanted[0])  # warm
        for paper in wanted:
            started = time.perf_counter()
            answers.append(len(related(engine, paper)[1].rows))
            command.append(time.perf_counter() - started)
        sql = text("SELECT * FROM related_papers WHERE paper_id = :id ORDER BY rank")
        with engine.connect() as connection:
            for paper in wanted[: args.view_queries]:
                started = time.perf_counter()
                connection.execute(sql, {"id": paper}).all()
                view.append(time.perf_counter() - started)
    finally:
        engine.dispose()
    print(
        json.dumps(
            {
                "papers": len(ids),
                "edges": edges[0],
                "resolved": edges[1],
                "first_load_s": round(first, 2),
                "reload_one_page_s": round(reload, 2),
                "related_view_one_paper_ms": [round(s * 1000, 1) for s in view],
                "etl_related_ms": {
                    "median": round(statistics.median(command) * 1000, 1),
                    "max": round(max(command) * 1000, 1),
                },
                "related_rows_median": statistics.median(answers),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

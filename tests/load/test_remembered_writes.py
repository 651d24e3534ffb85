"""A run into an empty SQLite database remembers what it wrote instead of reading it back
(etl.load.known): the database must be the one the reading writer gives, row for row, id for
id, across sources that share papers, methods, authors and links, and one that rolls back."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from etl.load import known, schema
from etl.load.database import create_db_engine, upgrade_to_head
from etl.pipeline import RunOptions, run
from tests.helpers import abstract

# Columns that differ between any two runs: when they ran.
TIMES = {("sources", "loaded_at"), ("change_events", "created_at")}
SKIPPED_TABLES = {"runs", "alembic_version"}


def record(rng: random.Random, number: int, venue: str) -> dict[str, object]:
    """A made-up paper; numbers repeat across files, so do their papers, methods and links."""
    return {
        "title": f"Paper number {number}",
        "abstract": abstract(random.Random(number), number),
        "authors": [f"Author {number % 13}", f"Author {rng.randint(0, 40)}"],
        "github": f"https://github.com/lab/shared{number % 7}" if number % 3 == 0 else None,
        "doi": f"10.1000/made-up.{number}" if number % 5 == 0 else None,
        "venue": venue,
        "year": 2024,
    }


def write_corpus(folder: Path) -> None:
    """Three good files that share papers (one with new text for some), and between them a
    file that writes a batch of new papers, methods, authors and links, then breaks."""
    rng = random.Random(5)
    folder.mkdir()
    files = {
        "a_first.jsonl": [record(rng, n, "ICML") for n in range(1, 61)],
        "c_third.jsonl": [record(rng, n, "NeurIPS") for n in range(40, 111)],
        "d_fourth.jsonl": [record(rng, n, "ICLR") for n in (*range(100, 131), 5, 5, 170)],
    }
    for paper in files["d_fourth.jsonl"][:10]:  # the same paper, its abstract changed
        paper["abstract"] = str(paper["abstract"]) + " A revised version."
    revised = record(rng, 5, "ICML")  # paper 5 again by its DOI, rewritten batches later
    revised["abstract"] = "We revisit **KernelNet5** with a new proof and far more experiments."
    files["a_first.jsonl"].append(revised)
    for name, records in files.items():
        (folder / name).write_text("\n".join(json.dumps(r) for r in records) + "\n", "utf-8")
    broken = [record(rng, n, "AAAI") for n in (*range(150, 180), 45, 46)]
    text = json.dumps(broken)
    (folder / "b_broken.json").write_text(text[:-1] + ', {"title": ', "utf-8")


def tables(database: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table (FTS shadow tables too), but run times."""
    snapshot = {}
    with sqlite3.connect(database) as connection:
        names = [
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name not in SKIPPED_TABLES
        ]
        for name in names:
            columns = [
                column
                for _, column, *_ in connection.execute(f"PRAGMA table_info({name})")
                if (name, column) not in TIMES
            ]
            rows = connection.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall()
            snapshot[name] = sorted(rows, key=repr)
        # the search index holds every paper as it is now (raises if not)
        connection.execute("INSERT INTO papers_fts(papers_fts, rank) VALUES ('integrity-check', 1)")
    return snapshot


@pytest.mark.parametrize("full_refresh", [False, True])
@pytest.mark.slow
def test_remembering_writes_gives_the_database_reading_them_back_gives(
    tmp_path: Path, full_refresh: bool
) -> None:
    folder = tmp_path / "in"
    write_corpus(folder)
    snapshots = {}
    for remember in (True, False):
        database = tmp_path / f"remember-{remember}.db"
        url = f"sqlite:///{database}"
        if full_refresh:  # a database that held papers, emptied by the run itself
            run(RunOptions(paths=(str(folder / "c_third.jsonl"),), database_url=url))
        report = run(
            RunOptions(
                paths=(str(folder),),
                database_url=url,
                batch_size=8,
                remember_writes=remember,
                full_refresh=full_refresh,
            )
        )
        status = {Path(s.path).name: s.status for s in report.sources}
        assert status == {
            "a_first.jsonl": "loaded",
            "b_broken.json": "failed",
            "c_third.jsonl": "loaded",
            "d_fourth.jsonl": "loaded",
        }
        assert report.papers_updated > 0  # the revised abstracts rewrote stored papers
        snapshots[remember] = tables(database)
    remembered, read_back = snapshots[True], snapshots[False]
    assert remembered.keys() == read_back.keys()
    for name in read_back:
        assert remembered[name] == read_back[name], name
    counts = {name: len(read_back[name]) for name in ("papers", "authors", "links", "methods")}
    assert counts["papers"] > 100 and min(counts.values()) > 0


def test_a_run_past_the_memory_bound_forgets_and_gives_the_same_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a bound of 150 rows the run forgets in its first file, mid-transaction, and asks
    the database from then on: the tables are those of a run that never remembered."""
    monkeypatch.setattr(known, "REMEMBERED_ROWS", 150)
    folder = tmp_path / "in"
    write_corpus(folder)
    snapshots = {}
    for remember in (True, False):
        database = tmp_path / f"remember-{remember}.db"
        options = RunOptions(
            paths=(str(folder),),
            database_url=f"sqlite:///{database}",
            batch_size=8,
            remember_writes=remember,
        )
        assert run(options).papers_inserted > 100
        snapshots[remember] = tables(database)
    assert snapshots[True] == snapshots[False]


def test_remembered_rows_stop_at_their_bound_and_ask_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(known, "REMEMBERED_ROWS", 100)
    engine = create_db_engine(f"sqlite:///{tmp_path / 'papers.db'}")
    upgrade_to_head(engine)
    try:
        with engine.begin() as connection:
            memory = known.RememberedRows.start(connection)
            assert memory is not None
            name, author_id = schema.authors.c.name, schema.authors.c.id
            memory.wrote_lookups(name, {f"Author {i}": i for i in range(100)})
            assert memory.active and memory.lookup(connection, name, author_id, ["Author 7"])
            memory.wrote_lookups(name, {"Author 100": 100})  # the 101st row
            assert not memory.active
            # Asked from then on, the database (which holds no such author) answers.
            assert memory.lookup(connection, name, author_id, ["Author 7"]) == {}
    finally:
        engine.dispose()

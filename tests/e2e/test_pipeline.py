"""The pipeline's wiring: parallel transform gives the same database as a single process."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from etl.pipeline import RunOptions, run
from tests.helpers import abstract, write_corpus

TABLES = {
    "papers": "SELECT id, venue, year, title, abstract, abstract_raw, method_names, content_hash FROM papers",
    "paper_sources": "SELECT p.id, position FROM paper_sources JOIN papers p ON p.pk = paper_pk",
    "links": "SELECT url, host, kind, repo_owner, repo_name FROM links",
    "paper_links": "SELECT p.id, l.url, found_in FROM paper_links JOIN links l ON l.id = link_id JOIN papers p ON p.pk = paper_pk",
    "methods": "SELECT key, name, kind FROM methods",
    "method_aliases": "SELECT a.key, alias, m.key FROM method_aliases a JOIN methods m ON m.id = a.method_id",
    "paper_methods": "SELECT p.id, m.key, role, surface FROM paper_methods JOIN methods m ON m.id = method_id JOIN papers p ON p.pk = paper_pk",
    "acronyms": "SELECT p.id, acronym, expansion FROM acronyms JOIN papers p ON p.pk = paper_pk",
    "paper_topics": "SELECT p.id, topic_slug, score, evidence FROM paper_topics JOIN papers p ON p.pk = paper_pk",
    "search": "SELECT rowid, title, abstract, method_names FROM papers_fts",
    "rejects": "SELECT source_path, position, reason, raw FROM rejects",
}


def write_json_lines(path: Path, count: int, broken_at: set[int]) -> None:
    """`count` JSON Lines records (line numbers in `broken_at` hold broken JSON instead)."""
    rng = random.Random(11)
    lines = []
    for number in range(1, count + 1):
        if number in broken_at:
            lines.append('{"title": "cut short", "abstract": ')
            continue
        record = {
            "title": f"Paper {number}",
            "abstract": abstract(rng, 10_000 + number),
            "authors": ["Ada Lovelace", f"Author {number % 17}"],
            "github": f"https://github.com/lab/repo{number}" if number % 4 == 0 else None,
        }
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", "utf-8")


def snapshot(database: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(database) as connection:
        return {name: sorted(connection.execute(sql).fetchall()) for name, sql in TABLES.items()}


@pytest.mark.slow
def test_workers_give_output_identical_to_one_process(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    write_corpus(folder, files=3, per_file=400)
    write_json_lines(folder / "export.jsonl", 300, broken_at={5, 250})  # both batches' sides
    results = {}
    for workers in (1, 2):
        database = tmp_path / f"w{workers}.db"
        report = run(
            RunOptions(
                paths=(str(folder),),
                database_url=f"sqlite:///{database}",
                workers=workers,
                batch_size=100,
            )
        )
        assert (report.papers_inserted, report.rejects) == (1498, 2)
        results[workers] = snapshot(database)
    assert results[1] == results[2]
    assert all(
        results[1][name] for name in ("papers", "links", "methods", "paper_topics", "search")
    )
    assert [(Path(path).name, line) for path, line, *_ in results[2]["rejects"]] == [
        ("export.jsonl", 5),
        ("export.jsonl", 250),
    ]


def test_summary_reports_seconds_per_stage(tmp_path: Path, seeds: Path) -> None:
    report = run(
        RunOptions(paths=(str(seeds),), database_url=f"sqlite:///{tmp_path / 'p.db'}", workers=1)
    )
    assert {"extract", "transform", "load", "index"} <= set(report.stage_seconds)
    # Stages that did work took time, and the stages together fit inside the run's wall time.
    assert all(report.stage_seconds[stage] > 0 for stage in ("migrate", "extract", "load"))
    assert sum(report.stage_seconds.values()) <= report.seconds


def test_transform_workers_import_neither_sqlalchemy_nor_the_loader() -> None:
    """Each worker process imports etl.parallel, and the main script (the `etl` command's is
    etl.cli): keeping both light keeps workers small."""
    code = "import sys, etl.parallel, etl.cli; print(sorted(m for m in sys.modules if m.startswith(('sqlalchemy', 'alembic', 'etl.load'))))"
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == "[]"


def test_a_link_leaving_a_loaded_folder_is_listed_and_not_loaded(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n", "utf-8")
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps({"title": "A paper"}) + "\n", "utf-8")
    (folder / "passwd.txt").symlink_to(secret)
    database = tmp_path / "p.db"
    report = run(RunOptions(paths=(str(folder),), database_url=f"sqlite:///{database}"))
    ignored = [(Path(s.path).name, s.message) for s in report.sources if s.status == "ignored"]
    assert ignored == [("passwd.txt", f"a link leaving the folder (to {secret.resolve()})")]
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT title FROM papers").fetchall() == [("A paper",)]


def test_a_venues_file_adds_spellings_for_the_run(tmp_path: Path) -> None:
    venues = tmp_path / "venues.toml"
    venues.write_text('[[venue]]\nname = "MLSys"\nspellings = ["SysML"]\n', "utf-8")
    source = tmp_path / "sysml2019.jsonl"
    source.write_text(json.dumps({"title": "A paper", "venue": "sysml 2019"}) + "\n", "utf-8")
    database = tmp_path / "p.db"
    run(RunOptions(paths=(str(source),), database_url=f"sqlite:///{database}", venues=str(venues)))
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT venue, year FROM papers").fetchall() == [("MLSys", 2019)]

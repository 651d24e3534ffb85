"""The planner's statistics after a load: a run analyses the tables it changed much (PostgreSQL:
`ANALYZE`, even with autovacuum off; SQLite: `PRAGMA optimize`, or a bounded `ANALYZE`), and
nothing when it changed little."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from etl.load import upgrade_to_head
from tests.helpers import fetch, load, write_corpus

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

ANALYSED = (
    "SELECT relname, last_analyze FROM pg_stat_user_tables "
    "WHERE relname IN ('papers', 'paper_sources', 'paper_keys', 'paper_methods') ORDER BY relname"
)


def autovacuum_off(url: str) -> None:
    """Migrate an empty database and switch autovacuum (auto-analyze too) off for its tables."""
    engine = create_engine(url)
    try:
        upgrade_to_head(engine)
        with engine.begin() as connection:
            names = connection.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            ).scalars()
            for name in list(names):
                connection.execute(text(f'ALTER TABLE "{name}" SET (autovacuum_enabled = false)'))
    finally:
        engine.dispose()


def first_load(url: str, folder: Path) -> dict[object, object]:
    """120 papers loaded with autovacuum off: when each main table was last analysed."""
    write_corpus(folder, files=1, per_file=120)
    autovacuum_off(url)
    load(url, folder)
    return dict(fetch(url, ANALYSED))


def estimated_papers(url: str) -> float:
    """How many papers the planner thinks there are (pg_class.reltuples)."""
    return float(fetch(url, "SELECT reltuples FROM pg_class WHERE relname = 'papers'")[0][0])  # type: ignore[arg-type]


def test_a_load_analyses_what_it_wrote_on_postgresql_with_autovacuum_off(
    postgres_url: str, tmp_path: Path
) -> None:
    first = first_load(postgres_url, tmp_path / "lists")
    assert set(first) == {"papers", "paper_sources", "paper_keys", "paper_methods"}
    assert all(first.values()), first  # each analysed by the run, autovacuum being off
    assert estimated_papers(postgres_url) == 120
    load(postgres_url, tmp_path / "lists")  # unchanged: nothing to analyse again
    assert dict(fetch(postgres_url, ANALYSED)) == first


def test_a_load_that_adds_many_papers_analyses_again(postgres_url: str, tmp_path: Path) -> None:
    first = first_load(postgres_url, tmp_path / "lists")
    write_corpus(tmp_path / "more", files=1, per_file=80, seed=11)
    load(postgres_url, tmp_path / "more")
    second = dict(fetch(postgres_url, ANALYSED))
    assert second["papers"] > first["papers"]  # type: ignore[operator]
    assert estimated_papers(postgres_url) == 200


def test_a_load_leaves_sqlite_with_statistics(sqlite_url: str, tmp_path: Path) -> None:
    write_corpus(tmp_path / "lists", files=1, per_file=60)
    load(sqlite_url, tmp_path / "lists")
    tables = {t for (t,) in fetch(sqlite_url, "SELECT DISTINCT tbl FROM sqlite_stat1")}
    assert {"papers", "paper_sources", "paper_keys"} <= tables

"""The view contract on both backends: names, columns, and identical rows for the seeds."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from etl.load.database import view_definitions
from tests.helpers import fetch, fresh_postgres_database, load

CONTRACT = {
    "papers_with_code": {
        "paper_id",
        "venue",
        "year",
        "title",
        "code_url",
        "repo_owner",
        "repo_name",
    },
    "paper_overview": {
        "paper_id",
        "venue",
        "year",
        "title",
        "abstract",
        "topics",
        "methods",
        "code_urls",
        "tasks",
    },
    "method_index": {"method", "kind", "role", "paper_id", "title"},
    "acronym_glossary": {"acronym", "expansion", "paper_id"},
    "topic_summary": {"topic", "parent", "papers", "papers_with_code", "share_with_code"},
    "venue_summary": {"venue", "year", "papers", "papers_with_code"},
    "task_index": {"task", "topic", "papers", "papers_with_code", "share_with_code"},
    "recent_changes": {
        "event_id",
        "run_id",
        "changed_at",
        "kind",
        "field",
        "old_value",
        "new_value",
        "paper_id",
        "label",
        "venue",
        "year",
    },
    "code_released": {
        "paper_id",
        "label",
        "venue",
        "year",
        "first_loaded_at",
        "code_released_at",
        "code_url",
        "first_loaded_run",
        "code_released_run",
    },
    "method_lineage": {
        "method",
        "kind",
        "introduced_by",
        "introduced_at",
        "introduced_year",
        "mentioned_by",
        "later_papers",
        "first_mention_year",
        "latest_mention_year",
        "later_papers_with_code",
    },
    "method_adoption": {"method", "kind", "year", "papers", "papers_with_code", "introduced_year"},
    "venue_year_totals": {
        "venue",
        "year",
        "papers",
        "accepted",
        "refused",
        "papers_with_code",
        "share_with_code",
    },
    "papers_sharing_tasks": {
        "paper_id",
        "label",
        "related_paper_id",
        "related_label",
        "related_venue",
        "related_year",
        "shared_tasks",
        "tasks",
    },
    "top_methods": {"year", "role", "method", "kind", "papers", "rank"},
    "cited_by": {"paper_id", "label", "citing_paper_id", "citing_label", "citing_year"},
    "citation_counts": {"paper_id", "label", "cited_by", "references_given", "source_cited_by"},
    "related_papers": {
        "paper_id",
        "related_paper_id",
        "score",
        "rank",
        "shared_references",
        "co_citations",
        "shared_methods",
        "shared_tasks",
    },
}
# Views whose rows hold the time of a load (or are empty after a single one): not compared
# across backends.
LOAD_HISTORY = {"recent_changes", "code_released"}
# Views the seeds leave empty (no two seed papers share a task, the lists give no citations):
# compared on other records in tests/read/test_question_views.py and test_citation_views.py.
EMPTY_ON_SEEDS = {"papers_sharing_tasks", "cited_by", "related_papers"}


def test_contract_views_exist_with_their_columns(seeded_url: str) -> None:
    engine = create_engine(seeded_url)
    try:
        inspector = inspect(engine)
        assert set(CONTRACT) <= set(inspector.get_view_names())
        for view, columns in CONTRACT.items():
            assert columns <= {c["name"] for c in inspector.get_columns(view)}, view
    finally:
        engine.dispose()


def test_new_columns_of_paper_overview_come_last(seeded_url: str) -> None:
    engine = create_engine(seeded_url)
    try:
        columns = [c["name"] for c in inspect(engine).get_columns("paper_overview")]
    finally:
        engine.dispose()
    assert columns[-3:] == ["tasks", "listed_tasks", "listed_methods"]


def test_papers_with_code_lists_ten_papers_with_clean_github_urls(seeded_url: str) -> None:
    found = fetch(
        seeded_url, "SELECT paper_id, code_url, repo_owner, repo_name FROM papers_with_code"
    )
    assert len({paper for paper, *_ in found}) == 10
    for _, url, owner, name in found:
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", str(url)), url
        assert url == f"https://github.com/{owner}/{name}"
        assert not str(url).endswith((".git", ".", "/"))


def test_venue_summary_and_overview_agree(seeded_url: str) -> None:
    assert fetch(seeded_url, "SELECT venue, year, papers, papers_with_code FROM venue_summary") == [
        ("ICML", 2025, 38, 10)
    ]
    overview = fetch(
        seeded_url, "SELECT count(*), count(code_urls), count(topics) FROM paper_overview"
    )
    assert overview == [(38, 10, 38)]


def test_topic_summary_counts_areas_over_their_topics(seeded_url: str) -> None:
    summary = {
        r[0]: r[1:]
        for r in fetch(
            seeded_url,
            "SELECT slug, parent, papers, papers_with_code, share_with_code FROM topic_summary",
        )
    }
    children = fetch(
        seeded_url, "SELECT slug, parent_slug FROM topics WHERE parent_slug IS NOT NULL"
    )
    for slug, parent in children:
        assert summary[parent][1] >= summary[slug][1]
    for _, papers, with_code, share in summary.values():
        assert with_code <= papers
        expected = round(with_code / papers, 4) if papers else 0.0
        assert float(share) == pytest.approx(expected)  # type: ignore[arg-type]


def test_acronym_glossary_expands_rope(seeded_url: str) -> None:
    found = fetch(seeded_url, "SELECT expansion FROM acronym_glossary WHERE acronym = 'RoPE'")
    assert ("Rotary Position Embedding",) in found


def test_every_view_file_has_a_description_and_dialect_variants_keep_columns() -> None:
    sqlite_views = {v.name: v for v in view_definitions("sqlite")}
    postgres_views = {v.name: v for v in view_definitions("postgresql")}
    assert (
        set(sqlite_views)
        == set(postgres_views)
        == set(CONTRACT) | {"paper_labels", "paper_method_roles"}
    )
    for name in sqlite_views:
        assert sqlite_views[name].description and postgres_views[name].description
        assert (
            sqlite_views[name].column_comments.keys() == postgres_views[name].column_comments.keys()
        )


def normalise(value: object) -> object:
    """Same value whatever the driver returns: Decimal and float compared as rounded floats."""
    if isinstance(value, Decimal | float):
        return round(float(value), 4)
    return value


@pytest.mark.postgres
def test_seed_views_hold_identical_rows_on_sqlite_and_postgres(tmp_path: Path, seeds: Path) -> None:
    sqlite_url = f"sqlite:///{tmp_path / 'papers.db'}"
    load(sqlite_url, seeds)
    with fresh_postgres_database(migrated=True) as postgres_url:
        load(postgres_url, seeds)
        for view in [*(set(CONTRACT) - LOAD_HISTORY), "paper_labels"]:
            sql = f"SELECT * FROM {view}"
            on_sqlite = sorted(tuple(map(normalise, r)) for r in fetch(sqlite_url, sql))
            on_postgres = sorted(tuple(map(normalise, r)) for r in fetch(postgres_url, sql))
            assert on_sqlite == on_postgres, view
            assert on_sqlite or view in EMPTY_ON_SEEDS, view


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.migrated
def test_postgres_views_and_key_columns_carry_comments(postgres_url: str, seeds: Path) -> None:
    load(postgres_url, seeds)
    comments = dict(
        fetch(
            postgres_url,
            "SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c "
            "WHERE c.relkind = 'v' AND c.relnamespace = 'public'::regnamespace",
        )
    )
    for view in CONTRACT:
        assert comments[view], view
    column_comment = fetch(
        postgres_url,
        "SELECT col_description('papers_with_code'::regclass, a.attnum) FROM pg_attribute a "
        "WHERE a.attrelid = 'papers_with_code'::regclass AND a.attname = 'code_url'",
    )
    assert "repository URL" in str(column_comment[0][0])

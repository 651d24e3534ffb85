"""No blank titles: an untitled paper is shown with a label, on both backends; title stays NULL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from etl.read import open_reader, search
from tests.helpers import fetch, load

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

LONG = (
    "Large language models are widely used for many tasks in natural language processing, "
    "and in this work we examine how their calibration changes under distribution shift."
)
RECORDS = [
    {
        "title": "Graphs Made Sparse",
        "abstract": "We study sparse graphs. https://github.com/acme/graphs",
    },
    {
        "abstract": "We propose ZorbNet, a novel architecture for sparse attention. https://github.com/acme/zorbnet"
    },
    {"abstract": LONG},
    {"title": "   ", "abstract": "Short sparse abstract."},
]


def write_records(folder: Path) -> Path:
    path = folder / "testconf_2024.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n", encoding="utf-8")
    return path


def labels(url: str) -> dict[str, str]:
    rows = fetch(
        url,
        "SELECT p.abstract, l.label FROM paper_labels AS l JOIN papers AS p ON p.pk = l.paper_pk",
    )
    return {str(abstract)[:20]: str(label) for abstract, label in rows}


def test_labels_fall_back_from_title_to_introduced_method_to_opening_words(
    db_url: str, tmp_path: Path
) -> None:
    load(db_url, write_records(tmp_path))
    found = labels(db_url)
    assert found["We study sparse grap"] == "Graphs Made Sparse"
    assert found["We propose ZorbNet, "] == "ZorbNet"
    assert found["Large language models"[:20]] == (
        "Large language models are widely used for many tasks in natural language processing, and…"
    )
    assert found["Short sparse abstrac"] == "Short sparse abstract."
    assert fetch(db_url, "SELECT count(*) FROM papers WHERE title IS NOT NULL") == [(1,)]


def test_views_and_search_show_a_label_for_every_paper(db_url: str, tmp_path: Path) -> None:
    load(db_url, write_records(tmp_path))
    for view in ("papers_with_code", "paper_overview", "method_index"):
        rows = fetch(db_url, f"SELECT title, label FROM {view}")
        assert rows, view
        assert any(title is None for title, _ in rows), view
        assert all(label and str(label).strip() for _, label in rows), view
    with_code = dict(fetch(db_url, "SELECT code_url, label FROM papers_with_code"))
    assert with_code["https://github.com/acme/zorbnet"] == "ZorbNet"
    engine = open_reader(db_url)
    try:
        result = search(engine, "sparse", 10)
    finally:
        engine.dispose()
    label = result.columns.index("label")
    assert len(result.rows) == 3
    assert all(row[label] for row in result.rows)
    assert {row[label] for row in result.rows} == {
        "Graphs Made Sparse",
        "ZorbNet",
        "Short sparse abstract.",
    }


def test_a_rerun_creates_packaged_views_a_database_lacks(sqlite_url: str, tmp_path: Path) -> None:
    records = write_records(tmp_path)
    load(sqlite_url, records)
    engine = create_engine(sqlite_url)
    with engine.begin() as connection:  # as left by an etl from before paper_labels existed
        for view in ("papers_with_code", "paper_overview", "method_index", "acronym_glossary"):
            connection.execute(text(f"DROP VIEW {view}"))
        connection.execute(text("DROP VIEW paper_labels"))
    engine.dispose()
    load(sqlite_url, records)
    assert fetch(sqlite_url, "SELECT count(*) FROM paper_overview WHERE label IS NOT NULL") == [
        (4,)
    ]

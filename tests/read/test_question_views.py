"""The views for common questions (sql/views/): papers per venue and year across statuses,
papers sharing a task with a given paper, the most used methods of a year; the same rows on
both backends. Made-up records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from tests.helpers import BACKENDS, REPO, fetch, fresh_database, load

PAPERS = [
    {
        "title": "Sparse Zorbs for Image Classification",
        "abstract": "We propose ZorbNet, a convolutional network for image classification on "
        "ImageNet and CIFAR-10. It improves top-1 accuracy of image classification while "
        "using fewer parameters. Code: https://github.com/invented/zorbnet",
        "status": "Poster",
        "venue": "DEMOCONF 2024",
    },
    {
        "title": "Quiet Segmentation of Lanterns",
        "abstract": "We propose LanternSeg, a method for semantic segmentation of street scenes "
        "on Cityscapes. It improves semantic segmentation and image classification accuracy "
        "with a shared backbone pretrained on ImageNet.",
        "status": "Oral",
        "venue": "DEMOCONF 2024",
    },
    {
        "title": "Moths Classify Images",
        "abstract": "Image classification with moths: we introduce MothNet, a network trained "
        "for semantic segmentation and image classification, and report top-1 accuracy.",
        "status": "Reject",
        "venue": "DEMOCONF 2024",
    },
    {
        "title": "Reward Shaping for Invented Games",
        "abstract": "We propose a deep reinforcement learning agent for Atari games that learns "
        "from sparse rewards with a curiosity bonus.",
        "status": "Withdrawn",
        "venue": "DEMOCONF 2024",
    },
]
# The same venue's second list: the rejected paper again, and the oral one as a spotlight.
SECOND = [dict(PAPERS[2], status="Reject"), dict(PAPERS[1], status="Spotlight")]
QUESTIONS = ("venue_year_totals", "papers_sharing_tasks", "top_methods")


@pytest.fixture(scope="module", params=BACKENDS)
def question_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> object:
    folder = tmp_path_factory.mktemp("questions")
    (folder / "democonf_2024.json").write_text(json.dumps(PAPERS), encoding="utf-8")
    (folder / "democonf_2024_more.json").write_text(json.dumps(SECOND), encoding="utf-8")
    with fresh_database(request.param, folder, migrated=True) as url:
        load(url, folder)
        yield url


def test_papers_per_venue_and_year_count_each_paper_once_across_statuses(
    question_url: str,
) -> None:
    rows = fetch(
        question_url,
        "SELECT venue, year, papers, accepted, refused, papers_with_code FROM venue_year_totals",
    )
    assert rows == [("DEMOCONF", 2024, 4, 2, 2, 1)]
    by_status = fetch(question_url, "SELECT SUM(papers) FROM venue_summary")
    assert int(by_status[0][0]) == 5  # type: ignore[arg-type]  # the oral paper twice there


def test_papers_sharing_a_task_with_a_given_paper(question_url: str) -> None:
    (moths,) = fetch(question_url, "SELECT id FROM papers WHERE title = 'Moths Classify Images'")
    rows = fetch(
        question_url,
        "SELECT related_label, shared_tasks, tasks FROM papers_sharing_tasks "
        "WHERE paper_id = :id ORDER BY shared_tasks DESC, related_label",
        {"id": moths[0]},
    )
    assert rows == [
        ("Quiet Segmentation of Lanterns", 2, "Image Classification; Semantic Segmentation"),
        ("Sparse Zorbs for Image Classification", 1, "Image Classification"),
    ]
    alone = fetch(
        question_url,
        "SELECT COUNT(*) FROM papers_sharing_tasks WHERE label = 'Reward Shaping for Invented Games'",
    )
    assert alone == [(0,)]


def test_top_methods_rank_each_year_and_role(question_url: str) -> None:
    rows = fetch(
        question_url,
        "SELECT method, papers, rank FROM top_methods "
        "WHERE year = 2024 AND role = 'mentioned' AND rank = 1",
    )
    assert rows == [("ImageNet", 2, 1)]
    introduced = fetch(
        question_url,
        "SELECT method, rank FROM top_methods WHERE year = 2024 AND role = 'introduced' "
        "ORDER BY method",
    )
    assert {"LanternSeg", "MothNet", "ZorbNet"} <= {m for m, _ in introduced}
    assert {r for _, r in introduced} == {1}


def normalise(value: object) -> object:
    return round(float(value), 4) if isinstance(value, Decimal | float) else value


@pytest.mark.postgres
def test_the_question_views_hold_the_same_rows_on_both_backends(tmp_path: Path) -> None:
    (tmp_path / "democonf_2024.json").write_text(json.dumps(PAPERS), encoding="utf-8")
    (tmp_path / "democonf_2024_more.json").write_text(json.dumps(SECOND), encoding="utf-8")
    found = {}
    for kind in ("sqlite", "postgresql"):
        (tmp_path / kind).mkdir()
        with fresh_database(kind, tmp_path / kind, migrated=True) as url:
            load(url, tmp_path / "democonf_2024.json", tmp_path / "democonf_2024_more.json")
            found[kind] = {
                view: sorted(tuple(map(normalise, r)) for r in fetch(url, f"SELECT * FROM {view}"))
                for view in QUESTIONS
            }
    assert found["sqlite"] == found["postgresql"]
    assert all(found["sqlite"].values())


def test_the_migration_adds_the_views_and_its_downgrade_drops_them(
    db_url: str, tmp_path: Path
) -> None:
    def alembic(*args: str) -> None:
        environment = {**os.environ, "ETL_DATABASE_URL": db_url}
        command = [sys.executable, "-m", "alembic", *args]
        subprocess.run(command, cwd=REPO, env=environment, check=True, capture_output=True)

    def views() -> set[str]:
        engine = create_engine(db_url)
        try:
            return set(inspect(engine).get_view_names())
        finally:
            engine.dispose()

    alembic("upgrade", "head")
    assert set(QUESTIONS) <= views()
    alembic("downgrade", "0010")  # the revision before the views for common questions
    assert not set(QUESTIONS) & views() and "venue_summary" in views()
    alembic("upgrade", "head")
    assert set(QUESTIONS) <= views()

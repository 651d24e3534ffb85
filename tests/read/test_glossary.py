"""Acronyms and methods merge across case in what a reader sees, through a real load on both
backends: one glossary spelling per acronym and expansion, one method per artifact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import fetch, load

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

ABSTRACTS = [
    # two papers write the expansion in lower case, one in title case, one in capitals
    "We train a convolutional neural network (CNN) on scans and evaluate on SWE-bench Lite.",
    "A convolutional neural network (CNN) reads the frames; we compare with SWE-Bench Lite.",
    "We study the Convolutional Neural Network (CNN) and Rotary Position Embedding (RoPE).",
    "Our CONVOLUTIONAL NEURAL NETWORK (CNN) uses rotary position embedding (RoPE) in layers.",
]


def write_records(folder: Path) -> Path:
    path = folder / "papers.jsonl"
    records = [
        {"title": f"Paper {n}", "abstract": text, "venue": "TestConf", "year": 2025}
        for n, text in enumerate(ABSTRACTS, 1)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def test_one_glossary_spelling_per_acronym_and_expansion_whatever_the_case(
    db_url: str, tmp_path: Path
) -> None:
    load(db_url, write_records(tmp_path))
    rows = fetch(
        db_url,
        "SELECT DISTINCT acronym, expansion FROM acronym_glossary ORDER BY acronym, expansion",
    )
    # the spelling most papers write wins; on a tie (RoPE: one each), the one loaded first
    assert rows == [
        ("CNN", "convolutional neural network"),
        ("RoPE", "Rotary Position Embedding"),
    ]
    written = fetch(
        db_url,
        "SELECT title, written FROM acronym_glossary WHERE acronym = 'CNN' ORDER BY title",
    )
    assert written == [
        ("Paper 1", "convolutional neural network"),
        ("Paper 2", "convolutional neural network"),
        ("Paper 3", "Convolutional Neural Network"),
        ("Paper 4", "CONVOLUTIONAL NEURAL NETWORK"),
    ]


def test_methods_merge_across_case_into_one_row(db_url: str, tmp_path: Path) -> None:
    load(db_url, write_records(tmp_path))
    methods = fetch(
        db_url,
        "SELECT method, count(DISTINCT paper_id) FROM method_index "
        "WHERE lower(method) LIKE 'swe%' GROUP BY method",
    )
    # one method; its name the spelling most mentions write (a tie here: the smaller)
    assert methods == [("SWE-Bench Lite", 2)]


def test_the_reports_expansion_count_ignores_case(db_url: str, tmp_path: Path) -> None:
    load(db_url, write_records(tmp_path))
    query = (Path(__file__).resolve().parents[2] / "sql" / "report" / "acronyms.sql").read_text()
    counts = {row[0]: row[2] for row in fetch(db_url, query)}
    assert counts == {"CNN": 1, "RoPE": 1}

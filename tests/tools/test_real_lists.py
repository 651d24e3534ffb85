"""tools/real_lists.py: per-file counts of what went in beside what etl stored (made-up lists)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import real_lists

ABSTRACT = (
    "We sort lists of numbers with a small model and explain which units hold the order. " * 2
)


def test_the_table_counts_titles_venues_authors_and_repositories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    iclr = [
        {
            "title": "Sorting",
            "abstract": ABSTRACT + "Code: https://github.com/lab/sorter.",
            "author": "Ann Lee;Bo Chen",
            "homepage": "https://ann.example.org;https://github.com/bochen",
            "github": "[![github](/i.svg) lab/sorter2](https://github.com/lab/sorter2)",
        },
        {"title": "Withdrawn", "abstract": "withdrawn", "author": "Cy Dee"},
    ]
    (folder / "iclr2018.json").write_text(json.dumps(iclr), "utf-8")
    (folder / "r20k.json").write_text(json.dumps([{"title": "Alone", "author": "Di Eve"}]), "utf-8")
    assert real_lists.main([str(folder)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if ".json " in line}
    # records, no title/abstract, titled, titles in, stored, venue, year, with it, sightings,
    # authors in, stored, repos in, found, homepages as paper links
    assert rows["iclr2018.json"][1:] == [
        "2",
        "0",
        "2",
        "2",
        "2",
        "ICLR",
        "2018",
        "2",
        "2",
        "3",
        "3",
        "2",
        "2",
        "0",
    ]
    assert rows["r20k.json"][1:] == [
        "1",
        "0",
        "1",
        "1",
        "1",
        "-",
        "-",
        "1",
        "1",
        "1",
        "1",
        "0",
        "0",
        "0",
    ]
    assert "rerun: 2 of 2 files skipped, 0 inserted, 0 updated, 0 removed" in out
    assert "after dropping the last record of iclr2018.json: 1 file read, 1 skipped" in out

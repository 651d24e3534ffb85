"""tools/established_names.py: the year from which a name was in use, from made-up lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import established_names


def paper(title: str, abstract: str, pid: str) -> dict[str, str]:
    return {"id": pid, "title": title, "abstract": abstract}


USES = "We train a classifier with {name} and compare it with two baselines on three benchmarks."


def write_list(folder: Path, file: str, records: list[dict[str, str]]) -> None:
    path = folder / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records), "utf-8")


def lines(out: str) -> dict[str, int]:
    rows = [line.split("\t") for line in out.splitlines() if line and not line.startswith("#")]
    return {key: int(year) for key, year in rows}


def test_a_name_is_established_in_the_year_its_papers_reach_the_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_list(tmp_path, "conf/conf2015.json", [paper("A", USES.format(name="ZorbNet"), "a")])
    write_list(
        tmp_path,
        "conf/conf2016.json",
        [paper(t, USES.format(name="ZorbNet"), t) for t in ("B", "C", "D")],
    )
    write_list(tmp_path, "other/other2014.json", [paper("E", USES.format(name="ZorbNet"), "e")])
    assert established_names.main([str(tmp_path), "--min-papers", "3"]) == 0
    assert lines(capsys.readouterr().out)["zorbnet"] == 2016  # 2014 + 2015 + 2016 papers
    assert established_names.main([str(tmp_path), "--min-papers", "6"]) == 0
    assert "zorbnet" not in lines(capsys.readouterr().out)


def test_a_paper_listed_twice_counts_once_and_gold_records_are_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = USES.format(name="ZorbNet")
    write_list(tmp_path, "conf/conf2015.json", [paper("Same", text, "a"), paper("G", text, "g")])
    write_list(tmp_path, "work/work2015.json", [paper("same", text, "w")])
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"id": "x", "source": {"file": "conf/conf2015.json", "record_id": "g"}}) + "\n"
    )
    assert established_names.main([str(tmp_path), "--min-papers", "2", "--exclude", str(gold)]) == 0
    assert "zorbnet" not in lines(capsys.readouterr().out)


def test_the_reserved_lists_are_refused(tmp_path: Path) -> None:
    write_list(tmp_path, "iclr/iclr2024.json", [paper("A", USES.format(name="ZorbNet"), "a")])
    with pytest.raises(SystemExit, match="reserved"):
        established_names.main([str(tmp_path)])

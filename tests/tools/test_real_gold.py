"""tools/real_gold.py: annotations keyed to records of a local list copy, texts put back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import real_gold

RECORDS = [
    {"id": "a1", "title": "Kestrel: Aligning Things", "abstract": "We propose Kestrel. " * 30},
    {"id": "a2", "title": "Short", "abstract": "too short"},
    {"id": "a1", "title": "Same id twice", "abstract": "An abstract about Heron. " * 30},
]


@pytest.fixture
def lists(tmp_path: Path) -> Path:
    folder = tmp_path / "lists"
    (folder / "conf").mkdir(parents=True)
    (folder / "conf" / "conf2020.json").write_text(json.dumps(RECORDS), "utf-8")
    return folder


def test_select_keys_records_without_their_text(lists: Path) -> None:
    lines = list(real_gold.select(real_gold.Lists(str(lists)), "c0", ["conf/conf2020.json:2"], "s"))
    assert [line["source"]["record_id"] for line in lines] == ["#1", "#3"]  # "a1" is not unique
    assert {line["venue"] for line in lines} == {"conf"} and lines[0]["year"] == 2020
    assert "abstract" not in json.dumps(lines) and "Kestrel" not in json.dumps(lines)


def test_materialize_puts_text_back_and_notices_edits(lists: Path, tmp_path: Path) -> None:
    copy = real_gold.Lists(str(lists))
    gold = tmp_path / "gold.jsonl"
    lines = list(real_gold.select(copy, "c0", ["conf/conf2020.json:1:kestrel"], "s"))
    gold.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    out = tmp_path / "full.jsonl"
    assert real_gold.materialize(copy, str(gold), out) == 1
    full = json.loads(out.read_text("utf-8"))
    assert full["title"] == "Kestrel: Aligning Things" and full["abstract"].startswith("We propose")
    edited = [dict(RECORDS[0], abstract="changed " * 80), *RECORDS[1:]]
    (lists / "conf" / "conf2020.json").write_text(json.dumps(edited), "utf-8")
    with pytest.raises(SystemExit, match="changed since it was annotated"):
        real_gold.materialize(real_gold.Lists(str(lists)), str(gold), out)


def test_select_never_draws_a_record_an_excluded_gold_file_holds(
    lists: Path, tmp_path: Path
) -> None:
    copy = real_gold.Lists(str(lists))
    first = list(real_gold.select(copy, "c0", ["conf/conf2020.json:1"], "s"))
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(line) + "\n" for line in first), "utf-8")
    again = list(
        real_gold.select(copy, "c0", ["conf/conf2020.json:1"], "s", real_gold.drawn([str(old)]))
    )
    assert again[0]["source"]["record_id"] != first[0]["source"]["record_id"]
    with pytest.raises(ValueError):  # both eligible records drawn already: none left for 2
        list(
            real_gold.select(copy, "c0", ["conf/conf2020.json:2"], "s", real_gold.drawn([str(old)]))
        )


def test_agree_scores_a_second_reading_against_the_first(
    lists: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = real_gold.Lists(str(lists))
    skeleton = list(real_gold.select(copy, "c0", ["conf/conf2020.json:2"], "s"))
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    readings = (
        ({"topics": ["llm", "agents"], "tasks": ["Question Answering"]}, first),
        ({"topics": ["new:llm", "vision-language"], "tasks": ["Question Answering (QA)"]}, second),
    )
    for fields, path in readings:
        path.write_text("".join(json.dumps({**s, **fields}) + "\n" for s in skeleton), "utf-8")
    assert real_gold.main(["agree", str(first), str(second), "--lists", str(lists)]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    assert set(rows) == {"topics", "tasks"}  # only the fields both readings annotate
    assert rows["topics"][-1] == "0.5"  # one of two topics agreed, per record
    assert rows["tasks"][-1] == "1.0"  # the archive's appended acronym is ignored

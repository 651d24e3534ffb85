"""Hostile values inside otherwise good input: lone surrogates, numbers Python or JSON cannot
hold, names that are not UTF-8, BibTeX `#` joins; each stored by one rule or rejected with
its reason, never a crash (exit 70), on both backends where a database is involved."""

from __future__ import annotations

import io
import json
import os
import time
import tracemalloc
from pathlib import Path

import pytest

from etl import extract, read
from etl.extract import json_io
from etl.extract.shapes import sniff_json
from etl.models import RawRecord, Reject
from tests.helpers import etl, fetch, load

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

ABSTRACT = "An abstract long enough to be a real one, about a method and its results."


def extra_json(url: str, title: str) -> object:
    """A paper's `extra`, read by the database's own JSON functions (they fail on bad JSON)."""
    if url.startswith("postgresql"):
        sql = f"SELECT extra::json ->> 'score', extra FROM papers WHERE title = '{title}'"
    else:
        sql = f"SELECT json_extract(extra, '$.score'), extra FROM papers WHERE title = '{title}'"
    [(score, extra)] = fetch(url, sql)
    return score, json.loads(str(extra))


# F18: lone surrogates, one rule with NUL ---------------------------------------------------


def test_a_lone_surrogate_is_stored_as_the_replacement_character_on_both_backends(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    # Written as JSON escapes, as the input has them: "\ud800" alone, "\udfff" alone.
    line = '{"title": "Line \\ud800 title", "abstract": "%s", "note\\udfff": "x\\ud800"}'
    (folder / "s.jsonl").write_text(line % ABSTRACT + "\n", "utf-8")
    array = '[{"title": "First fine", "abstract": "%s"}, {"title": "Array \\udc80 title", '
    array += '"abstract": "%s", "pair": "\\ud83d\\ude00", "escaped": "\\\\ud800"}]'
    (folder / "a.json").write_text(array % (ABSTRACT, ABSTRACT), "utf-8")
    report = load(db_url, folder)
    assert report.rejects == 0 and report.papers_inserted == 3
    rows = fetch(db_url, "SELECT title, title_raw, extra FROM papers ORDER BY title")
    assert [r[0] for r in rows] == ["Array \ufffd title", "First fine", "Line \ufffd title"]
    assert rows[2][1] == "Line \ufffd title"
    assert json.loads(str(rows[2][2])) == {"note\ufffd": "x\ufffd"}
    # A real pair stays the character; a backslash before `ud800` is text, kept as written.
    assert json.loads(str(rows[0][2])) == {"pair": "\U0001f600", "escaped": "\\ud800"}


def test_the_shape_sniffer_reads_past_a_lone_surrogate() -> None:
    head = b'[{"title": "T \\udfff", "abstract": "A", "paperId": "1", "externalIds": {}}]'
    assert sniff_json(head).top == "array"


def test_lone_surrogate_escapes_are_replaced_whatever_the_chunks() -> None:
    text = '["a\\ud800", "\\\\ud800", "\\ud83d\\ude00", "\\\\\\udc00", "\\"\\udbff"]' * 50
    expected = ["a\ufffd", "\\ud800", "\U0001f600", "\\\ufffd", '"\ufffd'] * 50
    for size in (1, 2, 5, 7, 11, 13, 64, 65536):
        stream = json_io.Utf8Json(io.StringIO("[" + text.replace("][", "],[") + "]"))
        data = b"".join(iter(lambda: stream.read(size), b""))  # noqa: B023
        assert [v for part in json.loads(data) for v in part] == expected, size


# F12 and F13: numbers ------------------------------------------------------------------------


def test_a_json_lines_integer_too_long_for_python_is_a_reject(db_url: str, tmp_path: Path) -> None:
    source = tmp_path / "big.jsonl"
    lines = [
        json.dumps({"title": "Fine", "abstract": ABSTRACT}),
        json.dumps({"title": "Huge", "abstract": ABSTRACT, "n": 1})[:-2] + "9" * 5000 + "}",
    ]
    source.write_text("\n".join(lines) + "\n", "utf-8")
    report = load(db_url, source)
    assert report.papers_inserted == 1 and report.rejects == 1
    [(position, reason)] = fetch(db_url, "SELECT position, reason FROM rejects")
    assert position == 2 and "more than 4,300 digits" in str(reason)


def test_numbers_json_cannot_hold_are_stored_in_extra_as_strings(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    lines = [
        '{"title": "Overflow", "abstract": "%s", "score": 1e999999}',
        '{"title": "Minus", "abstract": "%s", "score": -Infinity, "n": NaN}',
        '{"title": "Finite", "abstract": "%s", "score": 0.5}',
    ]
    (folder / "n.jsonl").write_text("\n".join(x % ABSTRACT for x in lines) + "\n", "utf-8")
    report = load(db_url, folder)
    assert report.papers_inserted == 3 and report.rejects == 0
    assert extra_json(db_url, "Overflow") == ("1e999999", {"score": "1e999999"})
    assert extra_json(db_url, "Minus") == ("-Infinity", {"score": "-Infinity", "n": "NaN"})
    assert extra_json(db_url, "Finite")[1] == {"score": 0.5}
    # Whatever reader made a non-finite float, `extra` is written as valid JSON.
    assert json_io.dumps({"a": [float("-inf"), float("nan")]}) == '{"a": ["-Infinity", "NaN"]}'


# F7: a file name that is not UTF-8 -----------------------------------------------------------


def test_a_file_name_that_is_not_utf8_fails_alone_named_with_its_bytes_escaped(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    good = json.dumps([{"title": "Good", "abstract": ABSTRACT}])
    (folder / "good.json").write_text(good, "utf-8")
    bad = os.fsdecode(os.fsencode(folder) + b"/bad\xff\xfename.json")
    Path(bad).write_text(json.dumps([{"title": "Bad", "abstract": ABSTRACT}]), "utf-8")
    for _ in range(2):  # the same on every run: it never reaches the database
        report = load(db_url, folder)
        [failed] = [s for s in report.sources if s.status == "failed"]
        assert failed.path.endswith("/bad\\xff\\xfename.json")
        assert "not valid UTF-8" in str(failed.message)
    assert fetch(db_url, "SELECT title FROM papers") == [("Good",)]
    [(path,)] = fetch(db_url, "SELECT path FROM sources")
    assert str(path).endswith("good.json")


# F8, F9: arguments that are not UTF-8 ----------------------------------------------------------


@pytest.mark.slow
def test_arguments_that_are_not_utf8_are_one_line_errors(sqlite_url: str, tmp_path: Path) -> None:
    source = tmp_path / "one.json"
    source.write_text(json.dumps([{"title": "One", "abstract": ABSTRACT}]), "utf-8")
    load(sqlite_url, source)
    query = etl("query", b"SELECT '\xff'", "--db", sqlite_url, cwd=tmp_path)
    assert query.returncode == 2, query.stderr
    assert "the SQL statement is not valid UTF-8 text: SELECT '\\xff'" in query.stderr
    search = etl("search", "x", "--db", b"sqlite:///base/\xff.db", cwd=tmp_path)
    assert search.returncode == 1, search.stderr
    assert search.stderr.strip() == (
        "Error: the database URL is not valid UTF-8: sqlite:///base/\\xff.db"
    )
    words = etl("search", b"x\xff", "--db", sqlite_url, cwd=tmp_path)
    assert words.returncode == 2 and "Traceback" not in words.stderr


# F14: BibTeX joins and macros ------------------------------------------------------------------


def test_bibtex_string_macros_and_joins_are_resolved(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(
        '@string{procneurips = "Advances in Neural Information Processing Systems"}\n'
        '@string{part = "Two " # {halves}}\n'
        "@inproceedings{a, title = part # { of a } # part, author = {Ada Lovelace and "
        'Alan Turing}, booktitle = procneurips # " 2024", year = 2024, month = jan}\n',
        "utf-8",
    )
    [record] = list(extract.read_records(extract.identify(path)))
    assert isinstance(record, RawRecord)
    assert record.title == "Two halves of a Two halves"
    assert record.authors == ("Ada Lovelace", "Alan Turing")
    assert record.venue == "NeurIPS" and record.year == 2024
    assert json.loads(record.extra or "{}")["month"] == "jan"  # no such macro: as written


def test_a_doubling_string_chain_is_rejected_within_bounded_memory(tmp_path: Path) -> None:
    lines = ['@string{s0 = "abcdefgh"}']
    lines += [f"@string{{s{i} = s{i - 1} # s{i - 1}}}" for i in range(1, 40)]
    lines.append(f'@article{{bomb, title = s39, abstract = "{ABSTRACT}"}}')
    lines.append(f'@article{{after, title = "After", abstract = "{ABSTRACT}"}}')
    path = tmp_path / "bomb.bib"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    tracemalloc.start()
    try:
        found = list(extract.read_records(extract.identify(path)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    bomb, after = found
    assert isinstance(bomb, Reject) and "field 'title'" in bomb.reason
    assert isinstance(after, RawRecord) and after.title == "After"
    assert peak < 200 * 2**20  # s39 written out would be 4 TiB


# F16: SQLite statement timeout inside a sort ---------------------------------------------------


def test_a_sqlite_query_stuck_in_a_sort_stops_at_its_timeout(
    sqlite_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "one.json"
    source.write_text(json.dumps([{"title": "One", "abstract": ABSTRACT}]), "utf-8")
    load(sqlite_url, source)
    # The progress handler is not called while SQLite sorts large values.
    statement = (
        "WITH RECURSIVE c(i, x) AS (SELECT 1, zeroblob(20000000) UNION ALL "
        "SELECT i + 1, x FROM c WHERE i < 60) SELECT i FROM c ORDER BY x || randomblob(8) LIMIT 1"
    )
    engine = read.open_reader(sqlite_url)
    started = time.monotonic()
    try:
        with pytest.raises(read.QueryError, match="time limit"):
            read.run_query(engine, statement, timeout=0.5, bound=read.Bound(10, 0))
    finally:
        engine.dispose()
    assert time.monotonic() - started < 5  # 10 s and more without the watchdog

"""Hostile input on the load path: bounded by the stated limits, reported, never fatal.

Each test is a case of issue 25 (deep JSON, NUL bytes, paths that cannot be read, signals,
taxonomy terms), on both backends where a database is involved.
"""

from __future__ import annotations

import codecs
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from decimal import Decimal
from pathlib import Path

import pytest

from tests.helpers import (
    ETL,
    etl,
    fetch,
    fetch_one,
    load,
    measured_run,
    rejects,
    superuser_flag,
)

GOOD = [{"title": "A good paper", "abstract": "An abstract that loads whatever else fails."}]
DEEP = 100_000


# 1. Deep JSON: read within the limits, the record rejected, the run goes on --------------


@pytest.mark.slow
def test_json_nested_100000_deep_costs_megabytes_and_is_a_reject(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "arrays.json").write_text("[" * DEEP + "]" * DEEP, "utf-8")  # 200 KB
    (folder / "objects.json").write_text('{"a":' * DEEP + "1" + "}" * DEEP, "utf-8")
    (folder / "deep.jsonl").write_text(
        '{"title": "x", "a": ' + "[" * DEEP + "]" * DEEP + "}\n",
        "utf-8",
    )
    # what the deep files cost, apart from the tagger's model (about 25 MB, loaded by the first
    # record that gets topics, whatever the input): the good file's run is the next one
    status, peak_kb, output = measured_run(
        "run", str(folder), "--db", db_url, "-q", "--workers", "1", cwd=tmp_path
    )
    assert status == 3, output
    assert peak_kb < 100 * 1024, f"peak {peak_kb} KB"
    deep = "nested deeper than 100 levels (--max-depth)"
    assert rejects(db_url) == [
        ("arrays.json", 1, deep),
        ("deep.jsonl", 1, deep),
        ("objects.json", 1, deep),
    ]
    assert fetch_one(db_url, "SELECT status FROM runs") == "partial"
    (folder / "good.json").write_text(json.dumps(GOOD), "utf-8")
    again = etl("run", str(folder), "--db", db_url, "-q", "--workers", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr  # the deep files are unchanged
    assert fetch(db_url, "SELECT title FROM papers") == [("A good paper",)]


@pytest.mark.slow
@pytest.mark.migrated
def test_the_limits_are_flags_and_changing_them_reads_the_files_again(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    nested = {"title": "Nested", "abstract": "Fine text.", "x": [[[["four deep"]]]]}
    (folder / "nested.jsonl").write_text(json.dumps(nested) + "\n", "utf-8")
    (folder / "wide.csv").write_text(
        "title,abstract\nWide,A short abstract.\nWider," + "w" * 300 + "\n", "utf-8"
    )
    (folder / "long.txt").write_text(
        "ICML 2025 papers\n\nA first abstract.\n\n" + "long " * 500 + "\n\nA last abstract.\n",
        "utf-8",
    )
    flags = ["--max-depth", "4", "--max-field-size", "200", "--max-record-size", "1K"]
    run = etl("run", str(folder), "--db", db_url, "-q", "--workers", "1", *flags, cwd=tmp_path)
    assert run.returncode == 3, run.stderr
    assert rejects(db_url) == [
        ("long.txt", 5, "line is over 1,024 characters (read 2,500; --max-record-size)"),
        ("nested.jsonl", 1, "nested deeper than 4 levels (--max-depth)"),
        ("wide.csv", 3, "field 'abstract' is 300 characters; the limit is 200 (--max-field-size)"),
    ]
    assert fetch_one(db_url, "SELECT count(*) FROM papers") == 3
    again = etl("run", str(folder), "--db", db_url, "-q", "--workers", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert fetch_one(db_url, "SELECT count(*) FROM papers") == 6


@pytest.mark.slow
@pytest.mark.migrated
def test_one_json_string_larger_than_a_record_fails_its_file_alone(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "huge.json").write_text('[{"title": "' + "z" * 3_000_000 + '"}]', "utf-8")
    (folder / "good.json").write_text(json.dumps(GOOD), "utf-8")
    run = etl(
        "run",
        str(folder),
        "--db",
        db_url,
        "-q",
        "--workers",
        "1",
        "--max-record-size",
        "1M",
        cwd=tmp_path,
    )
    assert run.returncode == 3, run.stderr
    assert "huge.json: one JSON value runs past 1,048,576 bytes" in run.stdout
    assert fetch(db_url, "SELECT title FROM papers") == [("A good paper",)]


# 2. NUL: one rule on both backends ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.migrated
def test_nul_is_stored_as_the_replacement_character_on_both_backends(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    record = {
        "title": "Null\u0000Title",
        "abstract": "An abstract with a NUL \u0000 inside it.",
        "authors": ["Ada\u0000 Lovelace"],
        "code": "https://github.com/o\u0000/r",
        "note\u0000": "kept\u0000",
    }
    (folder / "nul.json").write_text(json.dumps([record]), "utf-8")
    (folder / "nul.jsonl").write_text(
        json.dumps({**record, "title": "Line\u0000Title"}) + "\n", "utf-8"
    )
    # UTF-16 text may hold U+0000 itself, not only as a JSON escape.
    csv_text = 'title,abstract\n"Csv\x00Title","A CSV abstract \x00 with a NUL."\n'
    (folder / "nul.csv").write_bytes(codecs.BOM_UTF16_LE + csv_text.encode("utf-16-le"))
    run = etl("run", str(folder), "--db", db_url, "-q", "--workers", "1", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = fetch(db_url, "SELECT title, title_raw, abstract, extra FROM papers ORDER BY title")
    assert [r[0] for r in rows] == ["Csv\ufffdTitle", "Line\ufffdTitle", "Null\ufffdTitle"]
    assert all("\x00" not in str(value) for row in rows for value in row)
    assert rows[2][1] == "Null\ufffdTitle" and "NUL \ufffd inside" in str(rows[2][2])
    assert json.loads(str(rows[2][3])) == {"note\ufffd": "kept\ufffd"}
    assert fetch(db_url, "SELECT DISTINCT name FROM authors") == [("Ada\ufffd Lovelace",)]


@pytest.mark.migrated
def test_a_rejected_record_holding_nul_is_stored_in_rejects(db_url: str, tmp_path: Path) -> None:
    source = tmp_path / "broken.jsonl"
    text = '{"title": "Fine", "abstract": "Loads."}\n{"title": "broken\x00 \n'
    source.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    report = load(db_url, source)
    assert report.rejects == 1 and report.papers_inserted == 1
    assert fetch_one(db_url, "SELECT raw FROM rejects") == '{"title": "broken\ufffd '


# 5. Paths that cannot be read: that source's failure, named ----------------------------------


@pytest.mark.slow
@pytest.mark.migrated
def test_link_loops_pipes_and_dangling_links_are_named_and_the_rest_loads(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(GOOD), "utf-8")
    (folder / "x.json").symlink_to("y.json")
    (folder / "y.json").symlink_to("x.json")
    (folder / "gone.json").symlink_to("nowhere.json")
    os.mkfifo(folder / "pipe.json")
    run = etl("run", str(folder), "--db", db_url, "-q", "--workers", "1", cwd=tmp_path)
    assert run.returncode == 3, run.stdout + run.stderr
    assert f"failed   {folder}/x.json: a symbolic link loop: cannot be followed" in run.stdout
    assert f"failed   {folder}/y.json: a symbolic link loop" in run.stdout
    assert f"ignored  {folder}/pipe.json: not a regular file (a named pipe)" in run.stdout
    assert f"ignored  {folder}/gone.json: a link to no file" in run.stdout
    assert fetch(db_url, "SELECT title FROM papers") == [("A good paper",)]
    named = etl(
        "run", str(folder / "x.json"), str(folder / "pipe.json"), str(folder / "good.json"),
        "--db", db_url, "-q", "--workers", "1", cwd=tmp_path,
    )  # fmt: skip
    assert named.returncode == 3, named.stdout + named.stderr
    assert f"failed   {folder}/x.json: a symbolic link loop" in named.stdout
    assert f"failed   {folder}/pipe.json: not a regular file (a named pipe)" in named.stdout


def without_permission_override(command: list[str]) -> list[str]:
    """The command unable to bypass file permissions: as root, without the capabilities that
    let root read anything (root owns the interpreter, so it still starts)."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true runs as root but setpriv (util-linux) is missing")
        pytest.skip("running as root without setpriv: permissions cannot be denied")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", *command]


@pytest.mark.slow
@pytest.mark.migrated
def test_unreadable_files_folders_and_links_fail_alone(db_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "lists"
    (folder / "closed").mkdir(parents=True)
    (folder / "good.json").write_text(json.dumps(GOOD), "utf-8")
    (folder / "denied.json").write_text(json.dumps(GOOD), "utf-8")
    (folder / "closed" / "inside.json").write_text(json.dumps(GOOD), "utf-8")
    (folder / "through.json").symlink_to(folder / "closed" / "inside.json")
    (folder / "denied.json").chmod(0)
    (folder / "closed").chmod(0)
    try:
        run = subprocess.run(
            without_permission_override(
                [*ETL, "run", str(folder), "--db", db_url, "-q", "--workers", "1"]
            ),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        (folder / "closed").chmod(0o755)
    assert run.returncode == 3, run.stdout + run.stderr
    assert f"failed   {folder}/closed: cannot read this folder: Permission denied" in run.stdout
    assert f"failed   {folder}/denied.json: cannot read: Permission denied" in run.stdout
    assert f"failed   {folder}/through.json: cannot be read: Permission denied" in run.stdout
    assert fetch(db_url, "SELECT title FROM papers") == [("A good paper",)]


# 6. SIGTERM: like Ctrl-C, at once ------------------------------------------------------------

# `etl run` whose workers never finish a batch (they sleep): SIGTERM must not wait for them.
STUCK_WORKERS = """
import os, sys, time
import etl.parallel as parallel

transform_batch = parallel.transform_batch

def stuck(batch, taxonomy):
    if taxonomy is None:  # in a worker (the run itself passes its taxonomy)
        open(os.environ["STUCK_MARK"], "a").close()
        time.sleep(600)
    return transform_batch(batch, taxonomy)

parallel.transform_batch = stuck  # the worker imports this script too, and so runs this

if __name__ == "__main__":
    from etl.cli import main
    sys.exit(main())
"""


@pytest.mark.slow
@pytest.mark.migrated
def test_sigterm_stops_a_run_whose_workers_are_busy_at_once(db_url: str, tmp_path: Path) -> None:
    from tests.helpers import write_corpus

    folder = tmp_path / "in"
    write_corpus(folder, files=1, per_file=3000)
    script = tmp_path / "stuck.py"
    script.write_text(STUCK_WORKERS, "utf-8")
    mark = tmp_path / "stuck"
    process = subprocess.Popen(
        [sys.executable, str(script), "run", str(folder), "--db", db_url, "-q", "--workers", "2"],
        cwd=tmp_path,
        env={**os.environ, "STUCK_MARK": str(mark)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not mark.exists():  # a worker holds a batch it will never finish
            assert process.poll() is None, process.communicate()
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)  # the workers sleep for 600 s
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert fetch_one(db_url, "SELECT status FROM runs") == "interrupted"
    assert fetch_one(db_url, "SELECT count(*) FROM papers") == 0


# 8. Taxonomy and venues files: every term checked ------------------------------------------


TAXONOMY = """
[[topic]]
slug = "area"
name = "Area"

[[topic]]
slug = "regex"
name = "Regular expressions"
parent = "area"
terms = [
  "finite automata",
  "(a+)+$",
]
"""


@pytest.mark.parametrize(
    ("term", "reason"),
    [
        ("(a+)+$", "'(a+)+$' is the stop word 'a' once punctuation is ignored"),
        ("$$$", "'$$$' holds no letter or digit"),
        ("of the", "'of the' is only stop words"),
        ("x", "'x' is shorter than 2 characters"),
        ("word " * 30, "is longer than 100 characters"),
    ],
)
@pytest.mark.slow
def test_a_taxonomy_term_that_matches_nothing_useful_is_refused_with_its_line(
    tmp_path: Path, term: str, reason: str
) -> None:
    taxonomy = tmp_path / "taxonomy.toml"
    taxonomy.write_text(TAXONOMY.replace("(a+)+$", term.replace("\\", "\\\\")), "utf-8")
    run = etl("run", "--taxonomy", str(taxonomy), "--db", str(tmp_path / "p.db"), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    line = " ".join(run.stderr.split())
    assert f"{taxonomy}:12: topic 'regex': term '" in line and reason in line, line
    assert (
        not (tmp_path / "p.db").exists()
        or fetch_one(f"sqlite:///{tmp_path / 'p.db'}", "SELECT count(*) FROM papers") == 0
    )


VENUES = """
[[venue]]
name = "My Workshop"
spellings = [
  "myws",
  "the",
]
"""


def test_a_venue_spelling_that_is_a_stop_word_is_refused_with_its_line(tmp_path: Path) -> None:
    venues = tmp_path / "venues.toml"
    venues.write_text(VENUES, "utf-8")
    run = etl("run", "--venues", str(venues), "--db", str(tmp_path / "p.db"), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{venues}:6: venue 'My Workshop': spelling 'the' is only stop words" in run.stderr


def test_the_packaged_taxonomy_and_venues_pass_the_checks() -> None:
    code = textwrap.dedent(
        """
        from etl.transform import load_taxonomy
        from etl.extract import load_venues
        print(len(load_taxonomy().topics) > 50, len(load_venues().names) > 50)
        """
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.split() == ["True", "True"], found.stderr


# Smaller items: table output and the README's first query ---------------------------------


def test_table_output_escapes_zero_width_and_other_invisible_characters(
    seeded_url: str, tmp_path: Path
) -> None:
    hidden = ["a\u200bb", "c\u200dd", "e\u2060f", "g\ufeffh", "i\u00adj", "k\u202el"]
    literal = " UNION ALL ".join(f"SELECT {i} AS n, '{v}' AS v" for i, v in enumerate(hidden))
    flags = ["--db", seeded_url, *superuser_flag(seeded_url)]
    table = etl("query", f"SELECT v FROM ({literal}) AS t ORDER BY n", *flags, cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    for shown in ["a\\u200bb", "c\\u200dd", "e\\u2060f", "g\\ufeffh", "i\\xadj", "k\\u202el"]:
        assert shown in table.stdout
    assert not any(c in table.stdout for c in "\u200b\u200d\u2060\ufeff\u00ad\u202e")


def test_narrow_table_output_never_folds_an_id_or_a_status(seeded_url: str, tmp_path: Path) -> None:
    sql = (
        "SELECT p.id, r.status, r.started_at, r.finished_at, r.options, r.papers_inserted, "
        "p.abstract FROM papers p, runs r LIMIT 3"
    )
    result = subprocess.run(
        [*ETL, "query", sql, "--db", seeded_url, *superuser_flag(seeded_url)],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    ids = fetch(seeded_url, "SELECT id FROM papers")
    shown = [str(i) for (i,) in ids if str(i) in result.stdout]
    assert len(shown) == 3 and result.stdout.count("succeeded") == 3


@pytest.mark.slow
def test_the_readmes_first_query_names_every_paper_on_the_sample(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    sql = readme.split('etl query "', 1)[1].split('"', 1)[0]
    assert etl("run", "-q", cwd=tmp_path).returncode == 0
    result = etl("query", sql, "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) >= 10 and all(str(next(iter(row.values())) or "").strip() for row in rows)


# 7. grant-readonly: a reader cannot cut off the other readers ---------------------------------


@pytest.mark.postgres
def test_a_read_only_session_cannot_cancel_or_end_another_of_its_role(
    postgres_url: str, tmp_path: Path
) -> None:
    import uuid

    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.pool import NullPool

    from tests.helpers import as_role, roles

    role = f"etl_signal_{uuid.uuid4().hex[:8]}"
    with roles(postgres_url, role):
        granted = etl(
            "grant-readonly", role, "--password", "pw", "--db", postgres_url, cwd=tmp_path
        )
        assert granted.returncode == 0, granted.stderr
        reader = create_engine(as_role(postgres_url, role), poolclass=NullPool)
        with reader.connect() as first, reader.connect() as second:
            victim = first.scalar(text("SELECT pg_backend_pid()"))
            for function in ("pg_cancel_backend", "pg_terminate_backend"):
                with pytest.raises(DBAPIError, match="permission denied"):
                    second.execute(text(f"SELECT {function}(:pid)"), {"pid": victim})
                second.rollback()
            assert first.scalar(text("SELECT 1")) == 1  # still connected
        reader.dispose()


# 4. etl query: a bound on what it reads and prints -------------------------------------------


@pytest.mark.slow
def test_query_output_is_cut_at_its_bound_with_a_message(seeded_url: str, tmp_path: Path) -> None:
    many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) SELECT i FROM n"
    flags = ["--db", seeded_url, *superuser_flag(seeded_url), "--format", "csv"]
    cut = etl("query", many, *flags, cwd=tmp_path)
    assert cut.returncode == 0, cut.stderr
    assert len(cut.stdout.splitlines()) == 1 + 10_000
    assert "output cut at 10,000 rows (--max-rows; 0 for no bound)" in cut.stderr
    everything = etl("query", many, *flags, "--max-rows", "0", cwd=tmp_path)
    assert len(everything.stdout.splitlines()) == 1 + 20_000 and everything.stderr == ""
    wide = (
        "SELECT repeat('x', 1000) AS v FROM papers"
        if "postgresql" in seeded_url
        else ("SELECT printf('%1000s', 'x') AS v FROM papers")
    )
    by_bytes = etl("query", wide, *flags, "--max-bytes", "10K", cwd=tmp_path)
    assert len(by_bytes.stdout.splitlines()) == 1 + 10
    assert "output cut after 10 rows: the next would pass 10,240 bytes" in by_bytes.stderr


@pytest.mark.slow
def test_a_huge_value_is_never_held_by_the_client(seeded_url: str, tmp_path: Path) -> None:
    """A 500 MB value is made by the server but never sent (PostgreSQL) or never made
    (SQLite): the client's peak stays near what it needs to start."""
    postgres = "postgresql" in seeded_url
    cut = "output cut after 0 rows"
    refused = "a value of the result is over 67,108,864 bytes"
    cases = (
        [
            ("SELECT repeat('x', 500000000) AS v", 0, cut),
            ("SELECT 1 AS n, repeat('x', 500000000) AS v", 0, cut),
        ]
        if postgres
        else [
            ("SELECT randomblob(900000000) AS v", 1, refused),
            ("SELECT zeroblob(500000000) AS v", 1, refused),
            ("SELECT printf('%.*c', 500000000, 'x') AS v", 0, ""),  # SQLite gives ''
        ]
    )
    flags = ["--db", seeded_url, *superuser_flag(seeded_url), "--format", "csv"]
    for sql, expected_status, expected_note in cases:
        status, peak_kb, output = measured_run("query", sql, *flags, cwd=tmp_path)
        assert peak_kb < 200 * 1024, f"{sql}: peak {peak_kb} KB"
        assert status == expected_status and expected_note in output, output
        assert "xxxx" not in output


def test_a_bounded_query_keeps_types_names_and_order(seeded_url: str) -> None:
    """On PostgreSQL the bound wraps the statement: the result must be the statement's own."""
    from etl import read

    postgres = "postgresql" in seeded_url
    if postgres:
        sql = (
            'SELECT n, \'x\' AS n, 2.5::numeric AS "odd ""name", \'{"k": [1]}\'::jsonb AS j, '
            "'\\x0102'::bytea AS b, ARRAY[n, 2] AS a, NULL::text AS empty "
            "FROM generate_series(3, 1, -1) AS n ORDER BY 1 DESC -- a trailing comment"
        )
        first = (3, "x", Decimal("2.5"), {"k": [1]}, b"\x01\x02", [3, 2], None)
        series = "SELECT i, repeat('y', i * 100) AS v FROM generate_series(1, 5) AS i ORDER BY i"
    else:
        sql = (
            'WITH s(n) AS (VALUES (3), (2), (1)) SELECT n, \'x\' AS n, 2.5 AS "odd ""name", '
            "json_object('k', json_array(1)) AS j, x'0102' AS b, json_array(n, 2) AS a, "
            "NULL AS empty FROM s ORDER BY 1 DESC -- a trailing comment"
        )
        first = (3, "x", 2.5, '{"k":[1]}', b"\x01\x02", "[3,2]", None)
        series = (
            "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 5) "
            "SELECT i, printf('%.*c', i * 100, 'y') AS v FROM s ORDER BY i"
        )
    engine = read.open_reader(seeded_url)
    try:
        rows = read.run_query(engine, sql, allow_superuser=True)
        big = read.run_query(engine, series, allow_superuser=True, bound=read.Bound(bytes=650))
    finally:
        engine.dispose()
    assert rows.columns == ("n", "n", 'odd "name', "j", "b", "a", "empty")
    assert rows.rows[0] == first
    assert [r[0] for r in rows.rows] == [3, 2, 1] and rows.cut is None
    # 100, 200 and 300 characters and a number fit in 650 bytes; the fourth row would not.
    assert [r[0] for r in big.rows] == [1, 2, 3] and big.rows[2][1] == "y" * 300
    assert big.cut == (
        "output cut after 3 rows: the next would pass 650 bytes (--max-bytes; 0 for no bound)"
    )

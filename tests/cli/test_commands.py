"""The `etl` command end to end: real subprocesses and click's runner on real databases."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from etl.cli import main
from tests.helpers import etl


def test_etl_run_in_an_empty_folder_loads_the_packaged_seeds(tmp_path: Path) -> None:
    first = etl("run", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "38 inserted" in first.stdout and "2 loaded" in first.stdout
    with sqlite3.connect(tmp_path / "papers.db") as connection:
        assert connection.execute(
            "SELECT count(*), min(venue), min(year) FROM papers"
        ).fetchone() == (38, "ICML", 2025)
        assert connection.execute(
            "SELECT count(DISTINCT paper_id) FROM papers_with_code"
        ).fetchone() == (10,)
    second = etl("run", cwd=tmp_path)
    assert second.returncode == 0
    assert "0 inserted, 0 updated" in second.stdout and "2 unchanged" in second.stdout
    assert "nothing changed" in second.stdout


def test_search_query_views_and_stats_read_the_database(tmp_path: Path) -> None:
    assert etl("run", "-q", cwd=tmp_path).returncode == 0
    found = etl("search", "KV cache", "--format", "json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)
    assert results and "**" in results[0]["snippet"]
    table = etl("query", "SELECT count(*) AS n FROM papers", "--format", "csv", cwd=tmp_path)
    assert table.stdout.splitlines() == ["n", "38"]
    views = etl("views", "--format", "json", cwd=tmp_path)
    assert {v["view"] for v in json.loads(views.stdout)} >= {"papers_with_code", "venue_summary"}
    stats = etl("stats", "--format", "json", cwd=tmp_path)
    payload = json.loads(stats.stdout)
    assert {"table": "papers", "rows": 38} in payload["tables"]


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM papers",
        "INSERT INTO topics (slug, name) VALUES ('x', 'x')",
        "CREATE TABLE t (x int)",
        "DROP VIEW papers_with_code",
    ],
)
@pytest.mark.slow
def test_query_refuses_writes_and_ddl(tmp_path: Path, sql: str) -> None:
    assert etl("run", "-q", cwd=tmp_path).returncode == 0
    result = etl("query", sql, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("Error:") and "Traceback" not in result.stderr
    with sqlite3.connect(tmp_path / "papers.db") as connection:
        assert connection.execute("SELECT count(*) FROM papers").fetchone() == (38,)


def test_user_mistakes_are_errors_not_tracebacks(tmp_path: Path) -> None:
    missing = etl("run", "nowhere.txt", cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.strip() == "Error: nowhere.txt: no such file or folder"
    no_db = etl("search", "cache", cwd=tmp_path)
    assert no_db.returncode == 1 and "run `etl run` first" in no_db.stderr
    bad_url = etl("stats", "--db", "mysql://u:secret@h/db", cwd=tmp_path)
    assert bad_url.returncode == 1 and "unsupported database" in bad_url.stderr
    assert "secret" not in bad_url.stderr


def test_rejects_give_exit_status_3_and_a_summary_line(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text(
        '{"title": "Fine", "abstract": "Good."}\n{bad json\n', "utf-8"
    )
    result = etl("run", "papers.jsonl", cwd=tmp_path)
    assert result.returncode == 3
    assert "1 of 2 records rejected" in result.stdout and "rejects  1" in result.stdout


def test_db_option_and_environment_choose_the_database(tmp_path: Path) -> None:
    runner = CliRunner()
    target = tmp_path / "elsewhere.db"
    result = runner.invoke(main, ["run", "-q", "--workers", "1", "--db", f"sqlite:///{target}"])
    assert result.exit_code == 0, result.output
    assert target.exists()
    env_target = tmp_path / "from_env.db"
    result = runner.invoke(
        main, ["stats", "--format", "json"], env={"ETL_DATABASE_URL": f"sqlite:///{target}"}
    )
    assert result.exit_code == 0 and json.loads(result.output)["database"].endswith("elsewhere.db")
    assert not env_target.exists()


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for command in ["run", "search", "query", "views", "stats", "eval"]:
        result = runner.invoke(main, [command, "--help"])
        assert result.exit_code == 0
        assert "Usage:" in result.output and len(result.output.splitlines()) > 4


@pytest.mark.postgres
@pytest.mark.slow
def test_run_and_search_on_postgres(postgres_url: str, tmp_path: Path) -> None:
    assert etl("run", "-q", "--db", postgres_url, cwd=tmp_path).returncode == 0
    found = etl("search", "KV cache", "--db", postgres_url, "--format", "json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert (
        "CommVQ"
        in etl(
            "query",
            f"SELECT abstract FROM papers WHERE id = '{json.loads(found.stdout)[0]['paper_id']}'",
            "--db",
            postgres_url,
            "--allow-superuser",  # the test server's only role is a superuser
            "--format",
            "csv",
            cwd=tmp_path,
        ).stdout
    )
    refused = etl(
        "query", "DELETE FROM papers", "--db", postgres_url, "--allow-superuser", cwd=tmp_path
    )
    assert refused.returncode == 1 and "only reads" in refused.stderr


def test_a_skipped_link_is_listed_with_its_name_printed_as_text(tmp_path: Path) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"title": "A paper"}\n', "utf-8")
    (folder / "[red]leak.txt").symlink_to(tmp_path)
    result = CliRunner().invoke(
        main, ["run", "-q", str(folder), "--db", f"sqlite:///{tmp_path / 'p.db'}"]
    )
    assert result.exit_code == 0, result.output
    assert "[red]leak.txt: a link to a folder: not followed" in result.output


def test_the_run_summary_says_what_was_removed_and_why(tmp_path: Path) -> None:
    def write(path: Path, *titles: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        abstract = "We study how sparse graphs grow when each new node links to a few others."
        records = [{"title": t, "abstract": f"{t}: {abstract}"} for t in titles]
        path.write_text(json.dumps(records), "utf-8")
        return path

    def run(*args: str) -> str:
        db = f"sqlite:///{tmp_path / 'p.db'}"
        result = CliRunner().invoke(main, ["run", "--workers", "1", "--db", db, *args])
        assert result.exit_code == 0, result.output
        return result.output

    old = write(tmp_path / "old" / "list.json", "One", "Two")
    gone = write(tmp_path / "lists" / "gone.json", "Three")
    run(str(old), str(gone))
    old.unlink()
    gone.unlink()
    new = write(tmp_path / "new" / "list.json", "One")
    assert f"moved    {new}: moved from {old}; 1 paper it no longer lists removed" in run(str(new))
    pruned = run("--prune", str(tmp_path / "lists"), str(new))
    assert f"pruned   {gone}: the file is gone; 1 paper seen only there removed" in pruned

"""What got in a new user's and a new developer's way in their first hour: each mended and held
here (`etl run --help` naming every shape, `etl views` showing whole descriptions, no lock file
left beside a SQLite database, the docs saying how the tests reach PostgreSQL and how to read
as a BI user, `etl report` under a virtual-memory limit)."""

from __future__ import annotations

import fnmatch
import os
import re
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine

from etl.cli import main
from etl.extract import FORMATS
from etl.load.database import view_definitions
from etl.load.locks import run_lock
from tests.helpers import REPO, SEEDS, load

MEMORY_LIMIT = 4_000_000 * 1024  # `ulimit -v 4000000`, as on a shared cluster


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_run_help_lists_every_input_shape_in_its_description() -> None:
    shown = CliRunner().invoke(main, ["run", "--help"], terminal_width=200)
    assert shown.exit_code == 0
    description = one_line(shown.output.split("Options:")[0])
    for name, what in FORMATS.items():
        assert f"{name} {one_line(what)}" in description, name


def test_views_shows_a_views_whole_description(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    load(url, SEEDS)
    shown = CliRunner().invoke(main, ["views", "--db", url, "--format", "csv"])
    assert shown.exit_code == 0, shown.output
    (line,) = [line for line in shown.output.splitlines() if line.startswith("method_index,")]
    assert "introduce or mention it, and the methods a source lists for its papers" in line
    assert line.rstrip('"').endswith("(the Papers with Code archive).")
    described = {v.name: v.description for v in view_definitions("sqlite")}
    assert described["task_index"].endswith("are counted apart.")


def test_a_run_leaves_no_lock_file_beside_the_database(tmp_path: Path) -> None:
    database = tmp_path / "papers.db"
    done = subprocess.run(
        [sys.executable, "-m", "etl", "run", "-q", str(SEEDS), "--db", str(database)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert database.exists()
    assert not (tmp_path / "papers.db.lock").exists()


def test_a_run_waiting_for_the_lock_runs_once_the_holder_removed_its_file(
    tmp_path: Path,
) -> None:
    database = tmp_path / "papers.db"
    url = f"sqlite:///{database}"
    lock_file = tmp_path / "papers.db.lock"
    engine = create_engine(url)
    command = [sys.executable, "-m", "etl", "run", "-q", str(SEEDS), "--db", url]
    try:
        with run_lock(engine):
            busy = subprocess.run(command, capture_output=True, text=True)
            assert busy.returncode == 1 and f"pid {os.getpid()}" in busy.stderr
            waiting = subprocess.Popen([*command, "--wait"], stderr=subprocess.PIPE, text=True)
            _wait_until_blocked_on(lock_file, waiting.pid)
        _, errors = waiting.communicate(timeout=300)  # it had opened the removed file
        assert waiting.returncode == 0, errors
    finally:
        engine.dispose()
    assert not lock_file.exists()


def _wait_until_blocked_on(path: Path, pid: int) -> None:
    """Until a process waits for a flock on the file (Linux's /proc/locks lists waiters)."""
    inode = path.stat().st_ino
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text().splitlines():
            words = line.split()
            if "->" in words and str(pid) in words and any(w.endswith(f":{inode}") for w in words):
                return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} never waited for {path}")


def test_gitignore_covers_the_lock_files() -> None:
    patterns = [
        line.strip()
        for line in (REPO / ".gitignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert any(fnmatch.fnmatch("papers.db.lock", pattern) for pattern in patterns)


def test_the_development_docs_say_how_the_tests_reach_postgresql() -> None:
    page = (REPO / "docs" / "development.md").read_text("utf-8")
    assert "ETL_TEST_POSTGRES_URL" in page
    assert "postgresql+psycopg://root@127.0.0.1:5432/postgres" in page


def test_the_tour_reads_postgresql_as_the_read_only_role_it_makes() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    block = readme.split("### PostgreSQL", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    commands = [[w for w in c if not re.fullmatch(r"\w+=.*", w)] for c in commands]
    (grant,) = [c for c in commands if c[:2] == ["etl", "grant-readonly"]]
    (query,) = [c for c in commands if c[:2] == ["etl", "query"]]
    assert commands.index(grant) < commands.index(query)
    url = query[query.index("--db") + 1]
    assert url.split("://", 1)[1].startswith(f"{grant[2]}@")
    tour = readme.split("### Query", 1)[1].split("### Serve", 1)[0]
    assert "superuser" in tour and "#postgresql" in tour


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_the_report_under_a_virtual_memory_limit_ends_with_an_error_line(tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    database = tmp_path / "papers.db"
    load(f"sqlite:///{database}", SEEDS)
    done = subprocess.run(
        [sys.executable, "-m", "etl", "report", "--db", str(database), "-o", "r.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        preexec_fn=_limited,
    )
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: etl report cannot draw its charts")
    assert "ulimit -v 4000000" in one_line(done.stderr) and "unlimited" in done.stderr
    assert not (tmp_path / "r.html").exists()

"""Hostile and careless inputs on the read path and around it, on both backends.

Each test is one numbered case of issue 16: a read command that must not write, hang or leak,
and failures that must be named for what they are, as one `Error:` line and no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from etl.admin import grant_read_only
from etl.load.locks import LOADERS, NAMESPACE
from tests.helpers import (
    POSTGRES_ADMIN_URL,
    SEEDS,
    as_role,
    etl,
    fetch,
    fetch_one,
    fresh_database,
    load,
    require_postgres,
    roles,
    superuser_flag,
    write_corpus,
)

PG_ONLY = pytest.mark.postgres


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `etl` subprocesses see a wide terminal, so table cells are not folded."""
    monkeypatch.setenv("COLUMNS", "400")


def assert_one_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit 1, and stderr is exactly one `Error:` line holding each fragment."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def paper_count(url: str) -> int:
    return int(str(fetch_one(url, "SELECT count(*) FROM papers")))


def view_names(url: str) -> set[str]:
    engine = create_engine(url, poolclass=NullPool)
    try:
        from sqlalchemy import inspect

        with engine.connect() as connection:
            return set(inspect(connection).get_view_names())
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def seeded_postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL database holding the seeds, shared by the module's PostgreSQL-only tests."""
    with fresh_database("postgresql", tmp_path_factory.mktemp("pg"), migrated=True) as url:
        load(url, SEEDS)
        yield url


@pytest.fixture
def loaded_url(db_url: str) -> str:
    """A database per backend with the seeds, for a test that may damage it."""
    load(db_url, SEEDS)
    return db_url


# 1. `etl query`: one statement, only reading, read-only, with a timeout ---------------------


@pytest.mark.parametrize(
    ("sql", "refusal"),
    [
        ("COMMIT; DELETE FROM papers", "only reads"),
        ("END; DROP VIEW papers_with_code; SELECT 1", "only reads"),
        ("SELECT 1; DELETE FROM papers", "runs exactly one statement"),
        ("SELECT 1; COMMIT; DELETE FROM papers", "runs exactly one statement"),
        ("ROLLBACK; DELETE FROM papers; COMMIT", "only reads"),
        ("DELETE FROM papers", "only reads"),
        ("DROP VIEW papers_with_code", "only reads"),
        ("EXPLAIN ANALYZE DELETE FROM papers", "only reads"),
        ("/* hidden */ -- comment\n DELETE FROM papers", "only reads"),
        ("VACUUM", "only reads"),
    ],
)
@pytest.mark.slow
@pytest.mark.migrated
def test_query_runs_one_reading_statement_and_changes_nothing(
    loaded_url: str, tmp_path: Path, sql: str, refusal: str
) -> None:
    result = etl("query", sql, "--db", loaded_url, *superuser_flag(loaded_url), cwd=tmp_path)
    assert_one_error(result, f"`etl query` {refusal}")
    assert paper_count(loaded_url) == 38
    assert "papers_with_code" in view_names(loaded_url)


@PG_ONLY
@pytest.mark.migrated
def test_a_writing_with_clause_is_refused_by_the_read_only_transaction(
    postgres_url: str, tmp_path: Path
) -> None:
    load(postgres_url, SEEDS)
    sql = "WITH gone AS (DELETE FROM papers RETURNING id) SELECT count(*) FROM gone"
    result = etl("query", sql, "--db", postgres_url, "--allow-superuser", cwd=tmp_path)
    assert_one_error(result, "`etl query` only reads", "WITH clause that writes")
    assert paper_count(postgres_url) == 38


@PG_ONLY
@pytest.mark.parametrize(
    "sql",
    ["SELECT pg_read_file('/etc/hostname')", "SELECT * FROM pg_ls_dir('.')"],
)
def test_query_refuses_a_superuser_connection_by_default(
    seeded_postgres: str, tmp_path: Path, sql: str
) -> None:
    assert_one_error(etl("query", sql, "--db", seeded_postgres, cwd=tmp_path), "superuser")


@PG_ONLY
@pytest.mark.slow
def test_copy_to_program_never_runs_even_for_a_superuser(
    seeded_postgres: str, tmp_path: Path
) -> None:
    probe = tmp_path / "probe.txt"
    for flags in ([], ["--allow-superuser"]):
        result = etl(
            "query",
            f"COPY (SELECT 1) TO PROGRAM 'id > {probe}'",
            "--db",
            seeded_postgres,
            *flags,
            cwd=tmp_path,
        )
        assert_one_error(result)
    assert not probe.exists()


RUNS_FOREVER = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
)


@pytest.mark.slow
def test_query_is_stopped_at_its_timeout(seeded_url: str, tmp_path: Path) -> None:
    flags = ["--timeout", "0.5", "--db", seeded_url, *superuser_flag(seeded_url)]
    result = etl("query", RUNS_FOREVER, *flags, cwd=tmp_path, timeout=60)
    assert_one_error(result, "time limit")


@PG_ONLY
def test_a_sleeping_query_is_stopped_at_its_timeout(seeded_postgres: str, tmp_path: Path) -> None:
    flags = ["--timeout", "0.5", "--db", seeded_postgres, "--allow-superuser"]
    result = etl("query", "SELECT pg_sleep(30)", *flags, cwd=tmp_path, timeout=20)
    assert_one_error(result, "time limit")


def test_query_still_reads(seeded_url: str, tmp_path: Path) -> None:
    """The refusals above leave reading alone: comments, %, WITH, VALUES and EXPLAIN work."""
    flags = ["--db", seeded_url, *superuser_flag(seeded_url), "--format", "json"]
    for sql, expected in [
        ("-- count\nSELECT count(*) AS n FROM papers WHERE title LIKE '%' OR true;", 38),
        ("WITH t AS (SELECT 1 AS n) SELECT n FROM t", 1),
        ("VALUES (7)", 7),
    ]:
        result = etl("query", sql, *flags, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert list(json.loads(result.stdout)[0].values()) == [expected]
    assert etl("query", "EXPLAIN SELECT * FROM papers", *flags, cwd=tmp_path).returncode == 0


@pytest.mark.migrated
def test_etl_run_recreates_a_dropped_view(loaded_url: str, tmp_path: Path) -> None:
    engine = create_engine(loaded_url, poolclass=NullPool)
    with engine.begin() as connection:
        connection.execute(text("DROP VIEW papers_with_code"))
    engine.dispose()
    assert "papers_with_code" not in view_names(loaded_url)
    result = etl("run", "-q", "--workers", "1", "--db", loaded_url, str(SEEDS), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "papers_with_code" in view_names(loaded_url)
    assert fetch_one(loaded_url, "SELECT count(DISTINCT paper_id) FROM papers_with_code") == 10


# 2. SQLite: nothing created on disk ----------------------------------------------------------


def files_besides_wal(folder: Path) -> list[str]:
    """The files in a folder, except the -wal and -shm files any WAL reader may create."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))


@pytest.mark.parametrize(
    "sql",
    [
        "ATTACH DATABASE 'x.db' AS x",
        "VACUUM INTO 'x.db'",
    ],
)
def test_sqlite_query_creates_nothing_on_disk(tmp_path: Path, sql: str) -> None:
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    load(url, SEEDS)
    work = tmp_path / "work"
    work.mkdir()
    before = files_besides_wal(tmp_path)
    assert_one_error(etl("query", sql, "--db", url, cwd=work), "only reads")
    assert list(work.iterdir()) == []
    assert files_besides_wal(tmp_path) == before
    assert fetch_one(url, "PRAGMA journal_mode") == "wal"
    assert fetch_one(url, "PRAGMA user_version") == 0


# 3. Search: bounded, one language on both backends -------------------------------------------


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (" ".join(f"word{i}" for i in range(33)), "33 terms; at most 32"),
        (" ".join(f"-w{i}" for i in range(3000)), "at most 500 are allowed"),
        ("cache " * 2000, "at most 500 are allowed"),
    ],
)
def test_search_size_is_limited_with_a_short_message(
    seeded_url: str, tmp_path: Path, query: str, message: str
) -> None:
    result = etl("search", query, "--db", seeded_url, cwd=tmp_path, timeout=60)
    line = assert_one_error(result, message)
    assert len(line) < 200


@pytest.fixture(scope="module")
def both_backends(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The seeds loaded into a SQLite file and a PostgreSQL database, side by side."""
    require_postgres()
    folder = tmp_path_factory.mktemp("both")
    with (
        fresh_database("sqlite", folder, migrated=True) as sqlite_url,
        fresh_database("postgresql", folder, migrated=True) as postgres_url,
    ):
        load(sqlite_url, SEEDS)
        load(postgres_url, SEEDS)
        yield {"sqlite": sqlite_url, "postgresql": postgres_url}


SEARCHES = [
    "cache",
    "KV cache",
    '"KV cache"',
    "cache OR Hamiltonian",
    "cache OR OR Hamiltonian",
    "OR cache OR",
    "model -language",
    'model -"language model"',
    "model AND language",
    "model NOT",
    "NOT model",
    "model - -",
    "the cache of a model",
    "PDI-CP",
    "title:model",
    "model*",
    "NEAR(model",
    '"unbalanced model',
    "model OR -language",
]


@PG_ONLY
@pytest.mark.parametrize("query", SEARCHES)
@pytest.mark.slow
def test_search_means_the_same_on_both_backends(
    both_backends: dict[str, str], tmp_path: Path, query: str
) -> None:
    found = {}
    for backend, url in both_backends.items():
        result = etl(
            "search", query, "--limit", "100", "--db", url, "--format", "json", cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        found[backend] = {row["paper_id"] for row in json.loads(result.stdout)}
    if not any(mark in query for mark in ':("'):  # these find nothing in the seeds
        assert found["sqlite"], f"{query!r} finds nothing"
    assert found["sqlite"] == found["postgresql"]


@pytest.mark.parametrize("query", ["AND", "NOT", "OR OR", "-cache", "the of"])
@pytest.mark.slow
def test_queries_with_nothing_to_look_for_are_one_error_on_both(
    seeded_url: str, tmp_path: Path, query: str
) -> None:
    assert_one_error(etl("search", query, "--db", seeded_url, cwd=tmp_path), "no words")


@pytest.mark.slow
def test_a_leading_minus_is_a_search_term_not_an_option(seeded_url: str, tmp_path: Path) -> None:
    flags = ["-n", "100", "--db", seeded_url, "--format", "json"]
    every = etl("search", "model", *flags, cwd=tmp_path)
    minus = etl("search", "model", "-language", *flags, cwd=tmp_path)
    quoted = etl("search", "model -language", *flags, cwd=tmp_path)
    assert minus.returncode == 0, minus.stderr
    assert 0 < len(json.loads(minus.stdout)) < len(json.loads(every.stdout))
    assert json.loads(minus.stdout) == json.loads(quoted.stdout)
    assert_one_error(etl("search", "-cache", "--db", seeded_url, cwd=tmp_path), "no words")


# 4. No secret in any output, log, error or table ----------------------------------------------


@PG_ONLY
@pytest.mark.slow
def test_no_password_in_output_errors_or_the_runs_table(postgres_url: str, tmp_path: Path) -> None:
    secret = f"pw{uuid.uuid4().hex[:10]}"
    parsed = make_url(postgres_url)
    in_query = f"{postgres_url}?password={secret}"  # trust authentication ignores it
    with_at = parsed.set(password=f"{secret}@x").render_as_string(hide_password=False)
    with_at = with_at.replace("%40", "@")  # a password whose @ the user did not escape
    outputs = []
    for url in (in_query, with_at):
        run = etl("run", "-q", "--workers", "1", "--db", url, str(SEEDS), cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        stats = etl("stats", "--db", url, "--format", "json", cwd=tmp_path)
        assert stats.returncode == 0, stats.stderr
        outputs += [run.stdout, run.stderr, stats.stdout, stats.stderr]
    unreachable = parsed.set(password=secret, port=1).render_as_string(hide_password=False)
    for command in (["run", "-q"], ["search", "cache"], ["stats"]):
        failed = etl(*command, "--db", unreachable, cwd=tmp_path)
        assert_one_error(failed)
        outputs.append(failed.stderr)
    stored = fetch(postgres_url, "SELECT options FROM runs")
    assert len(stored) == 2
    for text_ in outputs:
        assert secret not in text_, text_
    for (options,) in stored:
        assert secret not in str(options) and "password" not in str(options), options


# 5. grant-readonly: a role that can only read this database ---------------------------------


def admin_sql(url: str, *statements: str) -> None:
    engine = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with engine.connect() as connection:
        for statement in statements:
            connection.execute(text(statement))
    engine.dispose()


@PG_ONLY
def test_grant_readonly_never_silently_changes_an_existing_role(
    postgres_url: str, tmp_path: Path
) -> None:
    role = f"etl_hostile_{uuid.uuid4().hex[:8]}"
    with roles(postgres_url, role):
        admin_sql(postgres_url, f'CREATE ROLE "{role}" LOGIN SUPERUSER CREATEDB CREATEROLE')
        refused = etl("grant-readonly", role, "--db", postgres_url, cwd=tmp_path)
        assert_one_error(refused, "SUPERUSER, CREATEDB, CREATEROLE", "--strip-attributes")
        attributes = "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = :r"
        assert fetch(postgres_url, attributes, {"r": role}) == [(True, True, True)]
        stripped = etl(
            "grant-readonly", role, "--strip-attributes", "--db", postgres_url, cwd=tmp_path
        )
        assert stripped.returncode == 0, stripped.stderr
        for name in ("SUPERUSER", "CREATEDB", "CREATEROLE"):
            assert f"Changed: removed {name} from {role}" in stripped.stdout
        assert fetch(postgres_url, attributes, {"r": role}) == [(False, False, False)]


@PG_ONLY
@pytest.mark.slow
@pytest.mark.migrated
def test_grant_readonly_refuses_a_member_of_a_writing_role(
    postgres_url: str, tmp_path: Path
) -> None:
    load(postgres_url, SEEDS)
    reader, writer = (f"etl_hostile_{uuid.uuid4().hex[:8]}" for _ in range(2))
    with roles(postgres_url, reader, writer):
        admin_sql(
            postgres_url,
            f'CREATE ROLE "{writer}" NOLOGIN',
            f'GRANT INSERT, DELETE ON ALL TABLES IN SCHEMA public TO "{writer}"',
            f"CREATE ROLE \"{reader}\" LOGIN PASSWORD 'pw'",
            f'GRANT "{writer}" TO "{reader}"',
        )
        refused = etl("grant-readonly", reader, "--db", postgres_url, cwd=tmp_path)
        assert_one_error(refused, f"is a member of {writer}", "REVOKE")
        assert paper_count(postgres_url) == 38


@PG_ONLY
@pytest.mark.slow
@pytest.mark.migrated
def test_read_only_role_cannot_write_create_temp_objects_or_take_the_load_lock(
    postgres_url: str, tmp_path: Path
) -> None:
    load(postgres_url, SEEDS)
    role = f"etl_hostile_{uuid.uuid4().hex[:8]}"
    with roles(postgres_url, role):
        engine = create_engine(postgres_url, poolclass=NullPool)
        grant_read_only(engine, role, "pw")
        engine.dispose()
        reader = create_engine(as_role(postgres_url, role), poolclass=NullPool)
        with reader.connect() as connection:
            session = connection.execution_options(isolation_level="AUTOCOMMIT")
            assert session.scalar(text("SELECT count(*) FROM papers")) == 38
            session.execute(text("SET default_transaction_read_only = off"))
            for statement in [
                "CREATE TEMP TABLE scratch (x int)",
                "CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
                "CREATE TABLE scratch (x int)",
                "INSERT INTO topics (slug, name) VALUES ('x', 'x')",
                "DELETE FROM papers",
                f"SELECT pg_try_advisory_lock({NAMESPACE}, {LOADERS})",
                f"SELECT pg_advisory_lock_shared({NAMESPACE}, {LOADERS})",
                f"SELECT pg_try_advisory_xact_lock({NAMESPACE}, {LOADERS})",
                "SELECT pg_read_file('/etc/hostname')",
                "SELECT nextval('runs_id_seq')",
                "SELECT pg_cancel_backend(pg_backend_pid())",
                "SELECT pg_terminate_backend(pg_backend_pid())",
            ]:
                with pytest.raises(DBAPIError, match="permission denied"):
                    session.execute(text(statement))
            # With the reader's session open, a load still takes its lock and runs.
            run = etl("run", "-q", "--workers", "1", "--db", postgres_url, str(SEEDS), cwd=tmp_path)
            assert run.returncode == 0, run.stderr
            # The role was given CONNECT on this database only (PUBLIC's default stays: docs/security.md).
            acl = fetch(postgres_url, "SELECT datname, datacl::text FROM pg_database")
            assert [name for name, grants in acl if role in str(grants)] == [
                make_url(postgres_url).database
            ]
        reader.dispose()
        as_reader = etl(
            "query",
            "SELECT count(*) FROM papers",
            "--db",
            as_role(postgres_url, role),
            "--format",
            "csv",
            cwd=tmp_path,
        )
        assert as_reader.stdout.splitlines() == ["count", "38"], as_reader.stderr


# 6 and 7. Failures named for what they are ---------------------------------------------------


@PG_ONLY
@pytest.mark.parametrize("command", [["run", "-q"], ["search", "cache"], ["query", "SELECT 1"]])
@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"port": 1}, ("cannot reach the PostgreSQL server at 127.0.0.1:1", "refused")),
        ({"host": "no-such-host.invalid"}, ("cannot reach", "no-such-host.invalid")),
        ({"database": "etl_no_such_database"}, ("'etl_no_such_database' does not exist",)),
        ({"username": "etl_no_such_user"}, ("refused the login", "etl_no_such_user")),
    ],
)
@pytest.mark.slow
def test_postgres_connection_failures_are_named(
    tmp_path: Path, command: list[str], change: dict[str, object], fragments: tuple[str, ...]
) -> None:
    require_postgres()
    url = make_url(POSTGRES_ADMIN_URL).set(**change).render_as_string(hide_password=False)
    assert_one_error(etl(*command, "--db", url, cwd=tmp_path), *fragments)


@pytest.mark.slow
def test_a_hot_journal_is_named_with_how_to_recover(tmp_path: Path) -> None:
    database = tmp_path / "papers.db"
    load(f"sqlite:///{database}", SEEDS)
    killed_writer = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA journal_mode = DELETE'); c.execute('PRAGMA cache_size = 1')\n"
        "c.execute('BEGIN'); c.execute('UPDATE papers SET abstract = abstract || abstract')\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", killed_writer, str(database)], check=False)
    assert Path(f"{database}-journal").stat().st_size > 0
    found = etl("search", "cache", "--db", str(database), cwd=tmp_path)
    assert_one_error(found, "hot journal", "etl run")
    recovered = etl("run", "-q", "--workers", "1", "--db", str(database), str(SEEDS), cwd=tmp_path)
    assert recovered.returncode == 0, recovered.stderr
    assert etl("search", "cache", "--db", str(database), cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_a_lock_held_past_the_busy_timeout_is_named(tmp_path: Path) -> None:
    database = tmp_path / "papers.db"
    load(f"sqlite:///{database}", SEEDS)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('PRAGMA journal_mode = DELETE'); c.execute('BEGIN EXCLUSIVE')\n"
            "print('locked', flush=True); time.sleep(60)\n",
            str(database),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        found = etl(
            "search", "cache", "--db", str(database), cwd=tmp_path, env={"ETL_BUSY_TIMEOUT": "0.5"}
        )
        assert_one_error(found, "locked by another connection", "0.5 s busy timeout")
    finally:
        holder.kill()
        holder.wait()


@PG_ONLY
def test_a_postgres_lock_held_past_the_timeout_is_named(
    seeded_postgres: str, tmp_path: Path
) -> None:
    engine = create_engine(seeded_postgres, poolclass=NullPool)
    with engine.connect() as connection:
        connection.execute(text("LOCK TABLE papers IN ACCESS EXCLUSIVE MODE"))  # as a first load
        found = etl(
            "search",
            "cache",
            "--db",
            seeded_postgres,
            cwd=tmp_path,
            env={"ETL_BUSY_TIMEOUT": "0.5"},
            timeout=30,
        )
        connection.rollback()
    engine.dispose()
    assert_one_error(found, "held a lock on a table past the 0.5 s lock timeout")


@contextmanager
def small_filesystem(folder: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of the given size mounted at `folder` (needs root, as CI runs)."""
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot mount a tmpfs under CI: {mounted.stderr}")
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


@pytest.mark.slow
def test_a_read_only_file_system_is_named(tmp_path: Path) -> None:
    with small_filesystem(tmp_path / "disk", "16m") as disk:
        url = f"sqlite:///{disk / 'papers.db'}"
        load(url, SEEDS)
        remount(disk, "ro")
        result = etl("run", "-q", "--workers", "1", "--db", url, str(SEEDS), cwd=tmp_path)
        assert_one_error(result, "cannot be written", "Read-only file system")
        assert etl("search", "cache", "--db", url, cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_a_full_disk_fails_the_run_with_its_reason_and_keeps_the_data(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, files=1, per_file=3000)
    with small_filesystem(tmp_path / "disk", "32m") as disk:
        url = f"sqlite:///{disk / 'papers.db'}"
        load(url, SEEDS)
        used = os.statvfs(disk)
        used_bytes = (used.f_blocks - used.f_bfree) * used.f_frsize
        remount(disk, f"size={used_bytes + 1024 * 1024}")
        result = etl("run", "-q", "--workers", "1", "--db", url, str(corpus), cwd=tmp_path)
        assert_one_error(result, "is full")
        assert paper_count(url) == 38
        status, message = fetch(url, "SELECT status, message FROM runs ORDER BY id DESC")[0]
        assert status == "failed" and "full" in str(message)


@pytest.mark.slow
def test_debug_option_shows_the_traceback(tmp_path: Path) -> None:
    plain = etl("search", "cache", "--db", "absent.db", cwd=tmp_path)
    debug = etl("--debug", "search", "cache", "--db", "absent.db", cwd=tmp_path)
    by_env = etl("search", "cache", "--db", "absent.db", cwd=tmp_path, env={"ETL_DEBUG": "1"})
    assert "Traceback" not in plain.stderr
    for result in (debug, by_env):
        assert result.returncode == 1
        assert "Traceback" in result.stderr and result.stderr.strip().endswith(plain.stderr.strip())


# 8. Table output shows data as data ----------------------------------------------------------

HOSTILE_VALUES = [
    "\\**x**",
    "[bold]b[/bold]",
    ":x: :fire:",
    "\x1b[31mred\x1b[0m",
    "a\rb",
    "\u202eevil",
]


def test_table_output_shows_values_as_written(seeded_url: str, tmp_path: Path) -> None:
    literal = " UNION ALL ".join(
        f"SELECT {i} AS n, '{v}' AS value" for i, v in enumerate(HOSTILE_VALUES)
    )
    flags = ["--db", seeded_url, *superuser_flag(seeded_url)]
    table = etl("query", f"SELECT value FROM ({literal}) AS t ORDER BY n", *flags, cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    for shown in [
        "\\**x**",
        "[bold]b[/bold]",
        ":x: :fire:",
        "\\x1b[31mred\\x1b[0m",
        "a\\rb",
        "\\u202eevil",
    ]:
        assert shown in table.stdout
    assert "\x1b" not in table.stdout and "\r" not in table.stdout and "\u202e" not in table.stdout
    as_json = etl(
        "query",
        f"SELECT value FROM ({literal}) AS t ORDER BY n",
        *flags,
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert [row["value"] for row in json.loads(as_json.stdout)] == HOSTILE_VALUES


def test_search_snippets_cannot_inject_markup(tmp_path: Path) -> None:
    source = tmp_path / "hostile.jsonl"
    source.write_text(
        json.dumps(
            {
                "title": "A [blink]x[/blink] study",
                "abstract": "A cache :fire: \\**y** \x1b[2J here.",
            }
        )
        + "\n",
        "utf-8",
    )
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    load(url, source, venue="TEST", year=2025)
    result = etl("search", "cache", "--db", url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "[blink]x[/blink]" in result.stdout and ":fire:" in result.stdout
    assert "\\x1b[2J" in result.stdout and "\x1b" not in result.stdout


# 9. --db: a URL or a database file, never a guess -------------------------------------------


@pytest.mark.parametrize("command", [["run", "-q"], ["search", "cache"], ["stats"], ["views"]])
@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("not a url at all", "'not a url at all' is neither a database URL nor a database file"),
        ("sqlite:///missing/folder/papers.db", "no folder 'missing/folder'"),
        ("missing/papers.db", "no folder 'missing'"),
    ],
)
@pytest.mark.slow
def test_db_option_refuses_what_is_not_a_database(
    tmp_path: Path, command: list[str], given: str, reason: str
) -> None:
    result = etl(*command, "--db", given, cwd=tmp_path)
    assert_one_error(result, reason)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["run", "-q"], ["stats"]])
def test_db_option_refuses_an_existing_file_that_is_no_database(
    tmp_path: Path, command: list[str]
) -> None:
    """`--db list.json` (arguments swapped) or an empty file: kept as it was, named."""
    (tmp_path / "notes.txt").write_bytes(b"")
    (tmp_path / "list.json").write_text('[{"title": "A paper"}]', "utf-8")
    for name in ("notes.txt", "list.json"):
        before = (tmp_path / name).read_bytes()
        result = etl(*command, "--db", name, cwd=tmp_path)
        assert_one_error(result, f"'{name}' is a file but not a SQLite database")
        assert (tmp_path / name).read_bytes() == before
    # a file that is a SQLite database is one whatever its name
    load(f"sqlite:///{tmp_path / 'papers.data'}", SEEDS)
    assert etl("stats", "--db", "papers.data", cwd=tmp_path).returncode == 0


# 10. `etl views --db` ------------------------------------------------------------------------


@pytest.mark.migrated
def test_views_lists_the_views_in_the_given_database(loaded_url: str, tmp_path: Path) -> None:
    engine = create_engine(loaded_url, poolclass=NullPool)
    with engine.begin() as connection:
        connection.execute(text("DROP VIEW acronym_glossary"))
    engine.dispose()
    result = etl("views", "--db", loaded_url, "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    listed = {row["view"]: row["description"] for row in json.loads(result.stdout)}
    assert "acronym_glossary" not in listed
    assert set(listed) >= {"papers_with_code", "venue_summary", "topic_summary"}
    assert all(listed.values())

"""Helpers shared by the tests and the benchmarks: databases, the CLI, made-up corpora.

Fixtures live in tests/conftest.py and use these; test modules and benchmarks import them as
`tests.helpers` (the repository root is on sys.path: pytest's `pythonpath`, or `PYTHONPATH=.`
for a benchmark run from the root).
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from etl import extract
from etl.load import schema as s
from etl.load.database import create_db_engine, upgrade_to_head
from etl.load.locks import LOADERS, NAMESPACE
from etl.models import PaperRows, RawRecord, RunReport, SourceFile
from etl.pipeline import RunOptions, run
from etl.transform import load_taxonomy, transform

# Databases ----------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "seeds"
POSTGRES_ADMIN_URL = os.environ.get(
    "ETL_TEST_POSTGRES_URL", "postgresql+psycopg://root@127.0.0.1:5432/postgres"
)


@cache
def _postgres_problem() -> str | None:
    """Why PostgreSQL tests cannot run here, or None when the server answers."""
    try:
        engine = create_engine(POSTGRES_ADMIN_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        engine.dispose()
    except Exception as exc:  # any failure to connect means: no server for the tests
        return f"no PostgreSQL server at {make_url(POSTGRES_ADMIN_URL).render_as_string()}: {exc}"
    return None


def require_postgres() -> None:
    """Skip without a server, except under CI where the tests must run."""
    problem = _postgres_problem()
    if problem is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {problem}")
    pytest.skip(problem)


@contextmanager
def fresh_postgres_database(*, migrated: bool = False) -> Iterator[str]:
    """Create a uniquely named PostgreSQL database, empty or (`migrated`) a copy of the
    session's migrated template; it is dropped after the test, in the background."""
    require_postgres()
    name = f"etl_test_{uuid.uuid4().hex[:12]}"
    template = f' TEMPLATE "{_postgres_template()}"' if migrated else ""
    _admin_execute(f'CREATE DATABASE "{name}"{template}')
    try:
        yield _postgres_url(name)
    finally:
        DROPPER.drop(name)


@contextmanager
def fresh_database(kind: str, folder: Path, *, migrated: bool = False) -> Iterator[str]:
    """A URL for a new database of the given kind: empty (no file yet, on SQLite), or already
    at the newest revision (`migrated`), as a first `etl run` leaves it before loading."""
    if kind == "sqlite":
        path = folder / "papers.db"
        if migrated:
            shutil.copyfile(_sqlite_template(), path)
        yield f"sqlite:///{path}"
    else:
        with fresh_postgres_database(migrated=migrated) as url:
            yield url


# Migrated databases are copies of a template migrated once a session: a file copy on SQLite,
# CREATE DATABASE ... TEMPLATE on PostgreSQL, for a small part of what migrating each by
# Alembic costs (benchmarks/HISTORY.md). Tests of migrations, of first runs and of their
# memory start from empty databases instead (tests/conftest.py).


def _migrate(url: str) -> None:
    """Migrate a database to head the way `etl run` does, leaving no connection open."""
    engine = create_db_engine(url)
    try:
        upgrade_to_head(engine)
    finally:
        engine.dispose()


@cache
def _sqlite_template() -> Path:
    """A migrated SQLite file in a temporary folder removed when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="etl-test-template-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "papers.db"
    _migrate(f"sqlite:///{path}")
    # Closing the last connection checkpoints the WAL into the file and removes it: the file
    # alone is the whole database, safe to copy.
    assert [p.name for p in folder.iterdir()] == ["papers.db"], list(folder.iterdir())
    return path


@cache
def _postgres_template() -> str:
    """The name of a migrated PostgreSQL database of this process, dropped when it ends.
    Nothing connects to it after the migration: PostgreSQL copies only an unused database."""
    name = f"etl_test_template_{uuid.uuid4().hex[:12]}"
    _admin_execute(f'CREATE DATABASE "{name}"')
    DROPPER.drop_at_exit(name)
    _migrate(_postgres_url(name))
    return name


def _postgres_url(name: str) -> str:
    return make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def _admin_execute(statement: str) -> None:
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with admin.connect() as connection:
            connection.execute(text(statement))
    finally:
        admin.dispose()


class DatabaseDropper:
    """Drops finished tests' PostgreSQL databases in a thread of its own, in order, so that a
    test's teardown does not wait for the drop (PostgreSQL checkpoints for each one). Each
    database has a unique name nothing else uses, so a later drop isolates tests as well as an
    immediate one; `finish` waits for every drop, and raises for any that failed."""

    def __init__(self) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._at_exit: list[str] = []
        self._failures: list[str] = []
        atexit.register(self.finish, check=False)

    def drop(self, name: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="drop-databases", daemon=True)
            self._thread.start()
        self._queue.put(name)

    def drop_at_exit(self, name: str) -> None:
        """Drop `name` in `finish`, after the databases made from it."""
        self._at_exit.append(name)

    def finish(self, *, check: bool = True) -> None:
        """Drop what is left and wait for every drop to end."""
        for name in self._at_exit:
            self.drop(name)
        self._at_exit.clear()
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        failures, self._failures = self._failures, []
        if check and failures:
            raise AssertionError("databases not dropped:\n" + "\n".join(failures))

    def _work(self) -> None:
        admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        try:
            while (name := self._queue.get()) is not None:
                try:
                    with admin.connect() as connection:
                        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                except Exception as exc:  # reported by finish, at the end of the session
                    self._failures.append(f"{name}: {exc}")
        finally:
            admin.dispose()


DROPPER = DatabaseDropper()


# A test on both backends runs on SQLite in the fast tier and on PostgreSQL in the full suite
# (each PostgreSQL run creates a database of its own, and migrates it unless the test is
# marked `migrated`: a large share of the suite's time); the tests written for PostgreSQL alone
# stay in the fast tier, so it reaches the server.
BACKENDS = [
    "sqlite",
    pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow]),
]


def fetch(url: str, sql: str, params: dict[str, object] | None = None) -> list[tuple[object, ...]]:
    """All rows of a query, through a short-lived engine (the code under test keeps none open)."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return [tuple(r) for r in connection.execute(text(sql), params or {})]
    finally:
        engine.dispose()


def fetch_one(url: str, sql: str, params: dict[str, object] | None = None) -> object:
    """The first column of the first row of a query."""
    return fetch(url, sql, params)[0][0]


def load(url: str, *paths: Path | str, **options: object) -> RunReport:
    """Run the real pipeline (one worker, no progress) into a database."""
    return run(
        RunOptions(paths=tuple(str(p) for p in paths), database_url=url, workers=1, **options)
    )  # type: ignore[arg-type]


# The CLI --------------------------------------------------------------------------------------

ETL = [sys.executable, "-m", "etl"]


def etl(
    *args: str | bytes, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess, without the developer's database URL or debug switch
    (arguments may be bytes that are not UTF-8)."""
    environment = {
        k: v for k, v in os.environ.items() if k not in {"ETL_DATABASE_URL", "ETL_DEBUG"}
    }
    return subprocess.run(
        [*ETL, *args],
        cwd=cwd,
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# Address space for a hostile run: far above what a bounded run needs, and low enough that a
# run whose memory follows the input fails at once instead of taking the machine down.
ADDRESS_SPACE = 3 * 2**30

# Runs `etl` as its only child and prints the child's exit status and peak resident memory.
# (A child of the test's own process would report the test's memory at the fork as its peak:
# Linux keeps it across exec.)
MEASURED = """
import resource, subprocess, sys
limit = int(sys.argv[1])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
child = subprocess.run([sys.executable, "-m", "etl", *sys.argv[2:]], preexec_fn=cap,
                       capture_output=True, text=True, timeout=300)
sys.stderr.write(child.stdout + child.stderr)
print(child.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measured_run(*args: str, cwd: Path) -> tuple[int, int, str]:
    """`etl ARGS` in a capped subprocess: exit status, peak RSS in KB, and its output."""
    result = subprocess.run(
        [sys.executable, "-c", MEASURED, str(ADDRESS_SPACE), *args],
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k != "ETL_DATABASE_URL"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    status, peak = result.stdout.split()
    return int(status), int(peak), result.stderr


def rejects(url: str) -> list[tuple[str, int, str]]:
    """The `rejects` table as (file name, position, reason), in that order."""
    rows = fetch(
        url, "SELECT source_path, position, reason FROM rejects ORDER BY source_path, position"
    )
    return [(Path(str(p)).name, int(str(n)), str(r)) for p, n, r in rows]


def superuser_flag(url: str) -> list[str]:
    """The test server's role is a superuser: tests not about that pass --allow-superuser."""
    return ["--allow-superuser"] if url.startswith("postgresql") else []


# PostgreSQL roles ---------------------------------------------------------------------------


@contextmanager
def roles(url: str, *names: str) -> Iterator[None]:
    """Drop the test's roles (and what they were granted here) afterwards."""
    try:
        yield
    finally:
        admin = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        server = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        for name in names:
            with admin.connect() as connection:
                if connection.scalar(
                    text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": name}
                ):
                    connection.execute(text(f'DROP OWNED BY "{name}"'))
            with server.connect() as connection:
                connection.execute(text(f'DROP ROLE IF EXISTS "{name}"'))
        admin.dispose()
        server.dispose()


def as_role(url: str, role: str) -> str:
    """A URL for the same database as `role` (password "pw")."""
    return make_url(url).set(username=role, password="pw").render_as_string(hide_password=False)


# Loaders driven by hand ----------------------------------------------------------------------

TAXONOMY = load_taxonomy(None)


def rows_of(path: Path) -> tuple[SourceFile, list[PaperRows]]:
    """A file as the writer gets it: identified, read and transformed."""
    source = extract.identify(path)
    records = [r for r in extract.read_records(source) if isinstance(r, RawRecord)]
    return source, [PaperRows.from_bundle(transform(r, TAXONOMY)) for r in records]


def new_run(connection: Connection) -> int:
    """A `runs` row for a loader driven by hand."""
    result = connection.execute(s.runs.insert().values(started_at=datetime.now(), status="running"))
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


# Made-up inputs -------------------------------------------------------------------------------


def write_json(path: Path, records: list[dict[str, Any]]) -> Path:
    """`records` as one JSON array."""
    path.write_text(json.dumps(records), "utf-8")
    return path


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    """`records` as JSON Lines."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# A plain-text corpus for reliability tests: unique abstracts, each with a named method.
CORPUS_WORDS = (
    "graph neural network attention transformer diffusion policy gradient kernel sparse "
    "retrieval language vision reward robust causal federated privacy benchmark dataset "
    "quantization pruning distillation contrastive embedding latent variational bayesian "
    "optimal transport convex stochastic adaptive memory cache token context alignment"
).split()
CORPUS_NAMES = ("Net", "Former", "GAN", "Bench", "VQ", "Flow", "Mix", "Diff")


def abstract(rng: random.Random, number: int) -> str:
    """One unique abstract with a named method, an acronym and sometimes a code link."""
    words = " ".join(rng.choice(CORPUS_WORDS) for _ in range(rng.randint(60, 120)))
    name = f"{rng.choice(CORPUS_WORDS).capitalize()}{rng.choice(CORPUS_NAMES)}{number}"
    text = f"We propose **{name}**, a novel method for {words}. Paper number {number}."
    if number % 4 == 0:
        text += f" Code is available at https://github.com/lab{number % 97}/{name.lower()}."
    return text


def write_corpus(folder: Path, files: int, per_file: int, seed: int = 7) -> int:
    """Write `files` lists of `per_file` abstracts each; returns the number of abstracts."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    number = 0
    for index in range(files):
        lines = [f"BENCH 2025 paper list (part {index + 1})", ""]
        for _ in range(per_file):
            number += 1
            lines += [abstract(rng, number), ""]
        (folder / f"part_{index + 1:03d}.txt").write_text("\n".join(lines), "utf-8")
    return number


# Concurrent loaders: made-up lists sharing papers, their tables compared by natural keys --------

LOADERS_KEY = {"a": NAMESPACE, "b": LOADERS}
PAPER = "JOIN papers p ON p.pk = x.paper_pk"
# Every table but `runs` (each loader records its own), by natural keys: what a serial load
# and a concurrent one must agree on, whatever row numbers and ids they gave.
BY_NATURAL_KEYS = {
    "papers": "SELECT id, venue, year, title, title_raw, abstract, abstract_raw, status, "
    "keywords, extra, method_names, content_hash FROM papers",
    "sources": "SELECT path, checksum, fingerprint, format, venue, year, size_bytes, mtime_ns, "
    "record_count, reject_count FROM sources",
    "paper_sources": "SELECT p.id, s.path, x.position, x.venue, x.year, x.status, "
    f"x.content_hash, x.record, x.cited_by_count FROM paper_sources x {PAPER} "
    "JOIN sources s ON s.id = x.source_id",
    "citations": "SELECT p.id, s.path, x.position, x.cited_key, q.id, x.raw FROM citations x "
    f"{PAPER} JOIN sources s ON s.id = x.source_id LEFT JOIN papers q ON q.pk = x.cited_paper_pk",
    "paper_keys": f"SELECT p.id, x.key FROM paper_keys x {PAPER}",
    "authors": "SELECT name FROM authors",
    "paper_authors": "SELECT p.id, x.position, a.name, x.homepage FROM paper_authors x "
    f"{PAPER} JOIN authors a ON a.id = x.author_id",
    "links": "SELECT url, host, kind, repo_owner, repo_name FROM links",
    "paper_links": "SELECT p.id, l.url, x.found_in FROM paper_links x "
    f"{PAPER} JOIN links l ON l.id = x.link_id",
    "methods": "SELECT key, name, kind FROM methods",
    "method_aliases": "SELECT x.key, x.alias, m.key FROM method_aliases x "
    "JOIN methods m ON m.id = x.method_id",
    "paper_methods": "SELECT p.id, x.key, x.name, m.key, x.role, x.surface, x.kind, x.aliases, "
    f"x.position FROM paper_methods x {PAPER} JOIN methods m ON m.id = x.method_id",
    "acronyms": f"SELECT p.id, x.acronym, x.expansion FROM acronyms x {PAPER}",
    "paper_topics": f"SELECT p.id, x.topic_slug, x.score, x.evidence FROM paper_topics x {PAPER}",
    "topics": "SELECT slug, name, parent_slug, terms FROM topics",
    "paper_tasks": f"SELECT p.id, x.task_name, x.score, x.evidence FROM paper_tasks x {PAPER}",
    "tasks": "SELECT name, topic_slug, terms FROM tasks",
    "listed_terms": "SELECT key, kind, name, detail FROM listed_terms",
    "paper_listed_terms": "SELECT p.id, t.key, x.position FROM paper_listed_terms x "
    f"{PAPER} JOIN listed_terms t ON t.id = x.term_id",
    "rejects": "SELECT source_path, position, reason, raw FROM rejects",
}
AUTHORS = [f"{first} {last}" for first in ("Ada", "Bo", "Chen", "Dana", "Eli") for last in "PQRSTU"]
COMMON = (
    "It builds on BERT.",
    "It is trained with Adam.",
    "We evaluate it on ImageNet.",
    "It extends ResNet.",
    "It uses Low-Rank Adaptation (LoRA).",
)
WORDS = "sparse graph attention kernel retrieval robust token memory latent policy".split()


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows by natural keys, sorted."""
    return {name: sorted(fetch(url, sql), key=repr) for name, sql in BY_NATURAL_KEYS.items()}


def record(rng: random.Random, number: int) -> dict[str, Any]:
    """A made-up paper: a coined method, common methods, shared authors, sometimes a repo.
    Each common method is named in the same sentence wherever it appears: a method takes its
    name and kind from its first mention, and "first" differs between loaders side by side."""
    words = " ".join(rng.choice(WORDS) for _ in range(40))
    common = " ".join(sentence for sentence in COMMON if rng.random() < 0.5)
    result: dict[str, Any] = {
        "title": f"Kelo{number}Net for {rng.choice(WORDS)} learning",
        "abstract": f"We propose **Kelo{number}Net**, a method for {words}. {common} #{number}.",
        "authors": ", ".join(rng.sample(AUTHORS, 3)),
        "venue": "MADEUP",
        "year": 2025,
    }
    if number % 3 == 0:
        result["code_url"] = f"https://github.com/lab{number % 5}/shared-tools"
    return result


def write_files(folder: Path, files: int = 8, per_file: int = 400) -> None:
    """`files` JSON Lines files; every file also repeats 40 papers of the file before it (the
    same records), and one line of each is not JSON (a reject)."""
    rng = random.Random(21)
    folder.mkdir()
    papers = [[record(rng, f * per_file + i) for i in range(per_file)] for f in range(files)]
    for index in range(files):
        shared = papers[index - 1][:40]
        lines = [json.dumps(r) for r in [*papers[index], *shared]]
        lines.insert(7, "{not json")
        (folder / f"list_{index + 1}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")


# Records richer than `record`'s (about 23 rows a paper): five authors of 120, three links
# of small pools (a repository, a project page, a dataset), methods and acronyms named in the
# same sentence wherever they appear, and a DOI on every other paper.
RICH_AUTHORS = [
    f"{first} {last}"
    for first in (
        "Ada",
        "Bo",
        "Chen",
        "Dana",
        "Eli",
        "Fay",
        "Gus",
        "Hana",
        "Ivo",
        "Jun",
        "Kai",
        "Lea",
    )
    for last in ("Park", "Quist", "Rossi", "Sato", "Tran", "Ueda", "Vidal", "Weber", "Xu", "Young")
]
RICH_NAMES = [
    f"It builds on the {a}{b} {c} Network ({a[0]}{b[0]}{c[0]}N)."
    for a in ("Quorin", "Velta", "Sparo", "Lumo", "Traxi")
    for b in ("Deep", "Graph", "Kernel", "Latent")
    for c in ("Attention", "Memory")
]


def rich_record(rng: random.Random, number: int) -> dict[str, Any]:
    """A made-up paper sharing authors, links, methods and acronyms with many others."""
    words = " ".join(rng.choice(WORDS) for _ in range(30))
    named = " ".join(rng.sample(RICH_NAMES, 3) + rng.sample(COMMON, 2))
    result: dict[str, Any] = {
        "title": f"Varo{number}Net: {rng.choice(WORDS)} {rng.choice(WORDS)} learning",
        "abstract": f"We propose **Varo{number}Net**, a method for {words}. {named} #{number}.",
        "authors": ", ".join(rng.sample(RICH_AUTHORS, 5)),
        "venue": "MADEUP",
        "year": 2025,
        "code_url": f"https://github.com/lab{number % 40}/tool{number % 7}",
        "project": f"https://lab{number % 40}.example.org/projects/p{number % 97}",
        "dataset": f"https://huggingface.co/datasets/lab{number % 11}/set{number % 5}",
    }
    if number % 2:
        result["doi"] = f"10.5555/madeup.{number}"
    return result


def write_shared_heavy(folder: Path, files: int, per_file: int, shared: int) -> int:
    """`files` JSON Lines files of `per_file` records each, in a ring: `shared` records of
    each file are also in the next file. Each file's lines are shuffled, so two neighbours
    reach the papers they share in different orders and batches. Returns how many distinct
    papers they hold."""
    rng = random.Random(29)
    folder.mkdir()
    own = per_file - shared
    papers = [[rich_record(rng, f * own + i) for i in range(own)] for f in range(files)]
    for index in range(files):
        lines = [json.dumps(r) for r in [*papers[index], *papers[index - 1][:shared]]]
        rng.shuffle(lines)
        (folder / f"rich_{index + 1}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    return files * own


def loader(folder: Path, url: str, *extra: str) -> subprocess.Popen[bytes]:
    """A real `etl run` in a child process."""
    command = [sys.executable, "-m", "etl", "run", str(folder), "-q", "--workers", "1", *extra]
    return subprocess.Popen(
        [*command, "--db", url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def wait_until_blocked(url: str, sessions: int = 1, seconds: float = 60) -> None:
    """Block until `sessions` sessions of the database wait for a lock (loaders that start
    on a busy machine may take a while)."""
    query = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + seconds
    while int(str(fetch_one(url, query))) < sessions:
        assert time.monotonic() < deadline, "the loader never waited for the other writer"
        time.sleep(0.02)

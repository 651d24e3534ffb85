"""Shared fixtures: real SQLite files under tmp_path and a real PostgreSQL server.

PostgreSQL tests create a database with a unique name and drop it afterwards. Without a
server they skip with the reason; under CI=true a missing server fails the run instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from etl.models import RunReport
from etl.pipeline import RunOptions, run

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "seeds"
POSTGRES_ADMIN_URL = os.environ.get(
    "ETL_TEST_POSTGRES_URL", "postgresql+psycopg://root@127.0.0.1:5432/postgres"
)


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


_POSTGRES_PROBLEM = _postgres_problem()


def require_postgres() -> None:
    """Skip without a server, except under CI where the tests must run."""
    if _POSTGRES_PROBLEM is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {_POSTGRES_PROBLEM}")
    pytest.skip(_POSTGRES_PROBLEM)


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """Create a uniquely named PostgreSQL database; drop it on exit."""
    require_postgres()
    name = f"etl_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def fresh_database(kind: str, folder: Path) -> Iterator[str]:
    """A URL for an empty database of the given kind."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'papers.db'}"
    else:
        with fresh_postgres_database() as url:
            yield url


BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture
def postgres_url(tmp_path: Path) -> Iterator[str]:
    """A freshly created PostgreSQL database, dropped after the test."""
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file under the test's temporary folder (created by the code under test)."""
    return f"sqlite:///{tmp_path / 'papers.db'}"


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database on each backend in turn: a SQLite file, a fresh PostgreSQL database."""
    with fresh_database(request.param, tmp_path) as url:
        yield url


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


@pytest.fixture(scope="module", params=BACKENDS)
def seeded_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database per backend holding the seed lists, shared by a module's read-only tests."""
    with fresh_database(request.param, tmp_path_factory.mktemp("seeded")) as url:
        load(url, SEEDS)
        yield url


@pytest.fixture(scope="session")
def seeds() -> Path:
    """The project's seed folder (the two ICML 2025 lists)."""
    return SEEDS

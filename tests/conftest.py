"""Shared fixtures: real SQLite files under tmp_path and a real PostgreSQL server (the helpers
they use, and the tests import, are in tests/helpers.py).

PostgreSQL tests create a database with a unique name and drop it afterwards. Without a
server they skip with the reason; under CI=true a missing server fails the run instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import BACKENDS, SEEDS, fresh_database, fresh_postgres_database, load


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

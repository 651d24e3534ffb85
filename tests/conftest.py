"""Shared fixtures: real SQLite files under tmp_path and a real PostgreSQL server (the helpers
they use, and the tests import, are in tests/helpers.py).

Each test gets new databases of its own. PostgreSQL tests create a database with a unique
name, dropped after the test in the background (the session waits for every drop at its end).
Without a server they skip with the reason; under CI=true a missing server fails the run
instead.

The databases are empty (no file yet, on SQLite), as a user's first `etl run` finds them. A
test or module marked `migrated` (`pytestmark = pytest.mark.migrated`) gets them already at
the newest revision instead, as a first run leaves them before it loads: a copy of a template
migrated once a session, which is much faster than migrating each. That is for tests of what
loads and reads do; tests of migrations, of first runs (two loaders that start together, a
run's memory) and of grants on a new database keep empty ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import BACKENDS, DROPPER, SEEDS, fresh_database, load


def _migrated(request: pytest.FixtureRequest) -> bool:
    """Whether the requesting test (or its module) is marked `migrated`."""
    return request.node.get_closest_marker("migrated") is not None


@pytest.fixture(scope="session", autouse=True)
def _drop_databases_at_the_end() -> Iterator[None]:
    """Wait for the background drops of the session's databases; fail if one failed."""
    yield
    DROPPER.finish()


@pytest.fixture
def postgres_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new PostgreSQL database, dropped after the test."""
    with fresh_database("postgresql", tmp_path, migrated=_migrated(request)) as url:
        yield url


@pytest.fixture
def sqlite_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A SQLite file under the test's temporary folder (created by the code under test, unless
    the test is marked `migrated`)."""
    with fresh_database("sqlite", tmp_path, migrated=_migrated(request)) as url:
        yield url


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new database on each backend in turn: a SQLite file, a PostgreSQL database."""
    with fresh_database(request.param, tmp_path, migrated=_migrated(request)) as url:
        yield url


@pytest.fixture(scope="module", params=BACKENDS)
def seeded_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database per backend holding the seed lists, shared by a module's read-only tests."""
    with fresh_database(request.param, tmp_path_factory.mktemp("seeded"), migrated=True) as url:
        load(url, SEEDS)
        yield url


@pytest.fixture(scope="session")
def seeds() -> Path:
    """The project's seed folder (the two ICML 2025 lists)."""
    return SEEDS

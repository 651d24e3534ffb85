"""The read-only role for BI users, against the real PostgreSQL server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from etl.admin import grant_read_only
from etl.errors import DatabaseError
from tests.helpers import POSTGRES_ADMIN_URL, SEEDS, load

pytestmark = pytest.mark.postgres


@pytest.fixture
def reader_role(postgres_url: str) -> Iterator[str]:
    """A read-only role name, dropped (with what it owns and was granted) afterwards."""
    role = f"etl_reader_{uuid.uuid4().hex[:8]}"
    yield role
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP OWNED BY "{role}"'))
    admin.dispose()
    server = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
    server.dispose()


@pytest.mark.migrated
def test_read_only_role_reads_views_and_cannot_write(postgres_url: str, reader_role: str) -> None:
    load(postgres_url, SEEDS)
    engine = create_engine(postgres_url)
    assert grant_read_only(engine, reader_role, "s3cret").created is True
    again = grant_read_only(engine, reader_role, "s3cret")  # idempotent
    assert again.created is False and again.changes == [f"set the password of {reader_role}"]
    engine.dispose()
    as_reader = make_url(postgres_url).set(username=reader_role, password="s3cret")
    reader = create_engine(as_reader, poolclass=NullPool)  # a new session per statement
    try:
        with reader.connect() as connection:
            assert (
                connection.scalar(text("SELECT count(DISTINCT paper_id) FROM papers_with_code"))
                == 10
            )
        for statement in [
            "INSERT INTO topics (slug, name) VALUES ('x', 'x')",
            "UPDATE papers SET title = 'x'",
            "DELETE FROM papers",
            "CREATE TABLE scratch (x int)",
        ]:
            with reader.connect() as connection:
                autocommit = connection.execution_options(isolation_level="AUTOCOMMIT")
                with pytest.raises(DBAPIError, match="read-only transaction"):
                    autocommit.execute(text(statement))
                # The role's sessions default to read-only; switched off, the grants still refuse.
                autocommit.execute(text("SET default_transaction_read_only = off"))
                with pytest.raises(DBAPIError, match="permission denied"):
                    autocommit.execute(text(statement))
    finally:
        reader.dispose()


def test_role_command_refuses_sqlite_and_bad_names(tmp_path: object, postgres_url: str) -> None:
    sqlite_engine = create_engine("sqlite://")
    with pytest.raises(DatabaseError, match="PostgreSQL feature"):
        grant_read_only(sqlite_engine, "reader")
    engine = create_engine(postgres_url)
    with pytest.raises(DatabaseError, match="role names"):
        grant_read_only(engine, 'x"; DROP TABLE papers; --')
    engine.dispose()

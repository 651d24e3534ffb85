"""Alembic is the only way the schema comes to exist; `alembic upgrade head` equals `etl run`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from etl.load.schema import include_object, metadata
from tests.conftest import REPO, load

sys_alembic = [sys.executable, "-m", "alembic"]


def alembic(url: str, *args: str) -> None:
    env = {**os.environ, "ETL_DATABASE_URL": url}
    subprocess.run([*sys_alembic, *args], cwd=REPO, env=env, check=True, capture_output=True)


def schema(url: str) -> dict[str, object]:
    """Tables, views and their columns, as the database reports them."""
    engine = create_engine(url)
    try:
        inspector = inspect(engine)
        names = sorted(inspector.get_table_names()) + sorted(inspector.get_view_names())
        return {
            name: sorted((c["name"], str(c["type"])) for c in inspector.get_columns(name))
            for name in names
        }
    finally:
        engine.dispose()


def test_alembic_upgrade_head_creates_the_schema_etl_run_creates(
    db_url: str, tmp_path: Path, seeds: Path
) -> None:
    if db_url.startswith("sqlite"):
        by_etl = f"sqlite:///{tmp_path / 'by_etl.db'}"
        load(by_etl, seeds)
        alembic(db_url, "upgrade", "head")
        assert schema(db_url) == schema(by_etl)
    else:
        alembic(db_url, "upgrade", "head")
        migrated = schema(db_url)
        load(db_url, seeds)  # etl run on the migrated database adds nothing to the schema
        assert schema(db_url) == migrated
    assert {"papers_with_code", "paper_overview", "papers"} <= set(schema(db_url))


def test_downgrade_to_base_and_upgrade_again(db_url: str) -> None:
    alembic(db_url, "upgrade", "head")
    alembic(db_url, "downgrade", "base")
    assert set(schema(db_url)) <= {"alembic_version"}
    alembic(db_url, "upgrade", "head")
    assert "papers_with_code" in schema(db_url)


def test_migrations_match_the_schema_definition(db_url: str) -> None:
    alembic(db_url, "upgrade", "head")
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection,
                opts={"include_object": include_object, "compare_type": True},
            )
            assert compare_metadata(context, metadata) == []
    finally:
        engine.dispose()

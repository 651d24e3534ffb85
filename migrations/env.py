"""Alembic environment: target metadata is etl.load.schema; the URL resolves as for `etl`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from etl.config import resolve_database_url
from etl.load.database import create_db_engine
from etl.load.schema import include_object, metadata

config = context.config


def run_with(connection: Connection) -> None:
    """Run the migrations on an open connection, in one transaction."""
    context.configure(
        connection=connection,
        target_metadata=metadata,
        include_object=include_object,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Use the caller's connection (etl) or open one from -x db=URL / ETL_DATABASE_URL."""
    given = config.attributes.get("connection")
    if given is not None:
        run_with(given)
        return
    url = context.get_x_argument(as_dictionary=True).get("db") or config.get_main_option(
        "sqlalchemy.url"
    )
    engine = create_db_engine(resolve_database_url(url))
    with engine.connect() as connection:
        run_with(connection)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) mode is not supported: run against a database")
run_migrations_online()

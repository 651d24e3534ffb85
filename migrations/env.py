"""Alembic environment: target metadata is etl.load.schema; the URL resolves as for `etl`.

The packaged views (sql/views/) are repeatable, like Flyway's `R__` migrations: their files
always hold the current version, which reads the newest tables. So versioned migrations that
change a table the views read drop the views, and once an upgrade reaches the head revision
they are created again from the files.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from etl.config import resolve_database_url
from etl.load.database import create_db_engine, recreate_views
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
        before = context.get_context().get_current_heads()
        context.run_migrations()
        after = context.get_context().get_current_heads()
        if after != before and set(after) == set(context.script.get_heads()):
            recreate_views(connection)


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
    with engine.begin() as connection:  # one transaction, committed at the end
        run_with(connection)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) mode is not supported: run against a database")
run_migrations_online()

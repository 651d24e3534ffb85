"""Database administration for BI users: a read-only role on PostgreSQL."""

from __future__ import annotations

import re

from sqlalchemy import Engine, text

from etl.errors import DatabaseError
from etl.load.database import split_statements, sql_dir

ROLE_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def quote_identifier(name: str) -> str:
    """A double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """A single-quoted SQL string literal (role DDL takes no bound parameters)."""
    return "'" + value.replace("'", "''") + "'"


def grant_read_only(engine: Engine, role: str, password: str | None = None) -> bool:
    """Create or update a role that can read every table and view and change nothing.

    Returns True when the role was created, False when it existed and was updated.
    """
    if engine.dialect.name != "postgresql":
        raise DatabaseError(
            "read-only roles are a PostgreSQL feature; for SQLite, give BI tools the file "
            "read-only (e.g. `datasette papers.db`, or `sqlite3 -readonly papers.db`)"
        )
    if not ROLE_NAME_RE.match(role):
        raise DatabaseError(f"role names are lowercase letters, digits and _ (got {role!r})")
    with engine.begin() as connection:
        exists = connection.scalar(text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role})
        login = "LOGIN" + (f" PASSWORD {quote_literal(password)}" if password else "")
        verb = "ALTER" if exists else "CREATE"
        connection.exec_driver_sql(
            f"{verb} ROLE {quote_identifier(role)} {login} NOSUPERUSER NOCREATEDB NOCREATEROLE"
        )
        names = {
            ":database": quote_identifier(
                str(connection.scalar(text("SELECT current_database()")))
            ),
            ":schema": quote_identifier(str(connection.scalar(text("SELECT current_schema()")))),
            ":role": quote_identifier(role),
        }
        template = sql_dir().joinpath("postgresql", "read_only_role.sql").read_text("utf-8")
        for statement in split_statements(template):
            connection.exec_driver_sql(
                re.sub(r":(database|schema|role)\b", lambda m: names[m.group(0)], statement)
            )
    return not exists

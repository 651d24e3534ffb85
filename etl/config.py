"""Where the database is: `--db`, else ETL_DATABASE_URL, else sqlite:///papers.db here.

SQLAlchemy is imported only when a URL is parsed: the CLI imports this module, and the
transform's worker processes import the CLI (see etl/cli.py), so it stays light.
"""

from __future__ import annotations

import os

from etl.errors import DatabaseError

DEFAULT_DATABASE_URL = "sqlite:///papers.db"
ENV_VAR = "ETL_DATABASE_URL"


def resolve_database_url(given: str | None = None) -> str:
    """The database URL to use, with `postgresql://` mapped to the psycopg 3 driver."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    url = given or os.environ.get(ENV_VAR) or DEFAULT_DATABASE_URL
    if "://" not in url and not url.startswith("sqlite:"):
        url = f"sqlite:///{url}"  # a bare file path
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseError(f"not a database URL: {mask_url(url)}") from exc
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in {"sqlite", "postgresql"}:
        raise DatabaseError(
            f"unsupported database {parsed.get_backend_name()!r}: use sqlite:///FILE "
            "or postgresql+psycopg://USER@HOST/DB"
        )
    return parsed.render_as_string(hide_password=False)


def mask_url(url: str) -> str:
    """The URL with any password replaced by ***, for messages and logs."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable database URL>"

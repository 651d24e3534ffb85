"""Read commands: search, read-only SQL, stats and the list of views."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError

from etl.errors import DatabaseError, QueryError
from etl.load.database import create_db_engine, sql_dir, view_definitions

QUERY_TOKEN_RE = re.compile(r'(-?)"([^"]*)"?|(\S+)')


@dataclass(frozen=True)
class Rows:
    """A result: column names and rows of plain values."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


def open_reader(url: str) -> Engine:
    """An engine for reading: SQLite opened read-only; the database must exist and be loaded."""
    engine = create_db_engine(url, read_only=True)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1 FROM papers LIMIT 1"))
    except (OperationalError, ProgrammingError) as exc:
        engine.dispose()
        raise DatabaseError("the database has no papers table: run `etl run` first") from exc
    return engine


def to_fts5_query(query: str) -> str:
    """A user's search as a safe FTS5 query: words and "phrases" ANDed, OR kept, -word excluded.

    Every word is quoted, so FTS5 syntax characters (`-`, `:`, `*`, `NEAR(`) are literal text,
    the same rules as PostgreSQL's websearch_to_tsquery.
    """
    positive: list[str] = []
    negative: list[str] = []
    for match in QUERY_TOKEN_RE.finditer(query):
        minus, phrase, word = match.groups()
        if word is not None and word.upper() == "OR":
            if positive and positive[-1] != "OR":
                positive.append("OR")
            continue
        if word is not None and word.startswith("-") and len(word) > 1:
            minus, word = "-", word[1:]
        term = phrase if phrase is not None else word
        if not term or not re.search(r"\w", term):
            continue
        quoted = '"' + term.replace('"', '""') + '"'
        (negative if minus else positive).append(quoted)
    while positive and positive[-1] == "OR":
        positive.pop()
    if not positive:
        raise QueryError("the search has no words to look for")
    expression = " ".join(positive)
    for term in negative:
        expression = f"({expression}) NOT {term}"
    return expression


def search(engine: Engine, query: str, limit: int = 10) -> Rows:
    """Papers matching a query, best first, with a highlighted snippet."""
    dialect = engine.dialect.name
    sql = _search_sql(dialect)
    bound = to_fts5_query(query) if dialect == "sqlite" else _check_words(query)
    with engine.connect() as connection:
        try:
            result = connection.execute(text(sql), {"query": bound, "limit": limit})
        except DBAPIError as exc:
            raise QueryError(f"cannot search for {query!r}: {exc.orig}") from exc
        return Rows(tuple(result.keys()), tuple(tuple(r) for r in result))


@cache
def _search_sql(dialect: str) -> str:
    """The search statement for a dialect (read once per process)."""
    return sql_dir().joinpath("queries", f"search.{dialect}.sql").read_text("utf-8")


def _check_words(query: str) -> str:
    if not re.search(r"\w", query):
        raise QueryError("the search has no words to look for")
    return query


def run_query(engine: Engine, sql: str) -> Rows:
    """Run one read-only statement: writes and DDL fail in a read-only transaction."""
    with engine.connect() as connection:
        try:
            _read_only(connection)
            result = connection.execute(text(sql.strip().rstrip(";")))
            if not result.returns_rows:
                raise QueryError("the statement returns no rows; `etl query` only reads")
            rows = Rows(tuple(result.keys()), tuple(tuple(r) for r in result))
        except DBAPIError as exc:
            raise QueryError(_query_message(exc)) from exc
        finally:
            connection.rollback()
    return rows


def _read_only(connection: Connection) -> None:
    """Make the transaction read-only on the server side too."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SET TRANSACTION READ ONLY"))
    else:
        connection.execute(text("PRAGMA query_only = ON"))


def _query_message(exc: DBAPIError) -> str:
    message = str(exc.orig).strip().splitlines()[0]
    if re.search(r"read-?only|readonly|query_only", message, re.I):
        return f"`etl query` is read-only: {message}"
    return message


def stats(engine: Engine) -> dict[str, Rows]:
    """Counts per table, per venue and per topic, and the last run."""
    tables = (
        "papers",
        "sources",
        "authors",
        "links",
        "methods",
        "acronyms",
        "topics",
        "rejects",
        "runs",
    )
    with engine.connect() as connection:
        counts = tuple(
            (name, connection.scalar(text(f"SELECT count(*) FROM {name}"))) for name in tables
        )
        venues = connection.execute(
            text(
                "SELECT venue, year, papers, papers_with_code FROM venue_summary "
                "ORDER BY venue, year"
            )
        )
        venue_rows = Rows(tuple(venues.keys()), tuple(tuple(r) for r in venues))
        topics = connection.execute(
            text(
                "SELECT topic, parent, papers, papers_with_code FROM topic_summary "
                "WHERE papers > 0 ORDER BY papers DESC, topic LIMIT 20"
            )
        )
        topic_rows = Rows(tuple(topics.keys()), tuple(tuple(r) for r in topics))
        last = connection.execute(
            text(
                "SELECT id, status, started_at, papers_inserted, papers_updated, papers_unchanged, "
                "rejects, seconds FROM runs ORDER BY id DESC LIMIT 1"
            )
        )
        last_rows = Rows(tuple(last.keys()), tuple(tuple(r) for r in last))
    return {
        "tables": Rows(("table", "rows"), counts),
        "venues": venue_rows,
        "topics": topic_rows,
        "last run": last_rows,
    }


def views(dialect: str = "sqlite") -> Rows:
    """The packaged views with their one-line descriptions."""
    return Rows(
        ("view", "description"), tuple((v.name, v.description) for v in view_definitions(dialect))
    )

"""`etl serve`: the database in Datasette, read-only, described from the project's own sources.

Titles and descriptions come from where the PostgreSQL `COMMENT`s come from: the header
comments of `sql/views/*.sql` and the `comment=` of the tables in `etl/load/schema.py`.
Canned queries are the files of `sql/datasette/`; a paper's page and the query page's title
are templates of `etl/data/datasette/`, fed by etl/datasette_plugin.py and the queries of
`sql/paper/`. Datasette is an optional dependency
(`pip install ".[serve]"`) and reads SQLite only.
"""

from __future__ import annotations

import html
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etl.errors import DatabaseError, EtlError
from etl.load.database import ViewDefinition, package_dir, sql_dir, view_definitions
from etl.load.schema import metadata as schema_metadata

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001
# The order the database page lists the packaged views in: the everyday ones first.
FEATURED = (
    "papers_with_code",
    "paper_overview",
    "method_index",
    "acronym_glossary",
    "topic_summary",
    "venue_summary",
    "paper_labels",
)
FACETS = {
    "papers": ["venue", "year", "status"],
    "papers_with_code": ["venue", "year", "code_host"],
    "paper_overview": ["venue", "year"],
    "method_index": ["kind", "role"],  # each facet is a GROUP BY over the whole join
    "acronym_glossary": ["acronym", "venue"],
    "venue_summary": ["venue", "status"],
    "paper_topics": ["topic_slug"],
    "links": ["kind", "host"],
}
# Datasette suggests facets by trying a GROUP BY on every column of every page it shows, which
# made large tables slow to page through (benchmarks/HISTORY.md).
SETTINGS = {"suggest_facets": False}
LABEL_COLUMNS = {
    "papers": "title",
    "topics": "name",
    "methods": "name",
    "links": "url",
    "authors": "name",
    "sources": "path",
    "runs": "status",
}


@dataclass(frozen=True)
class CannedQuery:
    """A query file of sql/datasette/: its name, title, description and SQL."""

    name: str
    title: str
    description: str
    sql: str


def canned_queries() -> list[CannedQuery]:
    """The packaged queries: comment line 1 is the title, line 2 the description, others notes."""
    queries = []
    for path in sorted(sql_dir().joinpath("datasette").glob("*.sql")):
        text = path.read_text("utf-8")
        comments = [line[2:].strip() for line in text.splitlines() if line.startswith("--")]
        body = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
        title = comments[0] if comments else path.stem
        description = comments[1] if len(comments) > 1 else ""
        queries.append(CannedQuery(path.stem, title, description, body.strip()))
    return queries


def _title(name: str) -> str:
    """A view or table name as a heading: papers_with_code -> Papers with code."""
    return name.replace("_", " ").capitalize()


def datasette_metadata(database: str) -> dict[str, Any]:
    """Datasette metadata for a database: views first, tables, facets, search, queries."""
    tables: dict[str, Any] = {}
    views = view_definitions("sqlite")
    for view in views:
        tables[view.name] = {
            "title": _title(view.name),
            "description": view.description,
            "columns": dict(view.column_comments),
        }
    for table in schema_metadata.sorted_tables:
        entry: dict[str, Any] = {"title": _title(table.name)}
        if table.comment:
            entry["description"] = table.comment
        columns = {c.name: c.comment for c in table.columns if c.comment}
        if columns:
            entry["columns"] = columns
        tables[table.name] = entry
    for name, facets in FACETS.items():
        tables[name]["facets"] = facets
    for name, column in LABEL_COLUMNS.items():
        tables[name]["label_column"] = column
    # The FTS5 table names its content table as content='papers', which Datasette does not
    # recognise; without this its search box on papers would silently return every row.
    tables["papers"].update({"fts_table": "papers_fts", "fts_pk": "pk"})
    queries: dict[str, dict[str, Any]] = {
        q.name: {"sql": q.sql, "title": q.title, "description": q.description}
        for q in canned_queries()
    }
    queries["ranked_search"]["hide_sql"] = True  # a search box, not an SQL lesson
    return {
        "title": "Paper lists",
        "description": "Conference papers, their code, methods, acronyms and topics.",
        "databases": {
            database: {
                "description_html": _views_first_html(database, views, queries),
                "tables": tables,
                "queries": queries,
            }
        },
    }


def _views_first_html(database: str, views: list[ViewDefinition], queries: dict[str, Any]) -> str:
    """The database page's introduction: the packaged views and queries, before the tables."""
    from datasette.utils import tilde_encode  # Datasette's own escaping of names in URLs

    base = "/" + tilde_encode(database)
    ordered = sorted(views, key=lambda v: FEATURED.index(v.name) if v.name in FEATURED else 99)
    items = "".join(
        f'<li><a href="{base}/{tilde_encode(v.name)}">'
        f"<strong>{html.escape(_title(v.name))}</strong></a> "
        f"({html.escape(v.name)}): {html.escape(v.description)}</li>"
        for v in ordered
    )
    asks = "".join(
        f'<li><a href="{base}/{tilde_encode(name)}">{html.escape(q["title"])}</a>: '
        f"{html.escape(q['description'])}</li>"
        for name, q in queries.items()
    )
    return (
        f'<p>Start with the packaged views:</p><ul class="etl-views">{items}</ul>'
        f'<p>Ready-made questions:</p><ul class="etl-queries">{asks}</ul>'
    )


def sqlite_path(url: str) -> Path:
    """The file of a SQLite URL; anything else is refused with the reason."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        raise DatabaseError(
            "etl serve supports SQLite only (Datasette reads SQLite files): "
            "for PostgreSQL use `etl report`, psql or a BI tool"
        )
    database = parsed.database
    if not database or database == ":memory:" or not Path(database).is_file():
        raise DatabaseError(f"no database at {url}: run `etl run` first")
    return Path(database).resolve()


def check_database(path: Path) -> None:
    """Refuse a file that is not a loaded etl database, or one whose views predate this etl."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
            names = {
                row[0]
                for row in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
                )
            }
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot read {path}: {exc}") from exc
    if "papers" not in names:
        raise DatabaseError(f"{path} has no papers table: run `etl run` first")
    missing = [v.name for v in view_definitions("sqlite") if v.name not in names]
    if missing:
        raise DatabaseError(
            f"{path} lacks the views {', '.join(missing)}: run `etl run` once to create them"
        )


def build_datasette(path: Path) -> Any:
    """A Datasette instance serving one database file read-only, with our metadata and plugin.

    The file is opened read-only (`mode=ro`), never immutable: immutable promises SQLite the
    file never changes, which is false next to a load (pages then read stale or torn
    content). Read-only, each query reads the last committed state, as any WAL reader does.
    """
    try:
        from datasette.app import Datasette
    except ImportError as exc:
        raise EtlError('etl serve needs Datasette: pip install ".[serve]"') from exc
    check_database(path)
    datasette = Datasette(
        files=[str(path)],
        metadata=datasette_metadata(path.stem),
        settings=SETTINGS,
        template_dir=str(package_dir("etl.data", "etl/data") / "datasette"),
    )
    from datasette.plugins import pm

    from etl import datasette_plugin

    if pm.get_plugin("etl") is None:  # Datasette's plugin manager is one per process
        pm.register(datasette_plugin, name="etl")
    return datasette


def serve(url: str, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve a SQLite database in Datasette until interrupted."""
    import uvicorn

    datasette = build_datasette(sqlite_path(url))
    uvicorn.run(datasette.app(), host=host, port=port, log_level="warning")

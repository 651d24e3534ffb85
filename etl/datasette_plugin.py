"""Datasette hooks for `etl serve`: the search function, labels for untitled papers, snippets.

Imported only when Datasette is installed (etl/serve.py checks first).
"""

from __future__ import annotations

import re
from typing import Any

from datasette import hookimpl
from markupsafe import Markup, escape

from etl.config import busy_timeout_seconds
from etl.errors import QueryError
from etl.read import to_fts5_query

HIGHLIGHT_RE = re.compile(r"\*\*(.+?)\*\*")


def fts_query(query: str | None) -> str:
    """`etl search`'s rules for an FTS5 query; a search with no words matches nothing."""
    try:
        return to_fts5_query(query or "")
    except QueryError:
        return '""'


@hookimpl  # type: ignore[untyped-decorator]
def prepare_connection(conn: Any) -> None:
    """Register etl_fts_query(text) for the ranked-search query; wait for a writer's lock
    (a load switching journal modes, a checkpoint) instead of failing the page at once."""
    conn.create_function("etl_fts_query", 1, fts_query, deterministic=True)
    conn.execute(f"PRAGMA busy_timeout = {round(busy_timeout_seconds() * 1000)}")


@hookimpl  # type: ignore[untyped-decorator]
def render_cell(
    row: Any, value: Any, column: str, table: str | None, database: str, datasette: Any
) -> Any:
    """Snippets with <mark>; an untitled paper's label where its title would be blank."""
    if column == "snippet" and table is None and isinstance(value, str):
        # Escaped first: only the markers the query added become markup.
        return Markup(HIGHLIGHT_RE.sub(r"<mark>\1</mark>", str(escape(value))))
    if column == "title" and not str(value or "").strip():
        if table == "papers":
            return _label_cell(datasette, database, row["pk"], link=False)
        # A packaged view has a label column. (sqlite3.Row: `in` would test its values.)
        if "label" in row.keys():  # noqa: SIM118
            return Markup(f'<span class="etl-label">{escape(row["label"])}</span>')
    if (
        column == "paper_pk"
        and isinstance(value, dict)
        and not str(value.get("label") or "").strip()
    ):
        return _label_cell(datasette, database, value["value"], link=True)
    return None


def _label_cell(datasette: Any, database: str, pk: Any, *, link: bool) -> Any:
    """An awaitable cell showing paper_labels' label for a paper (by papers.pk)."""

    async def inner() -> Any:
        result = await datasette.get_database(database).execute(
            "SELECT label FROM paper_labels WHERE paper_pk = :pk", {"pk": pk}
        )
        row = result.first()
        if row is None:
            return None
        label = escape(row[0])
        if not link:
            return Markup(f'<span class="etl-label">{label}</span>')
        href = escape(datasette.urls.row(database, "papers", str(pk)))
        return Markup(f'<a href="{href}">{escape(pk)}</a>&nbsp;<em class="etl-label">{label}</em>')

    return inner

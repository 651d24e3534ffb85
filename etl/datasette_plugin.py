"""Datasette hooks for `etl serve`: the search function, labels for untitled papers, snippets,
and what a paper's page shows (etl/data/datasette/row.html).

Imported only when Datasette is installed (etl/serve.py checks first).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any
from urllib.parse import quote, urlencode

from datasette import hookimpl
from datasette.utils import urlsafe_components
from markupsafe import Markup, escape

from etl.config import busy_timeout_seconds
from etl.errors import QueryError
from etl.load.database import sql_dir
from etl.read import to_fts5_query

HIGHLIGHT_RE = re.compile(r"\*\*(.+?)\*\*")
# What a paper page reads: sql/paper/NAME.sql, each taking the paper's row number (:pk).
PAPER_PARTS = (
    "sightings",
    "authors",
    "links",
    "ids",
    "methods",
    "topics",
    "tasks",
    "acronyms",
    "references",
    "citers",
)
ROLE_HEADINGS = {
    "introduced": "introduces",
    "mentioned": "mentions",
    "listed": "lists (its source)",
}
# Ids a source gives, as pages a reader can open.
ID_PAGES = {
    "doi": "https://doi.org/{}",
    "arxiv": "https://arxiv.org/abs/{}",
    "openreview": "https://openreview.net/forum?id={}",
    "openalex": "https://openalex.org/{}",
    "dblp": "https://dblp.org/rec/{}",
    "s2": "https://www.semanticscholar.org/paper/{}",
    "pwc": "https://paperswithcode.com/paper/{}",
}


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


@hookimpl  # type: ignore[untyped-decorator]
def extra_template_vars(
    template: str, database: str | None, table: str | None, request: Any, datasette: Any
) -> Any:
    """A paper's page reads, besides its row, what a reader wants of it (`etl_paper`)."""
    if template != "row.html" or table != "papers" or request is None or database is None:
        return None

    async def inner() -> dict[str, Any]:
        pks = urlsafe_components(request.url_vars.get("pks", ""))
        if len(pks) != 1 or not pks[0].isdigit():
            return {}
        paper = await paper_page(datasette, database, int(pks[0]))
        return {"etl_paper": paper} if paper else {}

    return inner


async def paper_page(datasette: Any, database: str, pk: int) -> dict[str, Any] | None:
    """Everything a paper's page shows, read by the queries of sql/paper/."""
    db = datasette.get_database(database)
    found = (await db.execute(_paper_sql("paper"), {"pk": pk})).first()
    if found is None:
        return None
    paper = dict(found)
    parts = {
        name: [dict(r) for r in await db.execute(_paper_sql(name), {"pk": pk})]
        for name in PAPER_PARTS
    }
    base = datasette.urls.database(database)  # honours Datasette's base_url
    for author in parts["authors"]:
        author["homepage_href"] = _web_link(author["homepage"])
        author["href"] = f"{base}/authors/{author['id']}"
    for link in parts["links"]:
        link["href"] = _web_link(link["url"])
    for cited in parts["references"]:
        cited.update(_cited_link(cited, base))
    for citer in parts["citers"]:
        citer["href"] = f"{base}/papers/{citer['pk']}"
    query = sql_dir().joinpath("queries", "related.sql").read_text("utf-8")
    related = [dict(r) for r in await db.execute(query, {"pk": pk, "limit": 10})]
    for other in related:
        other["href"] = f"{base}/papers/{other['related_pk']}"
    for sighting in parts["sightings"]:
        sighting["file"] = PurePath(sighting["path"]).name
        sighting["place"] = f"position {sighting['position']}"
    paper.update(
        sightings=parts["sightings"],
        authors=parts["authors"],
        links=parts["links"],
        ids=_ids(parts["ids"], {link["url"] for link in parts["links"]}),
        methods=_by_role(parts["methods"], base),
        topics=parts["topics"],
        tasks=parts["tasks"],
        acronyms=parts["acronyms"],
        references=parts["references"],
        citers=parts["citers"],
        related=related,
        sharing_tasks_href=f"{base}/papers_sharing_tasks?" + urlencode({"paper_id": paper["id"]}),
    )
    return paper


def _paper_sql(name: str) -> str:
    """The text of sql/paper/NAME.sql."""
    return sql_dir().joinpath("paper", f"{name}.sql").read_text("utf-8")


def _web_link(url: str | None) -> str | None:
    """A URL a page may link to: http(s) only (a stored value is never made a script link)."""
    return url if url and url.lower().startswith(("https://", "http://")) else None


def _ids(rows: list[dict[str, Any]], shown: set[str]) -> list[dict[str, str | None]]:
    """The paper's ids with the pages that show them, but those its links already name."""
    ids = [_id_link(row["key"]) for row in rows]
    return [i for i in ids if i["href"] is None or i["href"] not in shown]


def _id_link(key: str) -> dict[str, str | None]:
    """An identity key (`doi:10.1/x`) as a kind, a value and the page that shows it."""
    kind, _, value = key.partition(":")
    page = ID_PAGES.get(kind)
    return {
        "kind": kind,
        "value": value,
        "href": page.format(quote(value, safe="/:.")) if page else None,
    }


def _cited_link(cited: dict[str, Any], base: str) -> dict[str, str | None]:
    """What a reference shows: the cited paper's page and label, else its id with the page
    that shows it, else the reference's text."""
    if cited["pk"] is not None:
        return {"href": f"{base}/papers/{cited['pk']}", "shown": cited["label"]}
    if cited["raw"] is not None:
        return {"href": None, "shown": cited["raw"]}
    found = _id_link(cited["key"])
    return {"href": found["href"], "shown": f"{found['kind']}: {found['value']}"}


def _by_role(methods: list[dict[str, Any]], base: str) -> list[dict[str, Any]]:
    """Methods grouped by role (introduced, mentioned, listed), each linking to the papers that
    name it (`method_index`)."""
    groups: list[dict[str, Any]] = []
    for role, heading in ROLE_HEADINGS.items():
        named = [dict(m) for m in methods if m["role"] == role]
        for method in named:
            method["href"] = f"{base}/method_index?" + urlencode({"method": method["name"]})
        if named:
            groups.append({"role": role, "heading": heading, "methods": named})
    return groups

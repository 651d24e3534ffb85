"""`etl related PAPER`: the papers related to one paper, scored as the `related_papers` view
scores them, each with why: it cites or is cited by the paper, the works both cite, the
papers citing both, the methods and tasks they share. The query (sql/queries/related.sql)
starts from the one paper's rows: the view, which a BI tool reads whole, computes every
pair first.

A paper is named by its id, a DOI or arXiv id (any form the identity rules read: a URL,
`doi:` or `arXiv:` prefixes, a version), else its label (title), compared without case.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, text
from sqlalchemy.exc import DBAPIError

from etl.errors import QueryError
from etl.failures import describe
from etl.load.database import sql_dir
from etl.read import Rows, reader_of
from etl.transform.ids import source_keys

COUNTS = (
    "cites",
    "cited_by",
    "shared_references",
    "co_citations",
    "shared_methods",
    "shared_tasks",
)
# Kinds of id a paper may be named by, as the identity rules read them.
ID_KINDS = ("doi", "arxiv", "openalex", "s2", "dblp", "openreview")
COLUMNS = (
    "rank",
    "related_paper_id",
    "related_label",
    "related_venue",
    "related_year",
    "score",
    "why",
    *COUNTS,
)
MOST = 10  # the view keeps the ten best per paper
# Methods both papers name, one of them introducing it (as the view counts them).
SHARED_METHODS = """
SELECT DISTINCT o.paper_pk, m.name
FROM paper_methods AS x
JOIN paper_methods AS o ON o.method_id = x.method_id AND o.paper_pk <> x.paper_pk
JOIN methods AS m ON m.id = x.method_id
WHERE x.paper_pk = :pk AND (x.role = 'introduced' OR o.role = 'introduced')
ORDER BY m.name
"""
SHARED_TASKS = """
SELECT y.paper_pk, x.task_name
FROM paper_tasks AS x
JOIN paper_tasks AS y ON y.task_name = x.task_name AND y.paper_pk <> x.paper_pk
WHERE x.paper_pk = :pk
ORDER BY x.task_name
"""


def related(engine: Engine, given: str, limit: int = MOST) -> tuple[str, Rows]:
    """The paper's label, and its related papers best first with why."""
    with engine.connect() as connection:
        try:
            reader_of(engine).short_queries(connection)
            pk, _, label = find_paper(connection, given)
            found = connection.execute(text(_related_sql()), {"pk": pk, "limit": limit}).all()
            methods = _by_paper(connection, SHARED_METHODS, pk)
            tasks = _by_paper(connection, SHARED_TASKS, pk)
        except DBAPIError as exc:
            raise describe(exc, str(engine.url)) from exc
    rows = []
    for rank, related_id, related_label, venue, year, score, other, *counts in found:
        values = dict(zip(COUNTS, counts, strict=True))
        why = reasons(values, methods.get(other, []), tasks.get(other, []))
        rows.append((rank, related_id, related_label, venue, year, score, why, *counts))
    return label, Rows(COLUMNS, tuple(rows))


@cache
def _related_sql() -> str:
    """The per-paper query (read once per process)."""
    return sql_dir().joinpath("queries", "related.sql").read_text("utf-8")


def reasons(counts: dict[str, Any], methods: list[str], tasks: list[str]) -> str:
    """Why two papers are related, in words."""
    said = []
    if counts["cites"]:
        said.append("this paper cites it")
    if counts["cited_by"]:
        said.append("it cites this paper")
    if n := counts["shared_references"]:
        said.append(f"{n} shared reference{'s' if n != 1 else ''}")
    if n := counts["co_citations"]:
        said.append(f"cited together by {n} paper{'s' if n != 1 else ''}")
    if counts["shared_methods"] and methods:
        said.append("methods: " + ", ".join(methods))
    if counts["shared_tasks"] and tasks:
        said.append("tasks: " + ", ".join(tasks))
    return "; ".join(said)


def find_paper(connection: Connection, given: str) -> tuple[int, str, str]:
    """(pk, id, label) of the paper an id, DOI, arXiv id or label names."""
    wanted = given.strip()
    query = (
        "SELECT DISTINCT p.pk, p.id, l.label FROM papers AS p "
        "JOIN paper_labels AS l ON l.paper_pk = p.pk "
    )
    found = connection.execute(text(query + "WHERE p.id = :v"), {"v": wanted}).all()
    keys = source_keys((kind, wanted) for kind in ID_KINDS)
    if not found and keys:
        found = connection.execute(
            text(
                query + "JOIN paper_keys AS k ON k.paper_pk = p.pk WHERE k.key IN :keys "
                "ORDER BY p.id"
            ).bindparams(bindparam("keys", expanding=True)),
            {"keys": keys},
        ).all()
    if not found:
        found = connection.execute(
            text(query + "WHERE lower(l.label) = lower(:v) ORDER BY p.id"), {"v": wanted}
        ).all()
    if not found:
        raise QueryError(f"no paper has the id, DOI, arXiv id or title {given!r}")
    if len(found) > 1:
        ids = ", ".join(row[1] for row in found[:5])
        raise QueryError(f"{len(found)} papers match {given!r} ({ids}): give an id")
    pk, paper_id, label = found[0]
    return int(pk), str(paper_id), str(label)


def _by_paper(connection: Connection, sql: str, pk: int) -> dict[int, list[str]]:
    """Names by the other paper's pk."""
    found: dict[int, list[str]] = {}
    for other, name in connection.execute(text(sql), {"pk": pk}):
        found.setdefault(other, []).append(name)
    return found

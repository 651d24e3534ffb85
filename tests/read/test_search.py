"""Search on both backends: ranking, markup-hidden names, and queries that are not FTS syntax."""

from __future__ import annotations

import pytest

from etl.errors import QueryError
from etl.read import open_reader, search, to_fts5_query
from tests.helpers import fetch_one


def abstract_of(url: str, paper_id: object) -> str:
    return str(fetch_one(url, "SELECT abstract FROM papers WHERE id = :id", {"id": paper_id}))


def test_kv_cache_finds_commvq_first_with_a_highlighted_snippet(seeded_url: str) -> None:
    engine = open_reader(seeded_url)
    result = search(engine, "KV cache", 5)
    engine.dispose()
    assert result.columns == ("paper_id", "venue", "year", "title", "snippet", "score", "label")
    first = result.rows[0]
    assert "CommVQ" in abstract_of(seeded_url, first[0])
    assert "**" in str(first[4])
    scores = [float(r[5]) for r in result.rows]
    assert scores == sorted(scores, reverse=True)


def test_a_name_written_only_in_latex_is_searchable(seeded_url: str) -> None:
    engine = open_reader(seeded_url)
    result = search(engine, "PDI-CP", 5)
    engine.dispose()
    assert len(result.rows) == 1
    assert "PDI-CP" in abstract_of(seeded_url, result.rows[0][0])


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "NEAR(",
        "AND",
        "cache OR",
        "title:cache",
        "cache*",
        "-",
        "a:b:c",
        "'quote",
        "((",
    ],
)
def test_query_syntax_never_crashes(seeded_url: str, query: str) -> None:
    engine = open_reader(seeded_url)
    try:
        result = search(engine, query, 3)
        assert isinstance(result.rows, tuple)
    except QueryError as exc:
        assert "no words" in str(exc)
    finally:
        engine.dispose()


def test_exclusion_and_or(seeded_url: str) -> None:
    engine = open_reader(seeded_url)
    with_cache = {r[0] for r in search(engine, "cache", 50).rows}
    without_quant = {r[0] for r in search(engine, "cache -quantization", 50).rows}
    either = {r[0] for r in search(engine, "cache OR Hamiltonian", 50).rows}
    engine.dispose()
    assert without_quant < with_cache
    assert with_cache < either


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("KV cache", '"KV" AND "cache"'),
        ('"key value" cache', '"key value" AND "cache"'),
        ("PDI-CP", '"PDI-CP"'),
        ("x OR y", '("x" OR "y")'),
        ("x OR y z", '("x" OR "y") AND "z"'),
        ("cache -quant", '("cache") NOT "quant"'),
        ("cache -quant -x", '("cache") NOT ("quant" OR "x")'),
        ('say "hi', '"say" AND "hi"'),
        ("NEAR(", '"NEAR("'),
        ("the cache", '"cache"'),
    ],
)
def test_user_queries_become_quoted_fts5_expressions(query: str, expected: str) -> None:
    assert to_fts5_query(query) == expected

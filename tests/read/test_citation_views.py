"""The citation views on both backends: cited_by, citation_counts, related_papers, and
method_lineage's adopters from citations where there are any, from names where not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import fetch, fresh_database, load

CITATIONS = Path(__file__).parents[1] / "fixtures" / "sources" / "citations"
INTRO = "We propose {name}, a recurrent network that lights sparse mazes for exploring agents in long horizons with very few rewards."
USE = "We build on {name} to light larger mazes, and compare {name} with random exploration in sparse reward games of {topic}."


def work(
    number: int, title: str, abstract: str, year: int, cites: tuple[int, ...] = ()
) -> dict[str, object]:
    """A made-up OpenAlex work (its abstract as an inverted index)."""
    index: dict[str, list[int]] = {}
    for spot, word in enumerate(abstract.split()):
        index.setdefault(word, []).append(spot)
    return {
        "id": f"https://openalex.org/W{number}",
        "title": title,
        "publication_year": year,
        "abstract_inverted_index": index,
        "referenced_works": [f"https://openalex.org/W{n}" for n in cites],
    }


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])],
)
def lineage_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Two methods: TorchNet, whose introducing paper is cited (by one of the two papers that
    mention it later), and LampNet, whose introducing paper nobody in the database cites."""
    folder = tmp_path_factory.mktemp("lineage")
    works = [
        work(1, "Torch Networks", INTRO.format(name="TorchNet"), 2020),
        work(2, "Brighter Torches", USE.format(name="TorchNet", topic="mazes"), 2022, (1,)),
        work(3, "Torches Without Credit", USE.format(name="TorchNet", topic="caves"), 2023, (9,)),
        work(4, "Lamp Networks", INTRO.format(name="LampNet"), 2020),
        work(5, "Brighter Lamps", USE.format(name="LampNet", topic="mines"), 2021),
        work(
            6,
            "A Survey of Lights",
            "We survey lights in sparse reward mazes, torches and lamps alike, for agents that explore long horizons.",
            2024,
            (1, 2, 9),
        ),
    ]
    (folder / "works.json").write_text(json.dumps({"results": works}), "utf-8")
    with fresh_database(request.param, folder) as url:
        load(url, folder)
        yield url


def test_cited_by_lists_the_papers_citing_each_paper_once(lineage_url: str) -> None:
    found = fetch(lineage_url, "SELECT label, citing_label FROM cited_by ORDER BY 1, 2")
    assert found == [
        ("Brighter Torches", "A Survey of Lights"),
        ("Torch Networks", "A Survey of Lights"),
        ("Torch Networks", "Brighter Torches"),
    ]


def test_citation_counts_keep_the_databases_count_apart_from_the_sources(db_url: str) -> None:
    load(db_url, CITATIONS)
    found = fetch(
        db_url,
        "SELECT cited_by, references_given, references_in_database, references_as_text, "
        "source_cited_by FROM citation_counts WHERE label = :label",
        {"label": "Torches: Light for Exploration"},
    )
    # cited by Lantern, Candles, Beacons, Flint and Floodlights; OpenAlex counts 120, S2 118
    assert found == [(5, 2, 1, 0, 120)]
    lantern = fetch(
        db_url,
        "SELECT references_given, references_in_database, references_as_text FROM "
        "citation_counts WHERE label = 'Lantern Networks for Sparse Rewards'",
    )
    assert lantern == [(5, 2, 2)]


def test_related_papers_are_scored_from_citations_and_methods(lineage_url: str) -> None:
    found = fetch(
        lineage_url,
        "SELECT related_label, rank, score, cites, cited_by, shared_references, co_citations, "
        "shared_methods FROM related_papers WHERE label = 'Torch Networks' ORDER BY rank",
    )
    # cites it, is cited with it by the survey, uses its method
    assert found[0] == ("Brighter Torches", 1, 6, 0, 1, 0, 1, 1)
    labels = [row[0] for row in found]
    assert "Torches Without Credit" in labels  # by the method alone
    assert "Lamp Networks" not in labels  # nothing in common but words
    coupled = fetch(
        lineage_url,
        "SELECT shared_references FROM related_papers "
        "WHERE label = 'Torches Without Credit' AND related_label = 'A Survey of Lights'",
    )
    assert coupled == [(1,)]  # both cite W9, which the database does not hold


def test_method_lineage_counts_adopters_by_citations_where_there_are_any(lineage_url: str) -> None:
    found = fetch(
        lineage_url,
        "SELECT method, later_papers, citing_adopters, adopters, adopters_from "
        "FROM method_lineage WHERE method IN ('TorchNet', 'LampNet') ORDER BY method",
    )
    assert found == [
        (
            "LampNet",
            1,
            0,
            1,
            "names",
        ),  # nobody cites Lamp Networks but the survey, which does not name it
        ("TorchNet", 2, 1, 1, "citations"),  # the paper not citing it is not counted
    ]


def test_the_per_paper_query_scores_as_the_view_does(lineage_url: str, tmp_path: Path) -> None:
    """`etl related`'s query (sql/queries/related.sql) gives, for every paper, the rows the
    view gives it."""
    from etl.load.database import sql_dir

    query = sql_dir().joinpath("queries", "related.sql").read_text("utf-8")
    url = f"sqlite:///{tmp_path / 'more.db'}"
    load(url, CITATIONS)
    for database in (lineage_url, url):
        for pk, paper_id in fetch(database, "SELECT pk, id FROM papers"):
            by_query = [
                (row[0], row[1], *row[5:6], *row[7:])
                for row in fetch(database, query, {"pk": pk, "limit": 10})
            ]
            by_view = fetch(
                database,
                "SELECT rank, related_paper_id, score, cites, cited_by, shared_references, "
                "co_citations, shared_methods, shared_tasks FROM related_papers "
                "WHERE paper_id = :id ORDER BY rank",
                {"id": paper_id},
            )
            assert by_query == by_view, paper_id

"""Who cites whom: edges are values their sightings give, so they follow the sightings' rules
(any load order gives the same table, an edge leaves with its file), and an edge resolves
when the paper it cites arrives, in the same run or a later one."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import fetch, fresh_database, load, snapshot

CITATIONS = Path(__file__).parents[1] / "fixtures" / "sources" / "citations"
EDGES = (
    "SELECT p.title, x.cited_key, q.title FROM citations x JOIN papers p ON p.pk = x.paper_pk "
    "LEFT JOIN papers q ON q.pk = x.cited_paper_pk ORDER BY 1, 2"
)


def copy(folder: Path, *names: str) -> list[Path]:
    folder.mkdir(exist_ok=True)
    return [Path(shutil.copy(CITATIONS / name, folder / name)) for name in names]


def edges(url: str) -> list[tuple[object, ...]]:
    return fetch(url, EDGES)


def test_every_shape_gives_its_edges_and_they_resolve_across_sources(
    db_url: str, tmp_path: Path
) -> None:
    load(db_url, CITATIONS)
    found = edges(db_url)
    torches = "Torches: Light for Exploration"
    # OpenAlex: by OpenAlex id, a duplicate once, itself not at all, a non-id kept as text
    assert (
        "Lantern Networks for Sparse Rewards",
        "openalex:W2000000002",
        "Candles Before Lanterns",
    ) in found
    assert ("Lantern Networks for Sparse Rewards", "openalex:W2999999999", None) in found
    assert not any(row[1] == "openalex:W2000000001" for row in found)
    # Crossref: a DOI (in any case) finds the paper OpenAlex and S2 gave; text is kept as text
    assert ("Beacons for Long Horizons", "doi:10.5555/torch.2020.3", torches) in found
    raw = fetch(db_url, "SELECT raw FROM citations WHERE cited_key LIKE 'ref:%' ORDER BY raw")
    assert ("Hopper, G. Candles Before Lanterns. Made-Up Letters, 2021.",) in raw
    # S2: the nested papers are papers, the edges point both ways, a bare id is an edge only
    assert (torches, "doi:10.5555/flint.2018.2", "Flint and Steel: Early Sparks") in found
    assert ("Floodlights Considered Harmful", "doi:10.5555/torch.2020.3", torches) in found
    assert (torches, "s2:" + "c" * 40, None) in found
    # DBLP: <cite> keys, `...` none
    assert (
        "Compiling Lanterns",
        "dblp:conf/madeup/Turing98",
        "Machines That Carry Torches",
    ) in found
    counts = fetch(
        db_url,
        "SELECT DISTINCT s.cited_by_count FROM paper_sources s JOIN papers p ON p.pk = s.paper_pk "
        "WHERE p.title = :title AND s.cited_by_count IS NOT NULL ORDER BY 1",
        {"title": torches},
    )
    assert counts == [(118,), (120,)]  # each source's own count, kept per sighting


def test_the_citations_table_is_the_same_whatever_the_order_or_the_runs(
    tmp_path: Path, db_url: str
) -> None:
    names = (
        "openalex-citing.json",
        "openalex-cited.json",
        "s2-paper.json",
        "crossref-references.json",
    )
    files = copy(tmp_path / "in", *names)
    load(db_url, *files)
    kind = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    (tmp_path / "other").mkdir()
    with fresh_database(kind, tmp_path / "other") as other:
        for path in reversed(files):  # one run each, the cited files first
            load(other, *files[files.index(path) :])
        assert snapshot(other)["citations"] == snapshot(db_url)["citations"]
        assert snapshot(other)["paper_sources"] == snapshot(db_url)["paper_sources"]


def test_an_edge_resolves_when_the_cited_paper_arrives_in_a_later_run(
    db_url: str, tmp_path: Path
) -> None:
    citing, cited = copy(tmp_path / "in", "openalex-citing.json", "openalex-cited.json")
    load(db_url, citing)
    lantern = "Lantern Networks for Sparse Rewards"
    assert (lantern, "openalex:W2000000003", None) in edges(db_url)
    load(db_url, citing, cited)
    assert (lantern, "openalex:W2000000003", "Torches: Light for Exploration") in edges(db_url)


def test_an_edge_leaves_with_its_file_and_unresolves_when_its_paper_leaves(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    _, cited, crossref = copy(
        folder, "openalex-citing.json", "openalex-cited.json", "crossref-references.json"
    )
    load(db_url, folder)
    before = edges(db_url)
    cited.unlink()  # the cited paper leaves: the edges stay, pointing at nothing
    load(db_url, folder, prune=True)
    after = edges(db_url)
    assert len(after) == len(before)
    assert ("Candles Before Lanterns", "openalex:W2000000003", None) in after
    crossref.unlink()  # the citing file leaves: its edges go, and nothing else
    load(db_url, folder, prune=True)
    assert edges(db_url) == [row for row in after if row[0] != "Beacons for Long Horizons"]
    shutil.copy(CITATIONS / "openalex-cited.json", cited)  # back: the edges resolve again
    load(db_url, folder)
    assert (
        "Candles Before Lanterns",
        "openalex:W2000000003",
        "Torches: Light for Exploration",
    ) in edges(db_url)


def test_a_record_changed_in_place_replaces_its_edges(db_url: str, tmp_path: Path) -> None:
    (citing,) = copy(tmp_path / "in", "openalex-citing.json")
    load(db_url, citing)
    citing.write_text(
        citing.read_text("utf-8").replace(
            "https://openalex.org/W2999999999", "https://openalex.org/W2888888888"
        ),
        "utf-8",
    )
    load(db_url, citing)
    keys = [row[1] for row in edges(db_url)]
    assert "openalex:W2888888888" in keys and "openalex:W2999999999" not in keys

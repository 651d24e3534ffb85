"""The works a record cites, as each metadata shape gives them (made-up records)."""

from __future__ import annotations

import json
from pathlib import Path

from etl import extract
from etl.extract.fields import MAX_REFERENCES
from etl.models import RawRecord, Reject

CITATIONS = Path(__file__).parents[1] / "fixtures" / "sources" / "citations"


def records(path: Path) -> list[RawRecord | Reject]:
    return list(extract.read_records(extract.identify(path)))  # type: ignore[arg-type]


def test_openalex_referenced_works_and_its_own_count() -> None:
    lantern, candles = records(CITATIONS / "openalex-citing.json")
    assert isinstance(lantern, RawRecord) and isinstance(candles, RawRecord)
    assert ("openalex", "https://openalex.org/W2000000002") in lantern.references
    assert lantern.cited_by_count == 41
    assert candles.references == (("openalex", "https://openalex.org/W2000000003"),)


def test_crossref_references_by_doi_else_their_text() -> None:
    (work,) = records(CITATIONS / "crossref-references.json")
    assert isinstance(work, RawRecord)
    assert work.references == (
        ("doi", "10.5555/TORCH.2020.3"),
        ("text", "Hopper, G. Candles Before Lanterns. Made-Up Letters, 2021."),
        ("text", "Franklin. An Uncatalogued Spark. 2017"),
    )  # a reference with nothing to name it by gives none
    assert work.cited_by_count == 2


def test_semantic_scholar_nested_papers_are_records_of_the_file_citing_both_ways() -> None:
    torches, flint, floodlights = records(CITATIONS / "s2-paper.json")
    assert isinstance(torches, RawRecord) and torches.cited_by_count == 118
    assert torches.references == (("doi", "10.5555/flint.2018.2"), ("s2", "c" * 40))
    assert [r.position for r in (torches, flint, floodlights)] == [1, 2, 3]
    # a paper both cited and citing is one record; the paper itself, listed, is none
    assert isinstance(flint, RawRecord) and flint.references == (("doi", "10.5555/torch.2020.3"),)
    assert isinstance(floodlights, RawRecord)
    assert floodlights.references == (("doi", "10.5555/torch.2020.3"),)


def test_semantic_scholar_json_lines_give_edges_but_no_nested_papers(tmp_path: Path) -> None:
    paper = json.loads((CITATIONS / "s2-paper.json").read_text("utf-8"))
    path = tmp_path / "papers.jsonl"
    other = {"paperId": "f" * 40, "title": "Another Paper"}
    path.write_text(json.dumps(paper) + "\n" + json.dumps(other) + "\n", "utf-8")
    first, second = records(path)
    assert isinstance(first, RawRecord) and len(first.references) == 2
    assert isinstance(second, RawRecord) and second.position == 2


def test_dblp_cites_by_key_without_the_unnamed_mark() -> None:
    hopper, turing = records(CITATIONS / "dblp-cites.xml")
    assert isinstance(hopper, RawRecord) and isinstance(turing, RawRecord)
    assert set(hopper.references) == {("dblp", "conf/madeup/Turing98")}
    assert turing.references == ()


def test_a_record_citing_more_works_than_the_limit_is_a_reject(tmp_path: Path) -> None:
    work = {
        "id": "https://openalex.org/W1",
        "title": "Everything Cited",
        "referenced_works": [f"https://openalex.org/W{n}" for n in range(MAX_REFERENCES + 1)],
    }
    path = tmp_path / "works.json"
    path.write_text(json.dumps({"results": [work, {**work, "referenced_works": []}]}), "utf-8")
    over, fine = records(path)
    assert isinstance(over, Reject) and "references; the limit is" in over.reason
    assert isinstance(fine, RawRecord)

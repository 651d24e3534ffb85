"""The rule that makes a paper of its sightings: plain data in, plain data out."""

from __future__ import annotations

import itertools

from etl.load.derive import derive, paper_id, preference, standing
from etl.models import PaperRows


def record(**fields: object) -> PaperRows:
    """A sighting's record: a titled paper with an abstract and nothing else, unless given."""
    values: dict[str, object] = {
        "id": "pabs",
        "venue": "ICML",
        "year": 2020,
        "title": "Sorting",
        "abstract": "a b c",
        "abstract_raw": "a b c",
        "status": None,
        "keywords": None,
        "extra": None,
        "method_names": "",
        "title_raw": "Sorting",
        "content_hash": "h0",
        "position": 1,
        "authors": (),
        "links": (),
        "methods": (),
        "acronyms": (),
        "topics": (),
        "tasks": (),
        "keys": ("abs:1", "title:1"),
        "author_homepages": (),
        "listed": (),
    }
    values.update(fields)
    return PaperRows(**values)  # type: ignore[arg-type]


CODE = ("https://github.com/a/b", "github.com", "code", "a", "b", "github")
PAGE = ("https://a.github.io", "a.github.io", "project", None, None, "abstract")


def test_a_lone_sighting_is_its_paper() -> None:
    one = record(links=(CODE,))
    assert derive([one]) is one


def test_the_standing_of_a_sighting() -> None:
    assert standing("NeurIPS", "Poster") == standing("ICML", None) == 0
    assert standing("ICLR", "Workshop") == standing("ICLR Workshop", None) == 1
    assert standing("arXiv", None) == standing("NeurIPS", "preprint") == 2
    assert standing("ICLR", "Reject") == standing("ICLR", "Withdraw") == 3


def test_every_order_of_sightings_gives_one_paper() -> None:
    sightings = [
        record(venue="ICLR", status="Reject", links=(CODE,), content_hash="h1", id="pb"),
        record(venue="NeurIPS", status="Poster", abstract="revised", content_hash="h2", id="pa"),
        record(venue="arXiv", status=None, authors=("Ada",), content_hash="h3", id="pc"),
        record(venue="ICLR", status="Workshop", links=(PAGE,), content_hash="h4", id="pd"),
    ]
    papers = {derive(list(order)) for order in itertools.permutations(sightings)}
    assert len(papers) == 1
    (paper,) = papers
    assert (paper.venue, paper.status, paper.abstract) == ("NeurIPS", "Poster", "revised")
    assert paper.authors == ("Ada",)  # the only sighting naming authors
    assert {link[0] for link in paper.links} == {CODE[0], PAGE[0]}  # the union
    assert paper.id == "pa"  # all named by abstracts: the smaller id


def test_a_richer_record_is_preferred_among_equals_and_never_the_later_loaded() -> None:
    bare = record(title=None, title_raw=None, keys=("abs:1",), content_hash="h1")
    titled = record(authors=("Ada",), content_hash="h2")
    assert sorted([bare, titled], key=preference)[0] is titled
    assert derive([bare, titled]).title == "Sorting"


def test_the_strongest_id_names_the_paper() -> None:
    by_abstract = record(id="paaa")
    by_doi = record(id="pzzz", keys=("doi:10.1/x", "abs:2"))
    by_title = record(id="p000", keys=("title:1",))
    assert paper_id([by_abstract, by_doi, by_title]) == "pzzz"
    assert paper_id([by_abstract, by_title]) == "paaa"


def test_extra_fields_are_merged_the_preferred_sighting_winning() -> None:
    accepted = record(status="Oral", extra='{"track": "main", "poster": 3}', content_hash="h1")
    rejected = record(status="Reject", extra='{"track": "other", "reviews": 4}', content_hash="h2")
    merged = derive([rejected, accepted]).extra
    assert merged is not None and '"track": "main"' in merged and '"reviews": 4' in merged


def test_a_missing_homepage_comes_from_the_same_author_in_another_sighting() -> None:
    named = record(authors=("Ada", "Bo"), author_homepages=(None, None), content_hash="h1")
    linked = record(
        status="Reject", authors=("Ada",), author_homepages=("https://ada.io",), content_hash="h2"
    )
    assert derive([named, linked]).author_homepages == ("https://ada.io", None)

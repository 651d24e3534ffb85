"""Identity keys and ids: what identifies a paper, and what never does."""

from __future__ import annotations

import hashlib

import pytest

from etl.models import RawRecord
from etl.transform import load_taxonomy, transform
from etl.transform.ids import content_key, identity_keys, paper_id, substantive

LONG = (
    "We study how a small model learns to sort lists of numbers when it is trained on short "
    "lists only, and show that it generalises to lists ten times longer than any it saw."
)


@pytest.mark.parametrize(
    "abstract", ["Part of", "N/A", "TBA", "Abstract", "abstract.", "A short abstract of six."]
)
def test_placeholders_and_short_abstracts_do_not_identify_a_paper(abstract: str) -> None:
    assert not substantive(abstract)
    keys = identity_keys(abstract, "A Title")
    assert [k.split(":")[0] for k in keys] == ["title"]


def test_keys_strongest_first_and_titles_compared_without_markup_or_case() -> None:
    keys = identity_keys(LONG, "Sorting, Learned", ("doi:10.1/x",))
    assert [k.split(":")[0] for k in keys] == ["doi", "abs", "title"]
    assert identity_keys(LONG, "SORTING learned")[1] == keys[2]
    assert identity_keys("Part of", None)[0].startswith("text:")  # a rerun still finds it


def test_ids_come_from_an_external_id_else_the_abstract_as_before_else_the_title() -> None:
    old_id = "p" + hashlib.sha256(content_key(LONG).encode()).hexdigest()[:16]
    assert paper_id(LONG, "Any Title") == paper_id(LONG, None) == old_id  # stored ids stay
    assert paper_id("Part of", "One") != paper_id("Part of", "Two")
    assert paper_id(LONG, None, ("arxiv:2310.16808",)) != old_id


def test_transform_keeps_the_title_as_written_and_the_silent_link_fields() -> None:
    record = RawRecord(
        source="x.json",
        position=1,
        venue="ICLR",
        year=2018,
        title=r"Escaped \**star** and $\alpha$-nets",
        abstract=LONG,
        authors=("Ann Lee", "Bo Chen"),
        links=(("github", "none yet"),),
        author_links=(("homepage", ("https://ann.example.org", "")),),
        extra='{"rating": 5}',
    )
    bundle = transform(record, load_taxonomy())
    assert bundle.paper.title == "Escaped **star** and α-nets"
    assert bundle.paper.title_raw == record.title
    assert bundle.paper.extra == '{"rating": 5, "github": "none yet"}'
    assert bundle.author_homepages == ("https://ann.example.org", None)
    assert [link.found_in for link in bundle.links] == []  # a homepage is no paper link

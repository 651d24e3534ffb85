"""Established names: a paper does not introduce an artifact many papers named before its year."""

from __future__ import annotations

import pytest

from etl.models import MethodMention, RawRecord
from etl.transform import load_taxonomy, transform
from etl.transform.methods.established import ESTABLISHED, demote_established


def roles(abstract: str, year: int | None) -> dict[str, str]:
    record = RawRecord(source="t", position=1, venue="V", year=year, title=None, abstract=abstract)
    return {m.name: m.role for m in transform(record, load_taxonomy()).methods}


@pytest.mark.parametrize(
    "abstract, name",
    [
        ("We propose GP, a simple method for regression under noise.", "GP"),
        (
            "In this paper we introduce ADMM, an algorithm for distributed convex optimization.",
            "ADMM",
        ),
    ],
)
def test_a_name_in_use_before_the_papers_year_is_mentioned(abstract: str, name: str) -> None:
    first_year = ESTABLISHED[name.lower()]
    assert roles(abstract, first_year + 1) == {name: "mentioned"}
    # in the year it became common, or with no year to compare, the reading stands
    assert roles(abstract, first_year) == {name: "introduced"}
    assert roles(abstract, None) == {name: "introduced"}


def test_a_new_name_is_still_introduced() -> None:
    assert "zorbnetplusplus" not in ESTABLISHED
    assert roles("We propose ZorbNetPlusPlus, a network for regression.", 2100) == {
        "ZorbNetPlusPlus": "introduced"
    }


def test_only_introduced_mentions_change() -> None:
    key, year = next(iter(ESTABLISHED.items()))
    mentions = [
        MethodMention(name=key, kind="method", role="introduced", surface=key, keys=(key,)),
        MethodMention(name=key, kind="method", role="mentioned", surface=key, keys=(key,)),
        MethodMention(name="new", kind="method", role="introduced", surface="new", keys=("zq",)),
    ]
    assert [m.role for m in demote_established(mentions, year + 1)] == [
        "mentioned",
        "mentioned",
        "introduced",
    ]

"""Established names: an artifact many papers named before a paper's year is not its own.

The method finder reads "we use a GP ..." or "our ConvNet ..." as a paper's own artifact when
the sentence is shaped like an introduction; such names are no invention of the paper if other
papers used them in earlier years. `etl/data/methods/established.tsv` (derived from public
paper lists by tools/established_names.py) gives each such name's first year of use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from importlib import resources

from etl.models import MethodMention


def _established() -> dict[str, int]:
    """Method key -> the first year in which several papers named it."""
    text = resources.files("etl.data.methods").joinpath("established.tsv").read_text("utf-8")
    result: dict[str, int] = {}
    for line in text.splitlines():
        if line and line[0] != "#":
            key, year = line.split("\t")
            result[key] = int(year)
    return result


ESTABLISHED = _established()


def used_before(mention: MethodMention, year: int) -> bool:
    """Whether the artifact's name was established before `year`."""
    return bool(mention.keys) and ESTABLISHED.get(mention.keys[0], year) < year


def demote_established(
    methods: Sequence[MethodMention], year: int | None
) -> tuple[MethodMention, ...]:
    """The paper's artifacts, those "introduced" under an established name made mentions."""
    if year is None:
        return tuple(methods)
    return tuple(
        replace(m, role="mentioned") if m.role == "introduced" and used_before(m, year) else m
        for m in methods
    )

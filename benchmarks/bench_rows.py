"""What the shape of a transformed row costs on its way back from a worker (pickle both ways).

Usage: python benchmarks/bench_rows.py [--n 5000] [--seed 1] [--repeats 5]

Transforms N generated records once, then pickles them in batches of 500 (as the workers send
them) and unpickles them (as the loading process receives them) in four shapes:

1. `PaperRows` as shipped: a NamedTuple whose links and methods are plain tuples;
2. the same with links and methods as NamedTuples too (so the writer could read `m.keys`);
3. a frozen dataclass with slots, children as plain tuples;
4. the frozen dataclasses the transform returns (`PaperBundle`), for scale.

Prints microseconds per record (best of `repeats`) and each shape against the first.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import pickle
import time
from dataclasses import astuple, dataclass, fields
from itertools import islice
from typing import Any, NamedTuple

from bench_load import dataset

from etl.extract import identify, parse_item, read_items
from etl.models import PaperBundle, PaperRows, RawRecord
from etl.transform import load_taxonomy, transform

BATCH = 500


class LinkRow(NamedTuple):
    url: str
    host: str
    kind: str
    repo_owner: str | None
    repo_name: str | None
    found_in: str


class MethodRow(NamedTuple):
    name: str
    kind: str
    role: str
    surface: str
    aliases: tuple[str, ...]
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SlotRows:
    """PaperRows' fields as a frozen dataclass with slots."""

    id: str
    venue: str | None
    year: int | None
    title: str | None
    abstract: str
    abstract_raw: str
    status: str | None
    keywords: str | None
    extra: str | None
    method_names: str
    content_hash: str
    position: int
    authors: tuple[str, ...]
    links: tuple[Any, ...]
    methods: tuple[Any, ...]
    acronyms: tuple[tuple[str, str], ...]
    topics: tuple[Any, ...]


def bundles(n: int, seed: int) -> list[PaperBundle]:
    """N generated records, transformed."""
    taxonomy = load_taxonomy(None)
    source = identify(dataset(n, seed))
    records = (parse_item(item) for item in islice(read_items(source), n))
    return [transform(r, taxonomy) for r in records if isinstance(r, RawRecord)]


def shapes(found: list[PaperBundle]) -> dict[str, list[Any]]:
    """The same papers in each shape."""
    rows = [PaperRows.from_bundle(b) for b in found]
    nested = [
        r._replace(
            links=tuple(LinkRow(*link) for link in r.links),
            methods=tuple(MethodRow(*m) for m in r.methods),
        )
        for r in rows
    ]
    assert [f.name for f in fields(SlotRows)] == list(PaperRows._fields)
    slotted = [SlotRows(*r) for r in rows]
    assert all(astuple(s) == tuple(r) for s, r in zip(slotted, rows, strict=True))
    return {
        "PaperRows (NamedTuple, plain tuples inside)": rows,
        "PaperRows with NamedTuple links and methods": nested,
        "dataclass(frozen, slots), plain tuples inside": slotted,
        "PaperBundle (frozen dataclasses)": found,
    }


def round_trip_seconds(items: list[Any], repeats: int) -> float:
    """Best time to pickle and unpickle every batch of `items`."""
    batches = [items[i : i + BATCH] for i in range(0, len(items), BATCH)]
    best = float("inf")
    for _ in range(repeats):
        tick = time.perf_counter()
        for batch in batches:
            pickle.loads(pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL))
        best = min(best, time.perf_counter() - tick)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    found = bundles(args.n, args.seed)
    base = 0.0
    for name, items in shapes(found).items():
        seconds = round_trip_seconds(items, args.repeats)
        base = base or seconds
        size = sum(len(pickle.dumps(items[i : i + BATCH])) for i in range(0, len(items), BATCH))
        print(
            f"{name:48} {seconds / len(items) * 1e6:7.1f} µs/record  "
            f"{seconds / base:5.2f}x  {size / len(items):7.0f} bytes/record"
        )


if __name__ == "__main__":
    main()

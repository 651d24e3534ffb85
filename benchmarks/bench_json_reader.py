"""CPU time of reading a JSON array of records: ijson's `items` (what the reader used before
the limits) against `etl.extract.limits.json_records` (ijson's events, built within the
limits). Alternates the two and prints each one's best of N, in ms and µs per record.

    python benchmarks/bench_json_reader.py --n 5000 --repeat 7
"""

from __future__ import annotations

import argparse
import io
import json
import random
import time

import ijson

from etl.extract import limits


def records(n: int, seed: int = 7) -> bytes:
    """A JSON array of n records shaped like an OpenReview export (made up)."""
    rng = random.Random(seed)
    words = "graph neural attention diffusion policy kernel sparse retrieval token cache".split()
    items = [
        {
            "id": f"id{i}",
            "title": " ".join(rng.choice(words) for _ in range(10)),
            "abstract": " ".join(rng.choice(words) for _ in range(180)),
            "authors": [f"Author {rng.randint(1, 9999)}" for _ in range(rng.randint(1, 12))],
            "keywords": rng.sample(words, 4),
            "status": "Poster",
            "homepage": ";".join("https://example.org/~a" for _ in range(3)),
            "github": f"https://github.com/o{i}/r{i}",
        }
        for i in range(n)
    ]
    return json.dumps(items).encode("utf-8")


def best(function: object, data: bytes, repeat: int) -> float:
    """The least CPU time of `repeat` runs (seconds)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        function(data)  # type: ignore[operator]
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    arguments = parser.parse_args()
    data = records(arguments.n)

    def items(data: bytes) -> int:
        return sum(1 for _ in ijson.items(io.BytesIO(data), "item", use_float=True))

    def bounded(data: bytes) -> int:
        return sum(1 for _ in limits.json_records(io.BytesIO(data)))

    assert items(data) == bounded(data) == arguments.n
    results = {"ijson items": [], "json_records": []}
    for _ in range(3):  # alternate, so a busy machine weighs on both
        results["ijson items"].append(best(items, data, arguments.repeat))
        results["json_records"].append(best(bounded, data, arguments.repeat))
    print(f"{arguments.n:,} records, {len(data) / 2**20:.1f} MB")
    for name, times in results.items():
        seconds = min(times)
        print(f"{name:>13}: {seconds * 1000:7.1f} ms, {seconds / arguments.n * 1e6:5.1f} µs/record")


if __name__ == "__main__":
    main()

"""Derive the packaged list of established artifact names (`etl/data/methods/established.tsv`)
from a folder of public paper lists, unlabelled: the year from which each name was in use.

    python tools/established_names.py DIR --min-papers 10 --exclude tests/gold/real-*.jsonl \
        --provenance "papercopilot/paperlists at 33f9884" > etl/data/methods/established.tsv

DIR holds lists at their usual paths (`nips/nips2018.json`: a JSON array of records with
`title` and `abstract`; the year is read from the file name). Every abstract is read by the
method finder as `etl run` reads it; a name is *established* in year Y when, counting the
lists of Y and every earlier year, at least `--min-papers` distinct papers name it (in any
role: a name many papers claim to introduce is not new either). A paper of a later year that
"introduces" an established name uses it (etl/transform/methods/established.py).

The reserved lists (kept for independent checks) are refused, and the records of the gold
files given with `--exclude` (held-out sets included) are left out, so no measured record
shapes the list.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from etl.transform.acronyms import find_acronyms
from etl.transform.clean import clean_text, emphasized
from etl.transform.methods import find_methods

HERE = Path(__file__).resolve().parent
RESERVED = frozenset(
    {
        "icml/icml2025.json",
        "wacv/wacv2025.json",
        "tmlr/tmlr2025.json",
        "emnlp/emnlp2024.json",
        "iclr/iclr2024.json",
        "acl/acl2024.json",
        "tmlr/tmlr2024.json",
    }
)
HEADER = """\
# Established artifact names: the method key of a name, then the first year in which at least
# {min_papers} distinct papers of the lists read named it (that year's lists and earlier ones).
# A paper of a later year that seems to introduce such a name uses it.
#
# Derived by tools/established_names.py from public paper lists ({provenance}:
# {files} files, {papers} abstracts, {first}-{last}; the gold sets' records left out);
# names and years only, no text.
"""


def _real_gold() -> Any:
    """tools/real_gold.py, imported by path (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("real_gold", HERE / "real_gold.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def list_files(folder: Path) -> Iterator[tuple[str, int]]:
    """The lists under `folder` with a year in their name, reserved ones refused."""
    real_gold = _real_gold()
    found = []
    for path in folder.glob("*/*.json"):
        file = path.relative_to(folder).as_posix()
        if file in RESERVED:
            raise SystemExit(f"error: {file} is reserved for independent checks")
        _, year = real_gold.venue_year(file)
        if year is not None:
            found.append((year, file))
    # oldest first: a paper listed in two years counts in the first
    for year, file in sorted(found):
        yield file, year


def names_of(record: dict[str, Any]) -> set[str]:
    """The method keys of every artifact the finder reads in a record's title and abstract."""
    raw = str(record.get("abstract") or "")
    raw_title = str(record.get("title") or "")
    abstract, title = clean_text(raw), clean_text(raw_title)
    acronyms = find_acronyms(title, abstract)
    methods = find_methods(abstract, emphasized(raw), acronyms, title or None)
    return {key for m in methods for key in m.keys[:1]}


def papers_of(
    folder: Path, file: str, excluded: frozenset[tuple[str, str]]
) -> Iterator[dict[str, Any]]:
    """The records of one list that have an abstract, gold records left out."""
    data = json.loads((folder / file).read_text("utf-8"))
    records = [
        r for r in (data.values() if isinstance(data, dict) else data) if isinstance(r, dict)
    ]
    real_gold = _real_gold()
    for index, record in enumerate(records):
        if record.get("abstract") and (file, real_gold.record_key(records, index)) not in excluded:
            yield record


def count_names(
    folder: Path, excluded: frozenset[tuple[str, str]]
) -> tuple[dict[str, Counter[int]], int, list[int]]:
    """Per name, the number of distinct papers naming it in each year; papers read; years."""
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    seen: set[str] = set()
    years = []
    for file, year in list_files(folder):
        for record in papers_of(folder, file, excluded):
            title = " ".join(str(record.get("title") or "").lower().split())
            if title and title in seen:
                continue  # one paper listed twice (a workshop and its main track) counts once
            seen.add(title)
            for key in names_of(record):
                counts[key][year] += 1
        years.append(year)
        print(f"{file}: read", file=sys.stderr)
    return counts, len(seen), years


def established(counts: dict[str, Counter[int]], min_papers: int) -> dict[str, int]:
    """Each name's first year with at least `min_papers` papers up to it."""
    result: dict[str, int] = {}
    for key, by_year in counts.items():
        total = 0
        for year in sorted(by_year):
            total += by_year[year]
            if total >= min_papers:
                result[key] = year
                break
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--min-papers", type=int, default=10)
    parser.add_argument("--exclude", nargs="*", default=[], help="gold files whose records to skip")
    parser.add_argument(
        "--provenance", default="papercopilot/paperlists", help="where DIR came from"
    )
    args = parser.parse_args(argv)
    excluded = _real_gold().drawn(args.exclude)
    counts, papers, years = count_names(args.folder, excluded)
    names = established(counts, args.min_papers)
    sys.stdout.write(
        HEADER.format(
            min_papers=args.min_papers,
            provenance=args.provenance,
            files=len(years),
            papers=papers,
            first=min(years),
            last=max(years),
        )
    )
    for key in sorted(names):
        sys.stdout.write(f"{key}\t{names[key]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

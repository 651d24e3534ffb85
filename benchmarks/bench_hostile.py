"""Peak memory and time of `etl run` on hostile files, at the sizes that first found them,
with the default flags: each reader bounded by the stated limits (docs/limits.md).

Each case's file is made here (cached in benchmarks/out/hostile/, git-ignored) and loaded
beside one good file into a fresh SQLite database, under `ulimit -v` (4 GB) and a timeout.
Printed per case: the input's size, the exit status, wall seconds, the peak RSS of the largest
process (`measure.py`: the run's own, or a worker's) and of all of them together (sampled),
and the line the run printed about the hostile file.

    python benchmarks/bench_hostile.py                      # every case (about 15 minutes)
    python benchmarks/bench_hostile.py --only bz2-spaces positions
    python benchmarks/bench_hostile.py --papers 100000      # pwc-twice smaller
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import shutil
import sys
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

from measure import MeasureTimeout, measure

OUT = Path(__file__).resolve().parent / "out" / "hostile"
ADDRESS_SPACE_KB = 4_000_000
DEEP = 100_000
GOOD = [{"title": "A good paper", "abstract": "An abstract that loads whatever else fails."}]
OPENALEX = {"id": "https://openalex.org/W1", "title": "W", "x": None}


def _openalex_with(value: str, work: dict[str, object] = OPENALEX) -> str:
    """An OpenAlex work as JSON text, its `x` the given JSON text."""
    return json.dumps(work).replace('"x": null', '"x": ' + value)


def deep_arxiv(path: Path, _papers: int) -> None:
    """Case 4: an arXiv snapshot line with a 100,000-deep array."""
    record = {"id": "2101.00001", "submitter": "A", "versions": [], "categories": "cs.LG"}
    line = json.dumps({**record, "title": "T", "x": None})
    path.write_text(line.replace("null", "[" * DEEP + "]" * DEEP) + "\n", "utf-8")


def deep_openalex_3000(path: Path, _papers: int) -> None:
    """Case 4: an OpenAlex page with a 3,000-deep value (it failed encoding `extra`)."""
    path.write_text('{"results": [' + _openalex_with("[" * 3000 + "]" * 3000) + "]}", "utf-8")


def xml_hex(path: Path, _papers: int) -> None:
    """Case 5: a `.json` whose head is an XML declaration naming the `hex` codec."""
    record = '<dblp><article key="x/a"><title>T.</title></article></dblp>\n'
    path.write_text('<?xml version="1.0" encoding="hex"?>\n' + record, "utf-8")


def deep_openalex_page(path: Path, _papers: int) -> None:
    """Case 7: a 200 KB OpenAlex page nested 100,000 deep."""
    path.write_text('{"results": [' + _openalex_with("[" * DEEP + "]" * DEEP) + "]}", "utf-8")


def authorships_gz(path: Path, _papers: int) -> None:
    """Case 7: a 514 KB `.json.gz` whose one work has 176 million empty authorships."""
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write('{"results": [{"id": "https://openalex.org/W1", "authorships": [{}')
        for _ in range(176):
            handle.write(",{}" * 1_000_000)
        handle.write("]}]}")


def bib_junk_gz(path: Path, _papers: int) -> None:
    """Case 8: an 8.7 MB `.bib.gz` with 3 GB of junk lines after one entry."""
    line = ("junk " * 19 + "\n").encode("ascii")
    with gzip.open(path, "wb") as handle:
        handle.write(b"@article{a1,\n  title = {Before the junk},\n  year = 2020\n}\n")
        for _ in range(300):
            handle.write(line * 100_000)


def dblp_elements_gz(path: Path, _papers: int) -> None:
    """Case 8: a 64 KB `.xml.gz` with 16 million empty elements in one `<article>`."""
    with gzip.open(path, "wb") as handle:
        handle.write(b'<?xml version="1.0"?>\n<dblp><article key="x/a"><title>Many.</title>')
        for _ in range(16):
            handle.write(b"<i/>" * 1_000_000)
        handle.write(b"</article></dblp>\n")


def pwc_long_line(path: Path, _papers: int) -> None:
    """Case 8: Papers with Code links, one line holding a 640 MB string."""
    first = {"paper_url": "https://paperswithcode.com/paper/a", "repo_url": "https://x/a/b"}
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({**first, "paper_title": "A"}) + "\n")
        handle.write('{"paper_url": "https://paperswithcode.com/paper/b", "paper_title": "')
        for _ in range(64):
            handle.write("x" * 10_000_000)
        handle.write('", "repo_url": "https://x/b/c"}\n')


def pwc_twice(path: Path, papers: int) -> None:
    """Case 8: Papers with Code links listing each of 400,000 papers twice, far apart."""
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for listing in range(2):
            for n in range(papers):
                record = {
                    "paper_url": f"https://paperswithcode.com/paper/p{n}",
                    "paper_title": f"Paper number {n}",
                    "repo_url": f"https://github.com/owner{n}/repo{listing}",
                    "is_official": listing == 0,
                }
                handle.write(("," if listing or n else "") + json.dumps(record))
        handle.write("]")


def positions(path: Path, _papers: int) -> None:
    """Case 9: one 16 MB OpenAlex record of 8 million positions."""
    index = '{"word": [' + ",".join(["0"] * 8_000_000) + "]}"
    work = {**OPENALEX, "abstract_inverted_index": None}
    text = json.dumps(work).replace(
        '"abstract_inverted_index": null', f'"abstract_inverted_index": {index}'
    )
    path.write_text(text + "\n" + json.dumps({**OPENALEX, "id": "https://openalex.org/W2"}) + "\n")


def field_30mb(path: Path, _papers: int) -> None:
    """Case 10: an OpenAlex work with a 30 MB field."""
    path.write_text('{"results": [' + _openalex_with(json.dumps("y" * 30_000_000)) + "]}")


def bz2_spaces(path: Path, _papers: int) -> None:
    """Case 11: a 1.2 MB `.bz2` of concatenated streams expanding to 1 TB of spaces."""
    spaces = bz2.compress(b" " * 100_000_000)
    with path.open("wb") as handle:
        handle.write(bz2.compress(b"ICML 2025 papers\n\nAn abstract.\n\n"))
        for _ in range(10_600):
            handle.write(spaces)


def bad_lines_gz(path: Path, _papers: int) -> None:
    """Case 11: a 2.4 MB `.jsonl.gz` of 204,800 bad lines."""
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for n in range(204_800):
            handle.write(f"{{bad {n} " + "x" * 16_000 + "\n")


def zip_members(path: Path, _papers: int) -> None:
    """Beyond: a zip of 10,001 members (each would be a source)."""
    with zipfile.ZipFile(path, "w") as archive:
        for n in range(10_001):
            archive.writestr(f"list{n}.json", json.dumps(GOOD))


def zip_deflate_bomb(path: Path, _papers: int) -> None:
    """Beyond: a zip member deflating 4 GB of spaces, and a gzip bomb inside another."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("deflated.json", "w", force_zip64=True) as member:
            member.write(b"[")
            for _ in range(400):
                member.write(b" " * 10_000_000)
            member.write(b"]")
        inner = zipfile.ZipInfo("inner.json.gz")
        with archive.open(inner, "w") as member, gzip.GzipFile(fileobj=member, mode="wb") as gz:
            for _ in range(50):
                gz.write(b" " * 10_000_000)


def xz_dictionary(path: Path, _papers: int) -> None:
    """Beyond: an xz stream whose header asks for a 1.5 GiB dictionary."""
    data = bytearray(lzma.compress(json.dumps(GOOD).encode("utf-8")))
    data[16] = 37  # the LZMA2 filter's dictionary size: 1.5 GiB
    data[20:24] = zlib.crc32(bytes(data[12:20])).to_bytes(4, "little")
    path.write_bytes(bytes(data))


def csv_cells(path: Path, _papers: int) -> None:
    """Beyond: a CSV row of 8 million empty cells."""
    path.write_text("title,abstract\nFirst,One.\nx" + "," * 8_000_000 + "\nLast,Two.\n")


def dtd_entities(path: Path, _papers: int) -> None:
    """Beyond: XML whose DTD declares a million entities (read with --source-format dblp)."""
    with path.open("w", encoding="utf-8") as handle:
        handle.write('<?xml version="1.0"?>\n<!DOCTYPE dblp [\n')
        for n in range(1_000_000):
            handle.write(f'<!ENTITY e{n} "value {n}">\n')
        handle.write(']>\n<dblp><article key="x/a"><title>&e5;.</title></article></dblp>\n')


# name: (file name, generator, extra flags)
CASES: dict[str, tuple[str, Callable[[Path, int], None], tuple[str, ...]]] = {
    "deep-arxiv": ("arxiv.jsonl", deep_arxiv, ()),
    "deep-openalex-3000": ("openalex-3000.json", deep_openalex_3000, ()),
    "xml-hex": ("list.json", xml_hex, ()),
    "deep-openalex-page": ("openalex-deep.json", deep_openalex_page, ()),
    "authorships-gz": ("works.json.gz", authorships_gz, ()),
    "bib-junk-gz": ("refs.bib.gz", bib_junk_gz, ()),
    "dblp-elements-gz": ("dblp.xml.gz", dblp_elements_gz, ()),
    "pwc-long-line": ("links-between-papers-and-code.jsonl", pwc_long_line, ()),
    "pwc-twice": ("links-between-papers-and-code.json", pwc_twice, ()),
    "positions": ("works.jsonl", positions, ()),
    "field-30mb": ("openalex-field.json", field_30mb, ()),
    "bz2-spaces": ("list.txt.bz2", bz2_spaces, ()),
    "bad-lines-gz": ("bad.jsonl.gz", bad_lines_gz, ()),
    "zip-members": ("many.zip", zip_members, ()),
    "zip-deflate-bomb": ("bomb.zip", zip_deflate_bomb, ()),
    "xz-dictionary": ("dictionary.json.xz", xz_dictionary, ()),
    "csv-cells": ("cells.csv", csv_cells, ()),
    "dtd-entities": ("entities.xml", dtd_entities, ("--source-format", "dblp")),
}


def prepared(name: str, papers: int) -> Path:
    """The case's folder: its hostile file (made once) and the good file."""
    filename, make, _ = CASES[name]
    folder = OUT / name
    path = folder / filename
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{filename}.partial"
        make(partial, papers)
        partial.rename(path)
    good = OUT / "good" / "good.json"
    good.parent.mkdir(parents=True, exist_ok=True)
    good.write_text(json.dumps(GOOD), "utf-8")
    return path


def run_case(name: str, papers: int, timeout: float) -> str:
    """One case's row of the table."""
    path = prepared(name, papers)
    database = OUT / f"{name}.db"
    for leftover in OUT.glob(f"{name}.db*"):
        leftover.unlink()
    flags = " ".join(CASES[name][2])
    command = (
        f"ulimit -v {ADDRESS_SPACE_KB}; exec {sys.executable} -m etl run "
        f"'{path}' '{OUT / 'good' / 'good.json'}' --db 'sqlite:///{database}' -q {flags}"
    )
    size = path.stat().st_size
    try:
        sample = measure(["bash", "-c", command], timeout=timeout)
    except MeasureTimeout:
        took = f">{timeout:.0f}"
        return f"{name:<20} {size:>13,} {'-':>4} {took:>8} {'':>8} {'':>8}  timed out"
    said = next(
        (line for line in sample.output.splitlines() if path.name in line or "Error" in line),
        sample.output.splitlines()[0] if sample.output else "",
    )
    tree = f"{sample.tree_peak_mb:8.0f}" if sample.tree_peak_mb is not None else f"{'':>8}"
    return (
        f"{name:<20} {size:>13,} {sample.returncode:>4} {sample.wall:8.1f} "
        f"{sample.peak_mb:8.0f} {tree}  {said.strip()[:150]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), help="these cases only")
    parser.add_argument("--papers", type=int, default=400_000, help="papers of pwc-twice")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a case may take")
    parser.add_argument("--clean", action="store_true", help="make every file again")
    arguments = parser.parse_args()
    if arguments.clean and OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True, exist_ok=True)
    print(
        f"{'case':<20} {'input bytes':>13} {'exit':>4} {'wall s':>8} {'peak MB':>8} {'all MB':>8}"
    )
    for name in arguments.only or CASES:
        print(run_case(name, arguments.papers, arguments.timeout), flush=True)


if __name__ == "__main__":
    main()

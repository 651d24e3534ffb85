"""Whether the transform's output is unchanged: every field of every bundle, dumped canonically.

Usage:
    python benchmarks/equivalence.py prepare --n 12000 --lists LISTS [--commit SHA]
    python benchmarks/equivalence.py dump [--rev REV] [--batch N] -o benchmarks/out/eq-REV.jsonl
    python benchmarks/equivalence.py compare A.jsonl B.jsonl

`prepare` freezes the input once, as raw records (pickled to
benchmarks/out/equivalence-input.pickle), so that the extractor's own changes never move the
comparison:

- the first N generated records (`generate.py`, seed 1);
- the records of a few public paper lists read from LISTS (a git directory or a folder of the
  papercopilot/paperlists collection, at `--commit`, default HEAD), through etl's extractor;
- the packaged seed lists and the made-up gold abstracts (`tests/gold/seeds.jsonl`,
  `unseen.jsonl`, `fresh.jsonl`);
- variants of 300 real records that take the rare paths: text that lower-casing lengthens
  (`İ`), case folding that changes non-ASCII letters, upper case, swapped case, full-width
  and accented letters, white space runs and markup.

`dump` transforms every record with the packaged taxonomy, and the real, seed and variant
records again with two others (the packaged topics without tasks, and a small made-up
taxonomy with acronym terms, `not` phrases, tasks, doers and datasets), and writes one JSON
line per bundle: every field, floats as written by `repr`. With `--rev` it imports etl as it
was at that revision (`snapshot.py`); with `--batch N`, the records go through
`etl.transform.transform_records` N at a time (one by one where the revision has no
batches), so that dumps in batches of different sizes show that a paper's output never
depends on its batch. `compare` names the first differing records and fields
and exits 1 if any differ. Dumps are local files (benchmarks/out/ is not committed).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
INPUT = OUT / "equivalence-input.pickle"
# Lists of different fields and eras (none of the lists kept for independent checks).
LIST_FILES = (
    "nips/nips2016.json",
    "cvpr/cvpr2018.json",
    "acl/acl2022.json",
    "icra/icra2021.json",
    "colt/colt2021.json",
)
GOLD_FILES = ("seeds.jsonl", "unseen.jsonl", "fresh.jsonl")
VARIANTS = 300
# A made-up taxonomy for the paths the packaged one may not take: acronym terms, `not`
# phrases, a term under two topics, tasks with terms, doers and datasets.
CUSTOM_TAXONOMY = """
[[topic]]
slug = "lang"
name = "Language"
terms = ["language model", "LLM", "NLP", "text", "machine translation", "multi-modal"]
not = ["text box", "language model head"]

[[topic]]
slug = "vision"
name = "Vision"
parent = "lang"
terms = ["image", "CNN", "object detection", "segmentation", "3D", "video", "multi-modal"]
not = ["word segmentation"]

[[topic]]
slug = "learning"
name = "Learning"
terms = ["reinforcement learning", "RL", "graph neural network", "GNN", "self-supervised",
         "pre-training", "non-convex", "semi-supervised learning", "policy"]

[[task]]
name = "Object Detection"
topic = "vision"
terms = ["detecting objects"]
datasets = ["COCO", "PASCAL VOC"]

[[task]]
name = "Machine Translation"
topic = "lang"
datasets = ["WMT"]

[[task]]
name = "Question Answering"
topic = "lang"
terms = ["QA"]
datasets = ["SQuAD"]

[[task]]
name = "Image Classification"
topic = "vision"
datasets = ["ImageNet", "CIFAR-10"]
"""


def git_show(lists: Path, commit: str, file: str) -> str:
    """A list file's text from a git directory at a commit (or from a plain folder)."""
    if not (lists / "HEAD").is_file():
        return (lists / file).read_text("utf-8")
    result = subprocess.run(
        ["git", f"--git-dir={lists}", "show", f"{commit}:{file}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def extracted(path: Path) -> list[Any]:
    """The raw records etl's extractor reads from a file (rejects left out)."""
    from etl.extract import identify, read_records
    from etl.models import RawRecord

    return [r for r in read_records(identify(path)) if isinstance(r, RawRecord)]


def variants(records: list[Any]) -> list[Any]:
    """Records whose text takes the transform's rare paths (see the module docstring)."""
    edits = (
        lambda s: s.replace("a", "İ", 2),  # lower() makes two characters of one
        lambda s: s.replace("e", "é").replace("o", "Ö", 3),  # non-ASCII letters, case folded
        str.upper,
        str.swapcase,
        lambda s: s.replace(" ", "  ", 5).replace(". ", ".\n", 3),
        lambda s: s.replace("ss", "ß").replace("fi", "ﬁ"),  # upper() lengthens these
        lambda s: s.replace("A", "Ａ").replace("1", "１"),  # full width
        lambda s: "**" + s.replace(" we ", " $\\mathcal{W}$ we ", 1) + "** \\textbf{X}",
    )
    out = []
    for k, record in enumerate(records[:VARIANTS]):
        edit = edits[k % len(edits)]
        out.append(
            dataclasses.replace(
                record,
                title=edit(record.title) if record.title else record.title,
                abstract=edit(record.abstract) if record.abstract else record.abstract,
            )
        )
    return out


def prepare(args: argparse.Namespace) -> int:
    """Freeze the input records (see the module docstring)."""
    sys.path.insert(0, str(HERE))
    from bench_load import dataset

    sets: dict[str, list[Any]] = {"generated": extracted(dataset(args.n, 1))[: args.n]}
    lists = Path(args.lists)
    commit = args.commit
    if (lists / "HEAD").is_file():
        commit = subprocess.run(
            ["git", f"--git-dir={lists}", "rev-parse", commit],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    real: list[Any] = []
    with tempfile.TemporaryDirectory() as scratch:
        for file in args.files:
            path = Path(scratch) / file.replace("/", "_")
            path.write_text(git_show(lists, commit, file), "utf-8")
            real.extend(extracted(path))
        gold: list[Any] = []
        for seed in sorted((REPO / "seeds").glob("*.txt")):
            gold.extend(extracted(seed))
        for name in GOLD_FILES:
            lines = (REPO / "tests" / "gold" / name).read_text("utf-8").splitlines()
            keep = [
                {k: v for k, v in json.loads(line).items() if k in ("id", "abstract", "title")}
                for line in lines
                if line.strip()
            ]
            path = Path(scratch) / f"gold-{name}"
            path.write_text("\n".join(json.dumps(r) for r in keep) + "\n", "utf-8")
            gold.extend(extracted(path))
    sets["real"] = real
    sets["gold"] = gold
    sets["variants"] = variants(real[::13])
    OUT.mkdir(exist_ok=True)
    with INPUT.open("wb") as handle:
        pickle.dump({"commit": commit, "files": list(args.files), "sets": sets}, handle)
    counts = ", ".join(f"{name} {len(records):,}" for name, records in sets.items())
    print(f"{INPUT}: {counts} records (lists at {commit[:12]})")
    return 0


def canonical(value: Any) -> Any:
    """Plain JSON data for a bundle: dataclasses as field maps, floats as their repr."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [canonical(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    return value


def taxonomies() -> dict[str, Any]:
    """The packaged taxonomy, its topics alone, and the made-up one."""
    from importlib import resources

    from etl.transform import load_taxonomy

    found = {"default": load_taxonomy()}
    with tempfile.TemporaryDirectory() as scratch:
        topics = Path(scratch) / "topics.toml"
        topics.write_text(resources.files("etl.data").joinpath("taxonomy.toml").read_text("utf-8"))
        found["topics-only"] = load_taxonomy(topics)
        custom = Path(scratch) / "custom.toml"
        custom.write_text(CUSTOM_TAXONOMY, "utf-8")
        found["custom"] = load_taxonomy(custom)
    return found


def dump(args: argparse.Namespace) -> int:
    """Transform the frozen records and write every bundle canonically."""
    if args.rev:
        sys.path.insert(0, str(HERE))
        from snapshot import prepare as snapshot

        sys.path.insert(0, str(snapshot(args.rev)))
    import etl.transform

    def bundles(records: list[Any], taxonomy: Any) -> Any:
        """The records' bundles, in batches of `--batch` when the revision has batches."""
        batched = getattr(etl.transform, "transform_records", None)
        if not args.batch or batched is None:
            return (etl.transform.transform(record, taxonomy) for record in records)
        return (
            bundle
            for start in range(0, len(records), args.batch)
            for bundle in batched(records[start : start + args.batch], taxonomy)
        )

    with INPUT.open("rb") as handle:
        frozen = pickle.load(handle)
    digest = hashlib.sha256()
    tick = time.process_time()
    count = 0
    with open(args.output, "w", encoding="utf-8") as out:
        for name, taxonomy in taxonomies().items():
            for set_name, records in frozen["sets"].items():
                if name != "default" and set_name == "generated":
                    continue  # the generated records' vocabulary is small: once is enough
                for index, made in enumerate(bundles(records, taxonomy)):
                    bundle = canonical(made)
                    line = json.dumps([name, set_name, index, bundle], ensure_ascii=False)
                    out.write(line + "\n")
                    digest.update(line.encode("utf-8"))
                    count += 1
    seconds = time.process_time() - tick
    print(f"{args.output}: {count:,} bundles, sha256 {digest.hexdigest()[:16]}, {seconds:.1f} s")
    return 0


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two canonical values differ, as paths to the differing fields."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in dict.fromkeys([*a, *b]):
            found += differences(a.get(key), b.get(key), f"{path}.{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        found = []
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            found += differences(x, y, f"{path}[{k}]")
        return found
    return [] if a == b else [f"{path}: {json.dumps(a)[:300]} != {json.dumps(b)[:300]}"]


def compare(args: argparse.Namespace) -> int:
    """Compare two dumps record by record; print the first differences."""
    differing = 0
    total = 0
    with open(args.a, encoding="utf-8") as a, open(args.b, encoding="utf-8") as b:
        for left, right in zip(a, b, strict=True):
            total += 1
            if left == right:
                continue
            differing += 1
            if differing <= args.show:
                x, y = json.loads(left), json.loads(right)
                print(f"{x[0]} {x[1]} #{x[2]} ({x[3]['paper']['title']!r}):")
                for line in differences(x[3], y[3])[:12]:
                    print(f"  {line}")
    print(f"{differing:,} of {total:,} bundles differ")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("prepare", help="freeze the input records")
    make.add_argument("--n", type=int, default=12_000, help="generated records")
    make.add_argument("--lists", required=True, help="the paper lists: git directory or folder")
    make.add_argument("--commit", default="HEAD")
    make.add_argument("--files", nargs="+", default=list(LIST_FILES))
    write = commands.add_parser("dump", help="transform the frozen records, write every bundle")
    write.add_argument("--rev", help="import etl as it was at this revision")
    write.add_argument("-o", "--output", required=True)
    write.add_argument(
        "--batch", type=int, default=0, help="records per batch (transform_records; 0: one by one)"
    )
    check = commands.add_parser("compare", help="compare two dumps")
    check.add_argument("a")
    check.add_argument("b")
    check.add_argument("--show", type=int, default=10, help="differing bundles to print")
    args = parser.parse_args(argv)
    return {"prepare": prepare, "dump": dump, "compare": compare}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

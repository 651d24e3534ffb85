"""CPU of the transform per record, step by step, on generated and real records.

Usage:
    python benchmarks/bench_transform.py [--corpus generated|real|gold|variants] [--n 5000]
        [--repeats 5] [--rev REV ...] [--batch 500] [--steps] [--profile] [--callgrind]

The records are the frozen input of `equivalence.py` (run its `prepare` first): the first
`--n` generated records, or the real list records, ... Each measurement is one fresh process
(fresh caches, as a transform worker starts) that transforms every record once and reports its
CPU time (`time.process_time`) per record. A revision that transforms batches
(`etl.transform.transform_records`) gets the records `--batch` at a time, as its workers do;
an older one, one by one. With several `--rev` (a revision, or `.` for the
working tree), the revisions alternate, `--repeats` times each, and the best (least) CPU of
each is printed: on a machine shared with other work, the least is the least disturbed.

`--steps` times, in one more process per revision, each of `etl.transform`'s calls and
the steps inside them that exist at that revision (`DETAIL`), nested as they call each other.
A step is timed with `time.perf_counter` (a CPU clock costs a system call per reading), and
the steps' shares of the pass are applied to the pass's CPU time: microseconds of CPU per
record. `--profile` prints cProfile's top functions instead (cProfile inflates small calls).
`--callgrind` counts the instructions of one pass per revision under valgrind's callgrind
(only those run while a record is transformed): a measure that other work on the machine does
not disturb, at some 50 times the time.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import json
import os
import pickle
import pstats
import re
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from itertools import repeat, starmap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INPUT = HERE / "out" / "equivalence-input.pickle"

# etl.transform's calls, in the order `transform` makes them, then the steps inside them:
# (module, class or "", attribute). Those a revision lacks are left out.
TOP = [
    ("etl.transform", "", name)
    for name in (
        "clean_text",
        "find_acronyms",
        "emphasized",
        "find_methods",
        "collect_links",
        "assign_topics",
        "assign_tasks",
        "topics_and_tasks",
        "identify",
        "external_ids",
        "content_hash",
    )
]
DETAIL = [
    ("etl.transform.topics", "", "pieces"),
    ("etl.transform.topics", "", "occurrences"),
    ("etl.transform.topics", "", "ranked"),
    ("etl.transform.topics", "", "rule_evidences"),
    ("etl.transform.topics", "", "tag"),
    ("etl.transform.terms", "", "term_matches"),
    ("etl.transform.methods.base", "", "Text"),
    ("etl.transform.methods.base", "", "acronym_definitions"),
    ("etl.transform.methods.base", "", "_emphasis_starts"),
    ("etl.transform.methods.introduced", "Introduced", "_introduced"),
    ("etl.transform.methods.mentioned", "Mentioned", "_defined_mentions"),
    ("etl.transform.methods.mentioned", "Mentioned", "_mentioned"),
    ("etl.transform.methods", "_Finder", "read_title"),
    ("etl.transform.methods", "_Finder", "in_order"),
]


def records(corpus: str, n: int) -> list[Any]:
    """The frozen records of one corpus (see equivalence.py), the first n."""
    with INPUT.open("rb") as handle:
        sets = pickle.load(handle)["sets"]
    return list(sets[corpus][:n])


@contextmanager
def nested_timers(totals: dict[str, float]) -> Any:
    """Wrap the TOP and DETAIL steps so that each adds its seconds to `totals`, keyed by its
    path of calls ("find_methods/Text"); unwrapped after."""
    stack: list[str] = []

    def timer(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            stack.append(name)
            key = "/".join(stack)
            totals.setdefault(key, 0.0)  # in the order the steps are first entered
            tick = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                totals[key] = totals.get(key, 0.0) + time.perf_counter() - tick
                stack.pop()

        return call

    with ExitStack() as undo:
        for module_name, owner_name, name in TOP + DETAIL:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            owner = getattr(module, owner_name, None) if owner_name else module
            original = getattr(owner, name, None) if owner is not None else None
            if original is None:
                continue
            setattr(owner, name, timer(name, original))
            undo.callback(setattr, owner, name, original)
        yield


def one_pass(args: argparse.Namespace) -> dict[str, Any]:
    """Transform every record once in this process: CPU seconds, and the steps' seconds."""
    import etl.transform
    from etl.transform import load_taxonomy, transform

    batched = getattr(etl.transform, "transform_records", None)
    taxonomy = load_taxonomy()
    try:  # the learned tagger is read once per process: not a record's cost
        from etl.transform.tagger import load_model

        load_model()
    except ImportError:
        pass
    chosen = records(args.corpus, args.n)
    steps: dict[str, float] = {}
    with ExitStack() as stack:
        if args.steps:
            stack.enter_context(nested_timers(steps))
        profile = cProfile.Profile() if args.profile else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profile:
            profile.enable()
        # one C call (starmap's next) per record, or per batch where the revision transforms
        # batches (as its workers do): what `--callgrind` counts instructions in
        if batched is not None and args.batch > 0:
            chunks = [chosen[k : k + args.batch] for k in range(0, len(chosen), args.batch)]
            deque(starmap(batched, zip(chunks, repeat(taxonomy))), maxlen=0)  # noqa: RUF058
        else:
            deque(starmap(transform, zip(chosen, repeat(taxonomy))), maxlen=0)  # noqa: RUF058
        if profile:
            profile.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if profile:
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(40)
    return {"records": len(chosen), "cpu": cpu, "wall": wall, "steps": steps}


def run_child(rev: str, args: argparse.Namespace, steps: bool) -> dict[str, Any]:
    """One pass in a fresh process importing etl as at `rev` ("." for the working tree)."""
    env = dict(os.environ, PYTHONHASHSEED="0")  # instruction counts repeat exactly
    if rev != ".":
        sys.path.insert(0, str(HERE))
        from snapshot import prepare

        env["PYTHONPATH"] = os.pathsep.join([str(prepare(rev)), env.get("PYTHONPATH", "")])
    command = [sys.executable, __file__, "--child", "--corpus", args.corpus, "--n", str(args.n)]
    command += ["--batch", str(args.batch)]
    if steps:
        command.append("--steps")
    if args.profile:
        command.append("--profile")
    if args.callgrind:
        out = HERE / "out" / "callgrind.out.%p"  # one file per process: runs may overlap
        valgrind = ["valgrind", "--tool=callgrind", "--toggle-collect=starmap_next"]
        command = [*valgrind, f"--callgrind-out-file={out}", *command]
    result = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    if args.profile:
        print(result.stderr)
    parsed: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    if args.callgrind:
        collected = re.search(r"Collected : (\d+)", result.stderr)
        parsed["instructions"] = int(collected.group(1)) if collected else 0
    return parsed


def print_steps(rev: str, result: dict[str, Any]) -> None:
    """The steps of one pass as a tree: microseconds of CPU per record."""
    steps: dict[str, float] = result["steps"]
    scale = result["cpu"] / result["wall"] * 1e6 / result["records"]
    print(f"\n{rev}: steps, us of CPU per record (shares of a {result['cpu']:.2f} s pass)")
    top = sum(v for k, v in steps.items() if "/" not in k)
    for key, seconds in steps.items():
        depth = key.count("/")
        children = sum(
            v for k, v in steps.items() if k.startswith(key + "/") and k.count("/") == depth + 1
        )
        rest = f"  (own {(seconds - children) * scale:.0f})" if children else ""
        name = "  " * depth + key.rsplit("/", 1)[-1]
        print(f"  {name:<34}{seconds * scale:>8.0f}{rest}")
    print(f"  {'(outside the steps)':<34}{(result['wall'] - top) * scale:>8.0f}")
    print(f"  {'transform in all':<34}{result['cpu'] * 1e6 / result['records']:>8.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", default="generated", choices=("generated", "real", "gold", "variants")
    )
    parser.add_argument("--n", type=int, default=5_000, help="records (at most)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rev", action="append", help="revision ('.': working tree)")
    parser.add_argument(
        "--batch",
        type=int,
        default=500,
        help="records per `transform_records` call where the revision has it (0: one by one)",
    )
    parser.add_argument("--steps", action="store_true", help="time the steps too")
    parser.add_argument("--profile", action="store_true", help="cProfile's top functions")
    parser.add_argument(
        "--callgrind", action="store_true", help="count instructions (valgrind) instead"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(one_pass(args)))
        return 0
    revs = args.rev or ["."]
    best: dict[str, list[float]] = {rev: [] for rev in revs}
    for _ in range(1 if args.callgrind else args.repeats):
        for rev in revs:
            result = run_child(rev, args, steps=False)
            if args.callgrind:
                best[rev].append(result["instructions"] / result["records"] / 1e3)
            else:
                best[rev].append(result["cpu"] * 1e6 / result["records"])
    unit = "thousand instructions" if args.callgrind else "us of CPU"
    print(f"{args.corpus}: {result['records']:,} records, {unit} per record, one pass each")
    for rev, samples in best.items():
        runs = ", ".join(f"{s:.0f}" for s in samples)
        print(f"  {rev:<12} best {min(samples):>6.0f}   ({runs})")
    if (args.steps or args.profile) and not args.callgrind:
        for rev in revs:
            result = run_child(rev, args, steps=args.steps)
            if args.steps:
                print_steps(rev, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

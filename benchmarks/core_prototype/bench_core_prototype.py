"""The compiled core's prototype against the pure-Python term matcher: same matches, and
how much less time.

Usage:
    pip install cython                   # the prototype's only build need (and a C++ compiler)
    python benchmarks/core_prototype/bench_core_prototype.py [--corpus generated] [--n 3000]

Builds `wordtrie.pyx` into benchmarks/out/core_prototype/ (once), reads the frozen records
of `equivalence.py` (run its `prepare` first), cleans their abstracts and titles as the
transform does, then for each text finds the longest matches of the packaged taxonomy's
topic and task word tries both ways: `etl.transform.terms` (the words as `words_of` reads
them, then `_longest_matches`, longest kept) and the prototype (word ids in one C loop, the
trie as integer arrays). Every text's matches must be equal (the same ending lists); texts
holding `İ` or `Σ` are left to the Python reader (as `words_of` reads them apart), and counted.
Timing: process time of a pass over all texts, each way, alternated, best of `--repeats`.
"""

from __future__ import annotations

import argparse
import importlib
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "out" / "core_prototype"
INPUT = HERE.parent / "out" / "equivalence-input.pickle"


def built() -> Any:
    """The compiled prototype module (built into OUT the first time)."""
    OUT.mkdir(parents=True, exist_ok=True)
    if not list(OUT.glob("wordtrie*.so")):
        shutil.copy(HERE / "wordtrie.pyx", OUT / "wordtrie.pyx")
        command = [sys.executable, "-m", "Cython.Build.Cythonize", "-i", "-3", "wordtrie.pyx"]
        subprocess.run(command, cwd=OUT, check=True, capture_output=True)
    sys.path.insert(0, str(OUT))
    return importlib.import_module("wordtrie")


def python_matches(text: str, trie: Any) -> dict[int, Any]:
    """The pure transform's longest word-trie matches of one text, none inside another."""
    from etl.transform.terms import _longest_matches, words_of

    kept = {}
    longest_end = -1
    for start, (end, ending) in _longest_matches(trie, words_of(text)[1]).items():
        if end > longest_end:
            longest_end = end
            kept[start] = (end, ending)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", default="generated", choices=("generated", "real", "gold", "variants")
    )
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    wordtrie = built()
    from etl.transform import load_taxonomy
    from etl.transform.clean import clean_text

    taxonomy = load_taxonomy()
    with INPUT.open("rb") as handle:
        records = pickle.load(handle)["sets"][args.corpus][: args.n]
    texts = [clean_text(r.abstract or "") for r in records]
    texts += [clean_text(r.title) for r in records if r.title]
    tries = {"topics": taxonomy.index.words, "tasks": taxonomy.task_index.words}
    for name, trie in tries.items():
        compiled = wordtrie.WordTrie(trie)
        left = 0
        for text in texts:
            fast = compiled.matches(text)
            if fast is None:
                left += 1
                continue
            slow = python_matches(text, trie)
            assert fast == slow, (name, text[:80], fast, slow)
            assert all(a[1] is b[1] for a, b in zip(fast.values(), slow.values(), strict=True))
        fast_texts = [t for t in texts if compiled.ids(t) is not None]
        best = {"python": float("inf"), "prototype": float("inf")}
        for _ in range(args.repeats):
            for way in best:
                tick = time.process_time()
                if way == "python":
                    for text in fast_texts:
                        python_matches(text, trie)
                else:
                    for text in fast_texts:
                        compiled.matches(text)
                best[way] = min(best[way], time.process_time() - tick)
        per = {way: seconds / len(fast_texts) * 1e6 for way, seconds in best.items()}
        print(
            f"{name}: {len(texts):,} texts ({left} left to Python), matches equal; "
            f"us per text: python {per['python']:.1f}, prototype {per['prototype']:.1f} "
            f"({per['python'] / per['prototype']:.1f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

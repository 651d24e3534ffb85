"""The compiled transform (mypyc, built by `pip install .` where a C compiler is present)
gives the pure-Python transform's output, bundle for bundle, on a generated corpus.

Skipped where the installed package holds no compiled module (an editable install, or a
machine without a compiler): there is then nothing to compare.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.generate import generate

REPO = Path(__file__).resolve().parents[2]
GOLD = Path(__file__).resolve().parents[1] / "gold"
# Every bundle of a file's records, in batches of 500 (as the workers do), with the packaged
# taxonomy's tagger and with the rules alone, each as its repr: dataclasses, floats and all.
DUMP = """
import pickle
import sys
from pathlib import Path
from etl.extract import identify, read_records
from etl.models import RawRecord
from etl.transform import load_taxonomy, transform_records

records = [r for r in read_records(identify(Path(sys.argv[1]))) if isinstance(r, RawRecord)]
for tagger in ("model", "rules"):
    # as the workers get it: pickled (compiled classes pickle by their constructor)
    taxonomy = pickle.loads(pickle.dumps(load_taxonomy(tagger=tagger)))
    for start in range(0, len(records), 500):
        for bundle in transform_records(records[start : start + 500], taxonomy):
            print(repr(bundle))
"""


def python(code: str, *args: str, path: str | None, cwd: Path) -> str:
    """Run code in a fresh interpreter that imports `etl` from `path` (None: as installed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if path is not None:
        env["PYTHONPATH"] = path
    command = [sys.executable, "-P", "-c", code, *args]  # -P: never the current folder
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def compiled_install(cwd: Path) -> Path | None:
    """The installed package's transform folder, when it holds compiled modules."""
    code = "import etl.transform, pathlib; print(pathlib.Path(etl.transform.__file__).parent)"
    folder = Path(python(code, path=None, cwd=cwd).strip())
    if folder.is_relative_to(REPO) or not any(folder.glob("*.so")):
        return None
    return folder


def test_compiled_and_pure_transforms_give_identical_bundles(tmp_path: Path) -> None:
    installed = compiled_install(tmp_path)
    if installed is None:
        pytest.skip("the installed package is not compiled (editable, or no C compiler)")
    assert not any((REPO / "etl" / "transform").rglob("*.so")), "the sources hold a build"
    [corpus] = generate(400, tmp_path / "records.jsonl", seed=5)
    with corpus.open("a", encoding="utf-8") as handle:
        for name in ("seeds.jsonl", "unseen.jsonl", "fresh.jsonl"):
            for line in (GOLD / name).read_text("utf-8").splitlines():
                if line.strip():
                    record = json.loads(line)
                    kept = {k: record[k] for k in ("id", "title", "abstract") if k in record}
                    handle.write(json.dumps(kept) + "\n")
    compiled = python(DUMP, str(corpus), path=None, cwd=tmp_path)
    pure = python(DUMP, str(corpus), path=str(REPO), cwd=tmp_path)
    assert compiled.count("\n") >= 2 * 450
    differing = [
        (a, b) for a, b in zip(compiled.splitlines(), pure.splitlines(), strict=True) if a != b
    ]
    assert not differing, differing[:2]

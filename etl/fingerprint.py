"""What decides a file's papers besides its bytes, as one digest.

A file is skipped when its bytes and this fingerprint are what they were at its last load. The
fingerprint is derived, never bumped by hand: it hashes the code that reads and transforms
records (the extract and transform stages, the models they hand over, the worker that runs
them) and every data file they read (`etl/data/**`: word lists, vocabularies, the packaged
taxonomy and venues), then the run's own inputs (taxonomy, venue table, `--venue`, `--year`).
Any change to any of them re-reads every file once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
# The code between a file's bytes and the rows the writer gets, relative to the package.
CODE = ("extract", "transform", "models.py", "parallel.py")
DATA = "data"
# Package data no stage reads while loading (`etl report`'s template).
NOT_LOADING_DATA = frozenset({"report.html.j2"})


@lru_cache(maxsize=1)
def code_and_data_digest() -> str:
    """`digest_of` the installed package, computed once per process."""
    return digest_of(PACKAGE)


def digest_of(package: Path) -> str:
    """A digest of the loading code and package data under `package` (each file's path
    relative to it, and its bytes)."""
    digest = hashlib.sha256()
    for path in _inputs(package):
        digest.update(path.relative_to(package).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _inputs(package: Path) -> list[Path]:
    """The files whose bytes the digest covers, in a fixed order."""
    files: list[Path] = []
    for name in CODE:
        path = package / name
        files.extend(_python_files(path) if path.is_dir() else [path])
    files.extend(path for path in _all_files(package / DATA) if path.name not in NOT_LOADING_DATA)
    return sorted(files)


def _python_files(folder: Path) -> Iterator[Path]:
    return (path for path in folder.rglob("*.py") if "__pycache__" not in path.parts)


def _all_files(folder: Path) -> Iterator[Path]:
    return (
        path
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith(".")
    )


def fingerprint(run_inputs: Iterable[object]) -> str:
    """The fingerprint of a run: the code and data digest with the run's own inputs (their
    repr, which is deterministic for the frozen taxonomy and sorted venue spellings)."""
    decided_by = repr((code_and_data_digest(), *run_inputs))
    return hashlib.sha256(decided_by.encode("utf-8")).hexdigest()[:24]

"""Run a committed revision of `etl`, isolated from edits in the working tree.

The project is installed editable, so a benchmark normally runs whatever `etl/` holds at that
moment, even if someone changes it mid-run. `prepare(rev)` extracts the revision with
`git archive` into benchmarks/out/etl-<commit>/ and lays it out as the wheel would (applying
`[tool.setuptools.package-dir]`, e.g. `sql/` → `etl/sql/`). Putting that folder first on
PYTHONPATH makes `import etl` (the `etl` script, its spawned workers, or this process) load
the snapshot: sys.path is searched before the editable-install finder.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"


def git(*args: str) -> bytes:
    """Output of a git command in the repository (raises if it fails)."""
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, check=True).stdout


def resolve(rev: str) -> str:
    """The short commit id of a revision."""
    return git("rev-parse", "--short", f"{rev}^{{commit}}").decode().strip()


def prepare(rev: str) -> Path:
    """A folder to put on PYTHONPATH that imports `etl` as it was at `rev` (cached)."""
    commit = resolve(rev)
    root = OUT / f"etl-{commit}"
    site = root / "site"
    if site.exists():
        return site
    source = root / "src"
    shutil.rmtree(root, ignore_errors=True)
    source.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(git("archive", commit)), mode="r:") as archive:
        archive.extractall(source, filter="data")
    lay_out(source, root / "site.partial")
    (root / "site.partial").rename(site)
    return site


def lay_out(source: Path, site: Path) -> None:
    """Copy the `etl` package and every package-dir mapping of pyproject.toml into `site`."""
    config = tomllib.loads((source / "pyproject.toml").read_text("utf-8"))
    mapping = config.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    shutil.copytree(source / "etl", site / "etl")
    for package, folder in mapping.items():
        if package.startswith("etl.") and (source / folder).is_dir():
            target = site.joinpath(*package.split("."))
            shutil.copytree(source / folder, target, dirs_exist_ok=True)


def environment(site: Path | None) -> dict[str, str] | None:
    """The environment for a child process that should import the snapshot (None: inherit)."""
    if site is None:
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(site), env.get("PYTHONPATH"))))
    return env

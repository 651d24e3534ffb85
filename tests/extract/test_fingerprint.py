"""The fingerprint that decides whether an unchanged file is read again is derived from every
file that decides its papers: a change to any of them must change it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from etl.fingerprint import CODE, DATA, NOT_LOADING_DATA, PACKAGE, digest_of, fingerprint
from tests.helpers import load

DATA_FILES = sorted(
    path.relative_to(PACKAGE).as_posix()
    for path in (PACKAGE / DATA).rglob("*")
    if path.is_file() and "__pycache__" not in path.parts and path.name not in NOT_LOADING_DATA
)
CODE_FILES = sorted(
    path.relative_to(PACKAGE).as_posix()
    for name in CODE
    for path in ((PACKAGE / name).rglob("*.py") if (PACKAGE / name).is_dir() else [PACKAGE / name])
    if "__pycache__" not in path.parts
)


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package to change files in."""
    copy = tmp_path_factory.mktemp("package") / "etl"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_every_package_data_file_and_the_loading_code_are_covered() -> None:
    assert len(DATA_FILES) > 30  # word lists, vocabularies, taxonomy, tasks, venues
    assert {"data/taxonomy.toml", "data/tasks.toml", "data/venues.toml"} <= set(DATA_FILES)
    assert "data/methods/datasets.txt" in DATA_FILES
    assert "transform/ids.py" in CODE_FILES and "extract/readers.py" in CODE_FILES


@pytest.mark.parametrize("relative", DATA_FILES + CODE_FILES)
def test_a_changed_file_changes_the_fingerprint(package_copy: Path, relative: str) -> None:
    before = digest_of(package_copy)
    path = package_copy / relative
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n")
        assert digest_of(package_copy) != before, relative
        path.write_bytes(original[:-1] + bytes([original[-1] ^ 1]) if original else b"x")
        assert digest_of(package_copy) != before, relative
    finally:
        path.write_bytes(original)
    assert digest_of(package_copy) == before


def test_a_new_data_file_changes_the_fingerprint(package_copy: Path) -> None:
    before = digest_of(package_copy)
    added = package_copy / DATA / "methods" / "new_list.txt"
    added.write_text("a word\n", "utf-8")
    try:
        assert digest_of(package_copy) != before
    finally:
        added.unlink()


def test_the_report_template_does_not_re_read_every_file(package_copy: Path) -> None:
    before = digest_of(package_copy)
    template = package_copy / DATA / "report.html.j2"
    template.write_text(template.read_text("utf-8") + "\n", "utf-8")
    assert digest_of(package_copy) == before


def test_the_run_inputs_change_the_fingerprint() -> None:
    assert fingerprint(("a", None)) != fingerprint(("b", None))
    assert fingerprint(("a", None)) == fingerprint(("a", None))


def test_a_file_loaded_under_another_fingerprint_is_read_again(tmp_path: Path, seeds: Path) -> None:
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    load(url, seeds)
    assert load(url, seeds).sources_skipped == 2
    engine = create_engine(url)
    with engine.begin() as connection:  # as a database loaded by an older version holds
        connection.execute(text("UPDATE sources SET fingerprint = 'older'"))
    engine.dispose()
    again = load(url, seeds)
    assert again.sources_loaded == 2 and again.papers_unchanged == 38

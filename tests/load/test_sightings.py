"""A paper is what all its sightings say, whatever order they arrive in: nothing a source gave
is lost, a corrected title keeps the paper, and methods do not depend on which file came first.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from etl.cli import main
from etl.load import SourceLoader
from tests.helpers import (
    BACKENDS,
    fetch,
    fetch_one,
    fresh_database,
    load,
    new_run,
    rows_of,
    snapshot,
    write_json,
)

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

FIRST = (
    "We study how the curvature of the loss landscape shapes generalization in deep networks "
    "and introduce filter normalization, a simple visualization method that makes loss "
    "surfaces of different architectures comparable, revealing that skip connections produce "
    "smooth minimizers and that sharpness correlates with the generalization gap."
)
# The same paper as accepted later: its abstract revised (most of its words kept).
REVISED = (
    "Neural network training relies on finding good minimizers of highly non-convex losses. "
    "We explore the structure of loss landscapes using filter normalization, a simple "
    "visualization method that makes loss surfaces of different architectures comparable, "
    "revealing that skip connections produce smooth minimizers and that sharpness "
    "correlates with the generalization gap of deep networks."
)
OTHER = (
    "A queueing model of hospital emergency departments predicts waiting times from arrival "
    "rates, staffing levels and triage categories, and a randomized scheduling policy cuts "
    "the median wait by a third in a year-long deployment across four regional hospitals."
)
REPO = "https://github.com/tomgoldstein/loss-landscape"
TITLE = "Visualizing the Loss Landscape of Neural Nets"


def iclr_and_neurips(folder: Path) -> tuple[Path, Path, Path]:
    """Three lists naming one paper: rejected at ICLR with its code, accepted at NeurIPS
    without (its abstract revised), and a plain-text list of NeurIPS abstracts."""
    folder.mkdir(parents=True, exist_ok=True)
    iclr = write_json(
        folder / "iclr2018.json",
        [
            {
                "title": TITLE,
                "abstract": FIRST,
                "author": "Hao Li; Zheng Xu",
                "status": "Reject",
                "github": REPO,
                "venue": "ICLR",
                "year": 2018,
            },
            {"title": "Hospital Queues", "abstract": OTHER, "venue": "ICLR", "year": 2018},
        ],
    )
    neurips = write_json(
        folder / "nips2018.json",
        [
            {
                "title": TITLE,
                "abstract": REVISED,
                "author": "H. Li; Zheng Xu; Tom Goldstein",
                "status": "Poster",
                "venue": "NeurIPS",
                "year": 2018,
            }
        ],
    )
    plain = folder / "neurips2018.txt"
    plain.write_text(f"NeurIPS 2018 papers\n\n{REVISED}\n", "utf-8")
    return iclr, neurips, plain


@pytest.mark.parametrize("one_run", [True, False], ids=["one run", "a run per file"])
def test_any_order_of_three_lists_gives_one_database_with_every_repository(
    db_url: str, tmp_path: Path, one_run: bool
) -> None:
    files = iclr_and_neurips(tmp_path / "lists")
    kind = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    reference = None
    for number, order in enumerate(itertools.permutations(files)):
        folder = tmp_path / f"order{number}"
        folder.mkdir()
        with fresh_database(kind, folder, migrated=True) as url:
            for batch in [order] if one_run else [[path] for path in order]:
                load(url, *batch)
            assert fetch(url, "SELECT code_url FROM papers_with_code") == [(REPO,)], order
            shown = fetch(
                url, "SELECT venue, status, abstract FROM papers WHERE title = :t", {"t": TITLE}
            )
            assert shown == [("NeurIPS", "Poster", REVISED)], order  # the accepted sighting
            tables = snapshot(url)
        assert len(tables["papers"]) == 2
        reference = reference or tables
        assert tables == reference, order


def test_removing_a_file_restores_what_the_other_files_say(db_url: str, tmp_path: Path) -> None:
    iclr, neurips, _ = iclr_and_neurips(tmp_path)
    load(db_url, iclr, neurips)
    neurips.unlink()
    load(db_url, iclr, tmp_path / "*.json", prune=True)
    shown = fetch(
        db_url, "SELECT venue, status, abstract FROM papers WHERE title = :t", {"t": TITLE}
    )
    assert shown == [("ICLR", "Reject", FIRST)]
    assert fetch(db_url, "SELECT code_url FROM papers_with_code") == [(REPO,)]
    authors = "SELECT a.name FROM paper_authors x JOIN authors a ON a.id = x.author_id ORDER BY x.position"
    assert fetch(db_url, authors) == [("Hao Li",), ("Zheng Xu",)]


@pytest.mark.parametrize("reverse", [False, True])
def test_a_main_track_sighting_is_shown_before_a_workshop_one(
    db_url: str, tmp_path: Path, reverse: bool
) -> None:
    common = {"title": TITLE, "abstract": FIRST, "year": 2018}
    files = [
        write_json(tmp_path / "iclr.json", [{**common, "venue": "ICLR", "status": "Workshop"}]),
        write_json(tmp_path / "neurips.json", [{**common, "venue": "NeurIPS", "status": "Poster"}]),
    ]
    load(db_url, *(reversed(files) if reverse else files))
    assert fetch(db_url, "SELECT venue, status FROM papers") == [("NeurIPS", "Poster")]


def six_papers(title_of_second: str) -> list[dict[str, Any]]:
    """Six titled papers with substantive abstracts of their own."""
    return [
        {
            "title": title_of_second if n == 2 else f"Sorting networks, part {n}",
            "abstract": f"{OTHER} This is the study numbered {n} of {n * 7} experiments.",
            "venue": "ICML",
            "year": 2025,
        }
        for n in range(1, 7)
    ]


@pytest.mark.parametrize("with_abstract_list", [False, True])
def test_a_corrected_title_keeps_the_paper_and_is_one_change(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], with_abstract_list: bool
) -> None:
    listing = write_json(tmp_path / "icml.json", six_papers("Sorting networks, part 2"))
    paths: list[Path] = [listing]
    if with_abstract_list:  # a second list names the paper by its abstract alone
        plain = tmp_path / "icml.txt"
        plain.write_text(f"ICML 2025 papers\n\n{six_papers('')[1]['abstract']}\n", "utf-8")
        paths.append(plain)
    load(db_url, *paths)
    ids = fetch(db_url, "SELECT id, title FROM papers ORDER BY id")
    write_json(listing, six_papers("Sorting networks, part 2 (corrected)"))
    report = load(db_url, *paths)
    assert (report.papers_inserted, report.papers_updated, report.papers_removed) == (0, 1, 0)
    renamed = [
        (pid, "Sorting networks, part 2 (corrected)" if "part 2" in t else t) for pid, t in ids
    ]
    assert fetch(db_url, "SELECT id, title FROM papers ORDER BY id") == renamed
    changes = fetch(
        db_url,
        "SELECT kind, field, old_value, new_value FROM change_events WHERE run_id = :r",
        {"r": report.run_id},
    )
    assert changes == [
        (
            "paper_changed",
            "title",
            "Sorting networks, part 2",
            "Sorting networks, part 2 (corrected)",
        )
    ]
    with pytest.raises(SystemExit) as exit_:
        main(["changes", "--db", db_url, "--run", str(report.run_id), "--format", "csv"])
    assert exit_.value.code == 0
    shown = capsys.readouterr().out
    assert "paper_changed" in shown and "(corrected)" in shown and "paper_added" not in shown


@pytest.mark.parametrize(
    ("first", "second", "second_abstract", "papers"),
    [
        ("Anika Li", "Hana Li", OTHER, 2),  # a shared family name, other initials
        ("Hao Li", "Hao Li", OTHER, 2),  # one author, two abstracts sharing little
        ("Hao Li", "H. Li", REVISED, 1),  # an initial for the given name, a revision
        ("Hao Li", "Li Hao", REVISED, 1),  # family name first
    ],
)
def test_one_title_is_one_paper_only_for_a_compatible_first_author_and_a_revision(
    db_url: str, tmp_path: Path, first: str, second: str, second_abstract: str, papers: int
) -> None:
    one = {"title": TITLE, "abstract": FIRST, "author": first, "year": 2018}
    other = {"title": TITLE, "abstract": second_abstract, "author": second, "year": 2019}
    load(db_url, write_json(tmp_path / "a.json", [one]), write_json(tmp_path / "b.json", [other]))
    assert fetch_one(db_url, "SELECT count(*) FROM papers") == papers


def mentions(number: int) -> str:
    """Abstracts naming one artifact three ways: its acronym, its long form, and both."""
    forms = (
        "We evaluate on the ZQXB benchmark and report strong gains over prior work.",
        "We evaluate on the Zonal Query Extraction Benchmark and report strong gains.",
        "We introduce nothing new but evaluate on the Zonal Query Extraction Benchmark (ZQXB).",
    )
    return f"{forms[number % 3]} {OTHER} Study {number}."


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_methods_are_the_same_whichever_file_names_them_first(
    tmp_path: Path, order: tuple[int, ...]
) -> None:
    files = [
        write_json(
            tmp_path / f"{n}.json", [{"title": f"Paper {n}", "abstract": mentions(n), "year": 2025}]
        )
        for n in range(3)
    ]
    reference = tmp_path / "reference"
    reference.mkdir(exist_ok=True)
    expected_url = f"sqlite:///{reference / 'papers.db'}"
    if not (reference / "papers.db").exists():
        for path in files:
            load(expected_url, path)
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    for number in order:
        load(url, files[number])
    tables = snapshot(url)
    assert len(tables["methods"]) == 1  # one benchmark, however its mentions name it
    for table in ("methods", "method_aliases", "paper_methods"):
        assert tables[table] == snapshot(expected_url)[table]


@pytest.mark.postgres
def test_a_file_that_rolls_back_leaves_no_lookup_row(postgres_url: str, tmp_path: Path) -> None:
    """A loader sharing the database (another paper is stored, so it keeps the foreign keys)
    writes a whole file's authors, links and methods, then dies before its commit: none of
    them is left."""
    load(postgres_url, write_json(tmp_path / "other.json", [{"title": "Other", "abstract": OTHER}]))
    before = snapshot(postgres_url)
    listing = write_json(
        tmp_path / "new.json",
        [
            {
                "title": TITLE,
                "abstract": mentions(2),
                "author": "Ada Lovelace; Alan Turing",
                "github": REPO,
            }
        ],
    )
    engine = create_engine(postgres_url)
    try:
        with engine.connect() as connection, connection.begin() as transaction:
            source, rows = rows_of(listing)
            loader = SourceLoader(connection, source, new_run(connection), "fingerprint")
            assert loader.shared
            loader.write(rows, [])
            loader.finish()
            written = connection.execute(text("SELECT count(*) FROM authors")).scalar()
            assert written == 2  # in the transaction, until it ends
            transaction.rollback()
    finally:
        engine.dispose()
    after = snapshot(postgres_url)
    for table in ("authors", "links", "methods", "method_aliases", "listed_terms"):
        assert after[table] == before[table], table


@pytest.mark.parametrize("kind", BACKENDS)
def test_an_abstract_only_record_between_two_sightings_joins_them_in_any_order(
    kind: str, tmp_path: Path
) -> None:
    """The plain-text list names the NeurIPS version by its abstract; loaded before the
    NeurIPS list, it made a paper of its own, which the NeurIPS record then joins with the
    ICLR paper (the revision of its title): one paper, in every order."""
    files = iclr_and_neurips(tmp_path / "lists")
    for number, order in enumerate(itertools.permutations(files)):
        folder = tmp_path / f"order{number}"
        folder.mkdir()
        with fresh_database(kind, folder, migrated=True) as url:
            load(url, *order)
            assert fetch_one(url, "SELECT count(*) FROM papers WHERE title = :t", {"t": TITLE}) == 1
            assert fetch_one(url, "SELECT count(*) FROM papers") == 2


def test_a_sighting_row_keeps_the_record_its_source_gave(sqlite_url: str, tmp_path: Path) -> None:
    iclr, neurips, _ = iclr_and_neurips(tmp_path)
    load(sqlite_url, iclr, neurips)
    records = fetch(
        sqlite_url,
        "SELECT s.path, x.venue, x.status, x.record FROM paper_sources x "
        "JOIN sources s ON s.id = x.source_id JOIN papers p ON p.pk = x.paper_pk "
        "WHERE p.title = :t ORDER BY s.path",
        {"t": TITLE},
    )
    (_, *iclr_row), (_, *neurips_row) = records
    assert iclr_row[:2] == ["ICLR", "Reject"] and neurips_row[:2] == ["NeurIPS", "Poster"]
    assert json.loads(str(iclr_row[2]))["abstract"] == FIRST
    assert REPO in {link[0] for link in json.loads(str(iclr_row[2]))["links"]}
    assert json.loads(str(neurips_row[2]))["links"] == []


def test_copies_of_one_record_are_one_paper_in_the_summary(sqlite_url: str, tmp_path: Path) -> None:
    """Counted once per file, not once per batch: 1,200 copies of one record over three
    batches are one paper inserted, and a rerun of a changed copy count is one unchanged."""
    record = {"title": TITLE, "abstract": FIRST}
    listing = write_json(tmp_path / "copies.json", [record] * 1200)
    report = load(sqlite_url, listing, batch_size=500)
    assert (report.papers_inserted, report.papers_updated, report.papers_unchanged) == (1, 0, 0)
    write_json(listing, [record] * 1300)
    report = load(sqlite_url, listing, batch_size=500)
    assert (report.papers_inserted, report.papers_updated, report.papers_unchanged) == (0, 0, 1)
    assert fetch_one(sqlite_url, "SELECT count(*) FROM paper_sources") == 1300

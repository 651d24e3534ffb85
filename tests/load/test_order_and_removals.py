"""Nothing lost, whatever the order: removals that cannot race a loader adding a sighting,
and the other integrity promises of the load path (issue "nothing lost")."""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, UniqueConstraint, create_engine, event, text

from etl.load import SourceLoader, remove_all_unseen, upgrade_to_head
from etl.load import schema as s
from etl.models import RunReport
from tests.helpers import (
    BACKENDS,
    BY_NATURAL_KEYS,
    LOADERS_KEY,
    fetch,
    fetch_one,
    fresh_database,
    fresh_postgres_database,
    load,
    loader,
    new_run,
    rows_of,
    wait_until_blocked,
)
from tests.helpers import write_json as write_list

KEPT = "We study how a small recurrent model trained on short sequences of numbers learns to sort sequences ten times longer, and which units carry the order of the items."
SHARED = "We measure how often crowd workers agree on the labels of ambiguous photographs, and propose a voting rule that weighs each worker by how often they agree with the others."


def _wait_until_blocked_or_done(url: str, done: threading.Event) -> bool:
    """Whether a session of the database waits for a lock (False once `done` is set)."""
    query = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if done.is_set():
            return False
        if int(str(fetch_one(url, query))):
            return True
        time.sleep(0.02)
    raise AssertionError("the loader neither finished nor waited within a minute")


@pytest.mark.postgres
@pytest.mark.parametrize("other_commits", [True, False])
@pytest.mark.slow
def test_a_removal_never_deletes_a_sighting_another_loader_is_adding(
    tmp_path: Path, postgres_url: str, other_commits: bool
) -> None:
    """Loader B adds a sighting of paper P (not committed yet) while loader A finishes a file
    that no longer holds P, the only other place P was seen. A must not delete P under B (the
    cascade would take B's sighting, keys and child rows once B commits): it leaves P to the
    end of its run. If B rolls back instead, P has no sighting left and the end of the run
    removes it."""
    listing = tmp_path / "a.json"
    write_list(
        listing, [{"title": "Sorting", "abstract": KEPT}, {"title": "Crowds", "abstract": SHARED}]
    )
    load(postgres_url, listing)
    other = write_list(tmp_path / "b.json", [{"title": "Crowds", "abstract": SHARED}])
    engine = create_engine(postgres_url)
    b = engine.connect()
    outcome: list[Any] = []
    done = threading.Event()

    def finish_a() -> None:
        try:
            with engine.begin() as a:
                source, rows = rows_of(listing)
                loader = SourceLoader(a, source, new_run(a), "fingerprint")
                loader.write(rows, [])
                outcome.append(loader.finish())
        finally:
            done.set()

    try:
        source, rows = rows_of(other)
        loader_b = SourceLoader(b, source, new_run(b), "fingerprint")
        loader_b.write(rows, [])  # B's sighting of Crowds, not committed
        write_list(listing, [{"title": "Sorting", "abstract": KEPT}])  # Crowds left a.json
        thread = threading.Thread(target=finish_a)
        thread.start()
        _wait_until_blocked_or_done(postgres_url, done)
        loader_b.finish()
        if other_commits:
            b.commit()
        else:
            b.rollback()
        thread.join(timeout=60)
        assert done.is_set()
    finally:
        b.close()
        engine.dispose()
    (counts,) = outcome
    assert (counts.removed, counts.deferred) == (0, 1)
    titles = "SELECT title FROM papers ORDER BY title"
    sightings = (
        "SELECT p.title, s.path FROM paper_sources x JOIN papers p ON p.pk = x.paper_pk "
        "JOIN sources s ON s.id = x.source_id ORDER BY p.title"
    )
    if other_commits:
        assert fetch(postgres_url, titles) == [("Crowds",), ("Sorting",)]
        assert [(t, Path(str(p)).name) for t, p in fetch(postgres_url, sightings)] == [
            ("Crowds", "b.json"),
            ("Sorting", "a.json"),
        ]
        keys = "SELECT count(*) FROM paper_keys k JOIN papers p ON p.pk = k.paper_pk WHERE p.title = 'Crowds'"
        assert fetch_one(postgres_url, keys) == 2
    else:
        assert fetch(postgres_url, titles) == [("Crowds",), ("Sorting",)]  # until the run ends
        engine = create_engine(postgres_url)
        with engine.begin() as connection:
            assert remove_all_unseen(connection) == 1
        engine.dispose()
        assert fetch(postgres_url, titles) == [("Sorting",)]


# Order: what a paper shows does not depend on which file was loaded last.

ABSTRACTS = [
    "We propose **Kelo1Net**, a graph network that learns sparse attention over the tokens of long documents, and compare it with BERT on three retrieval benchmarks where it halves the memory.",
    "We introduce **Vardo2**, a diffusion policy for robot grasping that is trained with Adam on simulated scenes and transfers to real arms without any fine-tuning on real images at all.",
    "We present **Morrow3**, a benchmark of ambiguous photographs with labels from many crowd workers, and a voting rule that weighs each worker by how often they agree with the others.",
]


def write_shapes(folder: Path) -> list[Path]:
    """The same three papers as a JSON list with authors and repositories, a plain-text list of
    their abstracts, and a CSV with titles, abstracts and keywords."""
    folder.mkdir()
    titles = ["Kelo1Net: Sparse Attention", "Vardo2 for Grasping", "Morrow3: Crowds Disagree"]
    records = [
        {
            "title": title,
            "abstract": abstract,
            "authors": ["Ada Lee", f"Bo Chen{n}"],
            "github": f"https://github.com/lab/tool{n}",
        }
        for n, (title, abstract) in enumerate(zip(titles, ABSTRACTS, strict=True))
    ]
    listing = folder / "icml2025.json"
    listing.write_text(json.dumps(records), "utf-8")
    text = folder / "icml2025.txt"
    text.write_text("ICML 2025 paper list\n\n" + "\n\n".join(ABSTRACTS) + "\n", "utf-8")
    table = folder / "icml2025.csv"
    lines = ["title,abstract,keywords"] + [
        f'"{title}","{abstract}","graphs; robots"'
        for title, abstract in zip(titles, ABSTRACTS, strict=True)
    ]
    table.write_text("\n".join(lines) + "\n", "utf-8")
    return [listing, text, table]


def shown(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table by natural keys, without what records when a row was written (run ids,
    load times) and the content hash that tells the writer whether a record changed."""
    snapshot = {name: sorted(fetch(url, sql), key=repr) for name, sql in BY_NATURAL_KEYS.items()}
    snapshot["papers"] = sorted(
        fetch(
            url,
            "SELECT id, venue, year, title, title_raw, abstract, abstract_raw, status, "
            "keywords, extra, method_names FROM papers",
        ),
        key=repr,
    )
    return snapshot


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.slow
def test_any_load_order_of_three_shapes_shows_the_same_papers(tmp_path: Path, kind: str) -> None:
    files = write_shapes(tmp_path / "lists")
    results = {}
    for order in itertools.permutations(files):
        for each_run in (False, True):
            folder = tmp_path / f"db{len(results)}"
            folder.mkdir()
            with fresh_database(kind, folder, migrated=True) as url:
                if each_run:
                    for path in order:
                        load(url, path)
                else:
                    load(url, *order)
                results[(tuple(p.suffix for p in order), each_run)] = shown(url)
    first = next(iter(results.values()))
    assert len(first["papers"]) == 3 and len(first["paper_authors"]) == 6
    assert len(first["paper_links"]) == 3 and {r[3] for r in first["papers"]} == {
        "Kelo1Net: Sparse Attention",
        "Vardo2 for Grasping",
        "Morrow3: Crowds Disagree",
    }
    for (order, each_run), result in results.items():
        for table in first:
            assert result[table] == first[table], (order, each_run, table)


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_list_of_bare_abstracts_loaded_last_keeps_authors_and_links(
    tmp_path: Path, kind: str
) -> None:
    listing, text, _ = write_shapes(tmp_path / "lists")
    for order in ((listing, text), (text, listing)):
        folder = tmp_path / order[0].suffix[1:]
        folder.mkdir()
        with fresh_database(kind, folder, migrated=True) as url:
            for path in order:
                load(url, path)
            assert fetch_one(url, "SELECT count(*) FROM paper_authors") == 6
            assert fetch_one(url, "SELECT count(*) FROM papers_with_code") == 3
            assert fetch_one(url, "SELECT count(*) FROM papers WHERE title IS NULL") == 0


def test_no_update_writes_a_key_column(tmp_path: Path) -> None:
    """Every UPDATE the loader sends sets only non-key columns (never `papers.id`)."""
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    listing, text, table = write_shapes(tmp_path / "lists")
    statements: list[str] = []

    def capture(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    event.listen(Engine, "before_cursor_execute", capture)
    try:
        load(url, listing, text, table)
        listing.write_text(listing.read_text("utf-8").replace("Ada Lee", "Ada Li"), "utf-8")
        load(url, listing)
    finally:
        event.remove(Engine, "before_cursor_execute", capture)
    keys = {
        t.name: {c.name for c in t.primary_key.columns}
        | {c.name for u in t.constraints if isinstance(u, UniqueConstraint) for c in u.columns}
        | {c.name for c in t.columns if c.unique}
        for t in s.metadata.sorted_tables
    }
    updates = [x for x in statements if x.lstrip().upper().startswith("UPDATE")]
    assert any(x.split()[1] == "papers" for x in updates)
    for statement in updates:
        match = re.match(r"\s*UPDATE\s+(\w+)\s+SET\s+(.*?)\s+WHERE\s", statement, re.S | re.I)
        assert match, statement
        assigned = set(re.findall(r"(\w+)\s*=", re.sub(r"\(.*?\)", "", match.group(2), flags=re.S)))
        assert not assigned & keys.get(match.group(1), set()), statement  # or alembic's


# Moved folders and files that are gone.


def write_folder(folder: Path, titles: list[str]) -> None:
    """One JSON list per title pair, in a subfolder, as a user keeps lists."""
    (folder / "2025").mkdir(parents=True)
    for index in range(0, len(titles), 2):
        records = [
            {"title": title, "abstract": f"{title}: {KEPT}"} for title in titles[index : index + 2]
        ]
        write_list(folder / "2025" / f"list{index}.json", records)


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_moved_folder_reloads_as_the_same_sources(tmp_path: Path, kind: str) -> None:
    old = tmp_path / "old" / "lists"
    write_folder(old, ["One", "Two", "Three", "Four"])
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db", migrated=True) as url:
        load(url, old)
        ids = fetch(url, "SELECT id FROM sources ORDER BY id")
        new = tmp_path / "new" / "renamed"
        new.parent.mkdir()
        old.rename(new)
        report = load(url, new)  # unchanged files: the same sources, skipped
        assert report.sources_skipped == 2 and report.papers_inserted == 0
        assert fetch(url, "SELECT id FROM sources ORDER BY id") == ids
        assert all(str(p).startswith(str(new)) for (p,) in fetch(url, "SELECT path FROM sources"))
        write_list(new / "2025" / "list0.json", [{"title": "One", "abstract": f"One: {KEPT}"}])
        moved = tmp_path / "moved_again"
        new.rename(moved)
        report = load(url, moved)  # moved and changed: Two left its list, and the database
        assert report.papers_removed == 1
        assert fetch(url, "SELECT title FROM papers ORDER BY title") == [
            ("Four",),
            ("One",),
            ("Three",),
        ]
        assert fetch_one(url, "SELECT count(*) FROM sources") == 2


@pytest.mark.parametrize("kind", BACKENDS)
def test_prune_forgets_the_files_that_are_gone(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "lists"
    write_folder(folder, ["One", "Two", "Three", "Four"])
    elsewhere = write_list(
        tmp_path / "other.json", [{"title": "Three", "abstract": f"Three: {KEPT}"}]
    )
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db", migrated=True) as url:
        load(url, folder, elsewhere)
        (folder / "2025" / "list2.json").unlink()  # Three and Four
        kept = load(url, folder)  # without --prune, a file that is gone is kept
        assert fetch_one(url, "SELECT count(*) FROM papers") == 4 and kept.papers_removed == 0
        report = load(url, folder, prune=True)
        assert [x.status for x in report.sources if x.status == "pruned"] == ["pruned"]
        assert report.papers_removed == 1  # Four; Three is still seen in other.json
        assert fetch(url, "SELECT title FROM papers ORDER BY title") == [
            ("One",),
            ("Three",),
            ("Two",),
        ]
        assert fetch_one(url, "SELECT count(*) FROM sources") == 2


def _records(*titles: str) -> list[dict[str, str]]:
    return [{"title": title, "abstract": f"{title}: {KEPT}"} for title in titles]


def _zip(archive: Path, members: dict[str, list[str]]) -> Path:
    """A zip archive of JSON lists, one member per name, of papers with these titles."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w") as handle:
        for name, titles in members.items():
            handle.writestr(name, json.dumps(_records(*titles)))
    return archive


def _titles(url: str) -> list[str]:
    return [str(title) for (title,) in fetch(url, "SELECT title FROM papers ORDER BY title")]


def _pruned(report: RunReport) -> dict[str, str]:
    return {x.path: x.message or "" for x in report.sources if x.status == "pruned"}


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_zip_member_is_gone_only_when_its_archive_is_or_no_longer_holds_it(
    tmp_path: Path, kind: str
) -> None:
    data = tmp_path / "data"
    archive = _zip(data / "lists.zip", {"list.json": ["One", "Two"], "extra.json": ["Three"]})
    write_list(data / "keep.json", _records("Four"))
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db") as url:
        load(url, data)
        again = load(url, data, prune=True)  # every member is still in its archive
        assert _pruned(again) == {} and again.papers_removed == 0
        assert _titles(url) == ["Four", "One", "Three", "Two"]
        _zip(archive, {"list.json": ["One", "Two"]})
        report = load(url, data, prune=True)
        assert _pruned(report) == {
            f"{archive}!/extra.json": "the archive no longer holds this member; "
            "1 paper seen only there removed"
        }
        assert report.papers_removed == 1 and _titles(url) == ["Four", "One", "Two"]
        archive.unlink()
        report = load(url, data, prune=True)
        assert _pruned(report) == {
            f"{archive}!/list.json": "the archive is gone; 2 papers seen only there removed"
        }
        assert _titles(url) == ["Four"]


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_file_named_as_a_zip_member_leaves_the_member_alone(tmp_path: Path, kind: str) -> None:
    archive = _zip(tmp_path / "a" / "lists.zip", {"list.json": ["One", "Two"]})
    (tmp_path / "b").mkdir()
    unrelated = write_list(tmp_path / "b" / "list.json", _records("Other"))
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db") as url:
        load(url, archive)
        report = load(url, unrelated)
        assert report.papers_removed == 0 and [x.moved_from for x in report.sources] == [None]
        assert _titles(url) == ["One", "Other", "Two"]
        paths = {str(p) for (p,) in fetch(url, "SELECT path FROM sources")}
        assert paths == {f"{archive}!/list.json", str(unrelated)}


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_file_sharing_only_a_name_with_a_gone_one_takes_nothing(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "icml").mkdir()
    (tmp_path / "neurips").mkdir()
    gone = write_list(tmp_path / "icml" / "list.json", _records("One", "Two"))
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db") as url:
        load(url, gone)
        gone.unlink()
        other = write_list(tmp_path / "neurips" / "list.json", _records("Three", "Four"))
        report = load(url, other)  # a gone file keeps its papers without --prune
        assert report.papers_removed == 0 and report.sources[0].moved_from is None
        assert _titles(url) == ["Four", "One", "Three", "Two"]
        assert fetch_one(url, "SELECT count(*) FROM sources") == 2


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_moved_file_rule_takes_a_file_holding_half_of_a_gone_ones_papers(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db") as url:
        first = write_list(tmp_path / "old" / "a.json", _records("One", "Two", "Three"))
        load(url, first)
        first.unlink()
        few = write_list(tmp_path / "new" / "a.json", _records("One", "Four", "Five"))
        report = load(url, few)  # 1 of 3: another list that shares a paper, not the file moved
        assert report.papers_removed == 0 and report.sources[0].moved_from is None
        assert fetch_one(url, "SELECT count(*) FROM sources") == 2
        few.unlink()
        (tmp_path / "newer").mkdir()
        most = write_list(tmp_path / "newer" / "a.json", _records("One", "Two", "Six"))
        report = load(url, most)  # 2 of old/a.json's 3 (1 of new/a.json's 3): old/a.json, moved
        assert report.sources[0].moved_from == str(first)
        assert (
            report.sources[0].message == f"moved from {first}; 1 paper it no longer lists removed"
        )
        assert report.papers_removed == 1  # Three; One stays seen in new/a.json (gone, kept)
        assert _titles(url) == ["Five", "Four", "One", "Six", "Two"]
        paths = {str(p) for (p,) in fetch(url, "SELECT path FROM sources")}
        assert paths == {str(few), str(most)}


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_moved_file_rule_is_exact_about_case(tmp_path: Path, kind: str) -> None:
    (tmp_path / "A").mkdir()
    (tmp_path / "b").mkdir()
    gone = write_list(tmp_path / "A" / "LIST.JSON", _records("One", "Two"))
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db") as url:
        load(url, gone)
        gone.unlink()
        report = load(url, write_list(tmp_path / "b" / "list.json", _records("One", "Two")))
        assert fetch_one(url, "SELECT count(*) FROM sources") == 2
        assert report.sources[0].moved_from is None and report.papers_removed == 0


@pytest.mark.parametrize("kind", BACKENDS)
def test_prune_forgets_only_the_sources_under_the_paths_and_globs_given(
    tmp_path: Path, kind: str
) -> None:
    d = tmp_path / "d"
    (d / "deep").mkdir(parents=True)
    x = write_list(d / "x.json", _records("X"))
    y = write_list(d / "y.json", _records("Y"))
    deep = write_list(d / "deep" / "z.json", _records("Z"))
    c = d / "deep" / "c.csv"
    c.write_text(f'title,abstract\nC,"C: {KEPT}"\n', "utf-8")
    (tmp_path / "db").mkdir()
    with fresh_database(kind, tmp_path / "db") as url:
        load(url, d)
        y.unlink()
        c.unlink()
        assert _pruned(load(url, x, prune=True)) == {}  # x.json is there: nothing else goes
        assert list(_pruned(load(url, d / "*.json", prune=True))) == [str(y)]  # not deep/
        assert _titles(url) == ["C", "X", "Z"]
        assert list(_pruned(load(url, c, prune=True))) == [str(c)]  # a gone file, by name
        assert _titles(url) == ["X", "Z"]
        again = load(url, c, prune=True)
        assert [(x.status, x.message) for x in again.sources] == [
            ("failed", f"{c}: no such file, nor a source loaded from there")
        ]
        deep.unlink()
        assert list(_pruned(load(url, d / "deep", prune=True))) == [str(deep)]
        assert list(_pruned(load(url, d / "**" / "*.json", prune=True))) == []
        assert _titles(url) == ["X"]


@pytest.mark.postgres
@pytest.mark.slow
def test_three_loaders_side_by_side_show_what_one_serial_load_shows(tmp_path: Path) -> None:
    """One loader per shape, released together: the tables equal a serial load's."""
    files = write_shapes(tmp_path / "lists")
    with (
        fresh_postgres_database(migrated=True) as serial_url,
        fresh_postgres_database(migrated=True) as url,
    ):
        load(serial_url, *files)
        expected = shown(serial_url)
        engine = create_engine(url)
        try:
            upgrade_to_head(engine)
            with engine.connect() as connection:  # hold the loaders back, then let them go
                connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), LOADERS_KEY)
                loaders = [loader(path, url) for path in files]
                wait_until_blocked(url, sessions=len(files))
                connection.execute(text("SELECT pg_advisory_unlock(:a, :b)"), LOADERS_KEY)
                connection.commit()
            for process in loaders:
                _, errors = process.communicate(timeout=300)
                assert process.returncode == 0, errors.decode()
        finally:
            engine.dispose()
        result = shown(url)
        for table in expected:
            assert result[table] == expected[table], table

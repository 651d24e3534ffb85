"""Several `etl run` processes loading one corpus into one PostgreSQL database at once, and
`--shard` on both backends."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from etl.errors import LockedError
from etl.load import exclude_loaders, run_lock, start_run, upgrade_to_head
from etl.load import schema as s
from etl.load.locks import hold_identities
from etl.models import RunReport
from etl.pipeline import RunOptions, run
from tests.helpers import (
    BACKENDS,
    LOADERS_KEY,
    fetch,
    fetch_one,
    fresh_database,
    fresh_postgres_database,
    load,
    loader,
    record,
    snapshot,
    wait_until_blocked,
    write_files,
    write_shared_heavy,
)

# The smallest corpus on which the loaders deadlocked before a source took all of its locks
# up front (two batches a file); benchmarks/bench_shared_loaders.py runs the full size.
SHARED_HEAVY = {"files": 8, "per_file": 1000, "shared": 200}


def wait_for_a_source_of(url: str, process: subprocess.Popen[bytes], shard: str) -> None:
    """Block until the loader given `--shard <shard>` has committed a source."""
    index, count = shard.split("/")
    pattern = f'%"shard": [{index}, {count}]%'
    query = (
        "SELECT count(*) FROM sources s JOIN runs r ON r.id = s.run_id "
        "WHERE r.options LIKE :pattern AND r.status = 'running'"
    )
    deadline = time.monotonic() + 600  # a busy machine: it transforms a file before writing
    while time.monotonic() < deadline:
        assert process.poll() is None, "the loader ended before it could be killed"
        try:
            if fetch_one(url, query, {"pattern": pattern}):
                return
        except DBAPIError:  # not migrated yet
            pass
        time.sleep(0.05)
    raise AssertionError("the loader committed no source within ten minutes")


@pytest.mark.postgres
@pytest.mark.slow
def test_four_loaders_one_killed_then_a_rerun_equal_one_serial_load(tmp_path: Path) -> None:
    folder = tmp_path / "lists"
    write_files(folder)
    with (
        fresh_postgres_database(migrated=True) as serial_url,
        fresh_postgres_database() as url,  # the loaders start together on an empty database
    ):
        load(serial_url, folder)
        expected = snapshot(serial_url)
        # every table is compared (identity_locks holds only what loaders locked; each run
        # records its own change events, as it does its own `runs` row)
        assert set(expected) == set(s.metadata.tables) - {"runs", "identity_locks", "change_events"}
        assert len(expected["papers"]) == 8 * 400 and len(expected["rejects"]) == 8

        killed = loader(folder, url, "--shard", "1/2")
        others = [loader(folder, url, "--shard", "2/2"), loader(folder, url), loader(folder, url)]
        wait_for_a_source_of(url, killed, "1/2")
        killed.kill()  # SIGKILL, mid-load: its run is still `running`
        killed.wait(timeout=60)
        for process in others:
            _, errors = process.communicate(timeout=600)
            assert process.returncode in (0, 3), errors.decode()
        statuses = sorted(str(row[0]) for row in fetch(url, "SELECT status FROM runs"))
        # the killed run is still `running` (nobody has noticed yet); no live run was marked
        assert statuses.count("running") == 1
        assert set(statuses) - {"running"} <= {"succeeded", "partial"}

        # The loaders given every file came back to the one the killed loader held, and
        # loaded it once its lock was gone with it: nothing is missing even before a rerun.
        assert snapshot(url) == expected
        rerun = load(url, folder)
        assert rerun.sources_failed == 0
        assert snapshot(url) == expected
        statuses = sorted(str(row[0]) for row in fetch(url, "SELECT status FROM runs"))
        assert statuses.count("interrupted") == 1 and "running" not in statuses


@pytest.mark.postgres
@pytest.mark.slow
def test_four_loaders_on_shared_heavy_files_equal_one_serial_load(tmp_path: Path) -> None:
    """Four `--shard` loaders side by side on files that share papers, authors, links and
    methods with their neighbours: none may be rolled back for good by another (a deadlock
    retried until it gives up), and the database must be the serial load's."""
    folder = tmp_path / "lists"
    papers = write_shared_heavy(folder, **SHARED_HEAVY)
    with (
        fresh_postgres_database(migrated=True) as serial_url,
        fresh_postgres_database(migrated=True) as url,
    ):
        load(serial_url, folder)
        expected = snapshot(serial_url)
        assert len(expected["papers"]) == papers
        engine = create_engine(url)
        try:
            upgrade_to_head(engine)
            with engine.connect() as connection:  # start them together, none alone first
                connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), LOADERS_KEY)
                shards = [f"{index}/4" for index in range(1, 5)]
                loaders = [loader(folder, url, "--shard", shard) for shard in shards]
                wait_until_blocked(url, sessions=4, seconds=600)
                connection.execute(text("SELECT pg_advisory_unlock(:a, :b)"), LOADERS_KEY)
                connection.commit()
            for process in loaders:
                _, errors = process.communicate(timeout=1200)
                assert process.returncode == 0, errors.decode()
        finally:
            engine.dispose()
        assert snapshot(url) == expected
        # not one deadlock, even one a retry would have hidden
        deadlocks = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        assert fetch_one(url, deadlocks) == 0


def write_one_list_twice(folder: Path, papers: int) -> None:
    """The same made-up papers in two files: one with titles and abstracts, the other with
    their titles only (a list without abstracts). No record has an external id: a paper is
    known by its title and abstract keys, and the title-only record's own id (from its
    title) differs from the full record's (from its abstract)."""
    rng = random.Random(17)
    records = [record(rng, number) for number in range(papers)]
    folder.mkdir()
    full = [json.dumps(r) for r in records]
    titles = [json.dumps({k: v for k, v in r.items() if k != "abstract"}) for r in records]
    (folder / "a_full.jsonl").write_text("\n".join(full) + "\n", "utf-8")
    (folder / "b_titles.jsonl").write_text("\n".join(titles) + "\n", "utf-8")


def identities(url: str) -> list[tuple[Any, ...]]:
    """Each paper as its title, abstract, identity keys and sightings, without its id: the id
    comes from whichever record made the paper first, which two loaders side by side decide
    differently from a serial load."""
    rows = fetch(
        url,
        "SELECT p.pk, p.title, p.abstract, k.key, "
        "(SELECT count(*) FROM paper_sources x WHERE x.paper_pk = p.pk) "
        "FROM papers p JOIN paper_keys k ON k.paper_pk = p.pk",
    )
    papers: dict[Any, tuple[Any, Any, set[Any], Any]] = {}
    for pk, title, abstract, key, seen in rows:
        papers.setdefault(pk, (title, abstract, set(), seen))[2].add(key)
    return sorted(
        (
            (title, abstract, tuple(sorted(keys)), seen)
            for title, abstract, keys, seen in papers.values()
        ),
        key=repr,
    )


@pytest.mark.postgres
@pytest.mark.slow
def test_two_loaders_resolve_shared_identities_like_one_serial_load(tmp_path: Path) -> None:
    """Two loaders take one file each, side by side, while neither has committed: each batch
    locks its records' identity keys before it reads the stored ones, so the title-only
    records wait for the full records' file and join its papers instead of making their own."""
    folder = tmp_path / "lists"
    write_one_list_twice(folder, papers=1200)
    with (
        fresh_postgres_database(migrated=True) as serial_url,
        fresh_postgres_database(migrated=True) as url,
    ):
        load(serial_url, folder)
        expected = identities(serial_url)
        assert len(expected) == 1200 and {row[3] for row in expected} == {2}

        engine = create_engine(url)
        try:
            upgrade_to_head(engine)
            with engine.connect() as connection:  # hold both loaders back, then let them go
                connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), LOADERS_KEY)
                loaders = [loader(folder, url, "--shard", shard) for shard in ("1/2", "2/2")]
                wait_until_blocked(url, sessions=2)
                connection.execute(text("SELECT pg_advisory_unlock(:a, :b)"), LOADERS_KEY)
                connection.commit()
            for process in loaders:
                _, errors = process.communicate(timeout=600)
                assert process.returncode == 0, errors.decode()
        finally:
            engine.dispose()
        assert identities(url) == expected
        assert fetch_one(url, "SELECT count(*) FROM papers") == 1200


@pytest.mark.postgres
@pytest.mark.slow
def test_a_title_list_and_an_abstract_list_update_shared_papers_side_by_side(
    tmp_path: Path,
) -> None:
    """Two lists reach the same stored papers through different keys (titles only, and
    abstracts only in the reverse order), so no identity key keeps them apart: each loader
    locks the papers it may update, all at once in row-number order, before its first
    write, instead of a batch's papers at a time (which deadlocked)."""
    rng = random.Random(31)
    records = [record(rng, number) for number in range(1000)]
    full, lists = tmp_path / "full.jsonl", tmp_path / "lists"
    full.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    lists.mkdir()
    titles = [json.dumps({"title": r["title"]}) for r in records]
    abstracts = [json.dumps({"abstract": r["abstract"]}) for r in reversed(records)]
    (lists / "titles.jsonl").write_text("\n".join(titles) + "\n", "utf-8")
    (lists / "abstracts.jsonl").write_text("\n".join(abstracts) + "\n", "utf-8")
    with (
        fresh_postgres_database(migrated=True) as serial_url,
        fresh_postgres_database(migrated=True) as url,
    ):
        load(serial_url, full)
        load(serial_url, lists)
        expected = identities(serial_url)
        assert len(expected) == 1000 and {row[3] for row in expected} == {3}
        load(url, full)
        engine = create_engine(url)
        try:
            with engine.connect() as connection:  # hold both loaders back, then let them go
                connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), LOADERS_KEY)
                loaders = [
                    loader(lists / name, url) for name in ("titles.jsonl", "abstracts.jsonl")
                ]
                wait_until_blocked(url, sessions=2, seconds=600)
                connection.execute(text("SELECT pg_advisory_unlock(:a, :b)"), LOADERS_KEY)
                connection.commit()
            for process in loaders:
                _, errors = process.communicate(timeout=600)
                assert process.returncode == 0, errors.decode()
        finally:
            engine.dispose()
        assert identities(url) == expected
        deadlocks = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        assert fetch_one(url, deadlocks) == 0


@pytest.mark.postgres
@pytest.mark.migrated
def test_a_new_run_leaves_a_live_loaders_run_running(postgres_url: str) -> None:
    first, second = create_engine(postgres_url), create_engine(postgres_url)
    try:
        upgrade_to_head(first)
        with run_lock(first, exclusive=False) as lock:
            live, _ = start_run(first, {}, lock)
            with run_lock(second, exclusive=False) as other:
                _, interrupted = start_run(second, {}, other)
                assert interrupted == 0
                assert fetch_one(postgres_url, f"SELECT status FROM runs WHERE id = {live}") == (
                    "running"
                )
        # its holder is gone (the lock released with its connection): now it is interrupted
        with run_lock(second, exclusive=False) as other:
            _, interrupted = start_run(second, {}, other)
        assert interrupted == 2
        with second.connect() as connection:
            status = connection.scalar(text("SELECT status FROM runs WHERE id = :id"), {"id": live})
        assert status == "interrupted"
    finally:
        first.dispose()
        second.dispose()


@pytest.mark.postgres
@pytest.mark.migrated
def test_a_source_rolled_back_by_a_deadlock_is_loaded_again(
    tmp_path: Path, postgres_url: str
) -> None:
    """Another writer (as a loader does: identity keys locked, then paper and keys written)
    takes the file's second paper, then its first, while the loader takes them the other way
    round, a batch each: PostgreSQL breaks the cycle by failing the loader's transaction, and
    the loader loads the file again once the other writer commits, finding its papers by
    their keys."""
    rng = random.Random(5)
    lines = [json.dumps(record(rng, number)) for number in (1, 2)]
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    load(reference, path)
    keys: dict[str, list[str]] = {}
    for paper_id, key in fetch(
        reference, "SELECT p.id, k.key FROM papers p JOIN paper_keys k ON k.paper_pk = p.pk"
    ):
        keys.setdefault(str(paper_id), []).append(str(key))
    first, second = (
        str(row[0])
        for row in fetch(reference, "SELECT p.id FROM papers p ORDER BY p.pk")  # load order
    )
    engine = create_engine(postgres_url)
    other = engine.connect()
    try:
        upgrade_to_head(engine)
        run_id = other.execute(
            s.runs.insert().values(started_at=datetime.now(), status="succeeded")
        ).inserted_primary_key[0]
        _insert_paper(other, "unrelated", run_id)  # so the loader keeps its foreign keys
        other.commit()
        other.exec_driver_sql("SET deadlock_timeout = '10s'")  # the loader detects it first
        _insert_paper(other, second, run_id, keys[second])  # uncommitted: the loader waits
        outcome: list[RunReport] = []
        options = RunOptions(paths=(str(path),), database_url=postgres_url, batch_size=1)
        loading = threading.Thread(target=lambda: outcome.append(run(options)))
        loading.start()
        wait_until_blocked(postgres_url)  # on `second`, holding `first`
        _insert_paper(other, first, run_id, keys[first])  # the cycle: the loader fails
        other.commit()
        loading.join(timeout=120)
    finally:
        other.close()
        engine.dispose()
    (report,) = outcome
    assert report.status == "succeeded" and report.sources_loaded == 1
    assert (report.papers_inserted, report.papers_updated) == (0, 2)  # found the other's rows
    stale = fetch(postgres_url, "SELECT id FROM papers WHERE content_hash = 'stale'")
    assert stale == [("unrelated",)]
    loaded = fetch(postgres_url, "SELECT count(*) FROM paper_sources")
    assert loaded == [(2,)]


def _insert_paper(connection: Any, paper_id: str, run_id: int, keys: Sequence[str] = ()) -> None:
    """A paper row written by another writer, with content the loader will replace, after
    its identity keys are locked; then its keys."""
    hold_identities(connection, keys)
    pk = connection.execute(
        s.papers.insert().values(
            id=paper_id,
            abstract="stale",
            abstract_raw="stale",
            content_hash="stale",
            created_run_id=run_id,
            updated_run_id=run_id,
        )
    ).inserted_primary_key[0]
    if keys:
        connection.execute(s.paper_keys.insert(), [{"paper_pk": pk, "key": k} for k in keys])


@pytest.mark.postgres
def test_a_full_refresh_runs_alone(tmp_path: Path, postgres_url: str) -> None:
    engine = create_engine(postgres_url)
    try:
        with run_lock(engine, exclusive=False):  # a loader is running
            with pytest.raises(LockedError, match="--wait"):
                load(postgres_url, full_refresh=True)
            assert load(postgres_url).status == "succeeded"  # another loader may join it
        full_refresh_running = run_lock(engine, exclusive=True)
        with full_refresh_running, pytest.raises(LockedError, match="--full-refresh"):
            load(postgres_url)
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.slow
def test_shards_split_the_sorted_files(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "lists"
    write_files(folder, files=8, per_file=5)
    with fresh_database(kind, tmp_path, migrated=True) as url:
        command = [sys.executable, "-m", "etl", "run", str(folder), "-q", "--db", url]
        for shard in ("2/3", "3/3"):
            result = subprocess.run([*command, "--shard", shard], capture_output=True, timeout=300)
            assert result.returncode == 3, result.stderr  # each file has a reject
        loaded = sorted(Path(str(row[0])).name for row in fetch(url, "SELECT path FROM sources"))
        assert loaded == [
            "list_2.jsonl",
            "list_3.jsonl",
            "list_5.jsonl",
            "list_6.jsonl",
            "list_8.jsonl",
        ]
        bad = subprocess.run([*command, "--shard", "4/3"], capture_output=True, text=True)
        assert bad.returncode == 2 and "expected I/N with 1 <= I <= N" in bad.stderr


@pytest.mark.postgres
@pytest.mark.migrated
def test_deleting_orphans_waits_for_loaders_without_holding_new_ones_back(
    postgres_url: str,
) -> None:
    engine = create_engine(postgres_url)
    upgrade_to_head(engine)
    excluded = threading.Event()

    def delete_orphans_when_alone() -> None:
        with run_lock(engine, exclusive=False) as lock, engine.begin() as connection:
            exclude_loaders(connection, lock)
            excluded.set()

    try:
        with run_lock(engine, exclusive=False):  # a loader mid-load
            cleaner = threading.Thread(target=delete_orphans_when_alone)
            cleaner.start()
            joining: list[RunReport] = []  # a new loader is not held back by the cleaner
            joiner = threading.Thread(target=lambda: joining.append(load(postgres_url)))
            joiner.start()
            joiner.join(timeout=120)
            assert [report.status for report in joining] == ["succeeded"]
            assert not excluded.is_set()  # the cleaner still waits for the first loader
        cleaner.join(timeout=60)
        assert excluded.is_set()
        # While the deletion itself runs, a loader that starts waits for it instead of failing.
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_xact_lock(:a, :b)"), LOADERS_KEY)
            outcome: list[RunReport] = []
            loading = threading.Thread(target=lambda: outcome.append(load(postgres_url)))
            loading.start()
            wait_until_blocked(postgres_url)
            connection.commit()
        loading.join(timeout=120)
        assert [report.status for report in outcome] == ["succeeded"]
    finally:
        engine.dispose()

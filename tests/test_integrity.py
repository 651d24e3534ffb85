"""Nothing lost, whatever the order: removals that cannot race a loader adding a sighting,
and the other integrity promises of the load path (issue "nothing lost")."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine

from etl import extract
from etl.load import SourceLoader, remove_all_unseen
from etl.load import schema as s
from etl.models import PaperRows, RawRecord, SourceFile
from etl.transform import load_taxonomy, transform
from tests.conftest import fetch, fetch_one, load

TAXONOMY = load_taxonomy(None)
KEPT = "We study how a small recurrent model trained on short sequences of numbers learns to sort sequences ten times longer, and which units carry the order of the items."
SHARED = "We measure how often crowd workers agree on the labels of ambiguous photographs, and propose a voting rule that weighs each worker by how often they agree with the others."


def write_list(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(records), "utf-8")
    return path


def rows_of(path: Path) -> tuple[SourceFile, list[PaperRows]]:
    """A file as the writer gets it: identified, read and transformed."""
    source = extract.identify(path)
    records = [r for r in extract.read_records(source) if isinstance(r, RawRecord)]
    return source, [PaperRows.from_bundle(transform(r, TAXONOMY)) for r in records]


def new_run(connection: Connection) -> int:
    """A `runs` row for a loader driven by hand."""
    result = connection.execute(s.runs.insert().values(started_at=datetime.now(), status="running"))
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


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
                try:
                    loader.write(rows, [])
                    outcome.append(loader.finish())
                finally:
                    loader.close()
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
        loader_b.close()
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

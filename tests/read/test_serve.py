"""`etl serve`: Datasette over a real loaded SQLite file, through its in-process client and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from etl.cli import main
from etl.load.database import view_definitions
from etl.load.schema import papers
from etl.serve import build_datasette, canned_queries, datasette_metadata
from tests.helpers import SEEDS, fetch, load

HOSTILE = "<script>alert(1)</script> makes an untitled abstract start with markup."


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed lists plus a hostile untitled record, loaded into a SQLite file."""
    folder = tmp_path_factory.mktemp("served")
    extra = folder / "hostile_2024.jsonl"
    extra.write_text(json.dumps({"abstract": HOSTILE}) + "\n", encoding="utf-8")
    load(f"sqlite:///{folder / 'papers.db'}", SEEDS, extra)
    return folder / "papers.db"


def get(path: Path, url: str) -> Any:
    """GET a page from a Datasette built for the file (its in-process ASGI client)."""

    async def inner() -> Any:
        datasette = build_datasette(path)
        await datasette.invoke_startup()
        return await datasette.client.get(url)

    return asyncio.run(inner())


def rows(path: Path, url: str) -> list[dict[str, Any]]:
    response = get(path, url + ("&" if "?" in url else "?") + "_shape=array")
    assert response.status_code == 200, response.text
    result: list[dict[str, Any]] = response.json()
    return result


def test_metadata_comes_from_the_view_files_and_the_schema() -> None:
    tables = datasette_metadata("papers")["databases"]["papers"]["tables"]
    for view in view_definitions("sqlite"):
        assert tables[view.name]["description"] == view.description
        assert tables[view.name]["columns"] == view.column_comments
    assert tables["papers"]["description"] == papers.comment
    assert tables["papers"]["columns"]["abstract"] == papers.c.abstract.comment
    assert tables["papers"]["fts_table"] == "papers_fts"
    assert {"venue", "year", "status"} <= set(tables["papers"]["facets"])


def test_search_box_on_papers_filters_rows(served: Path) -> None:
    assert rows(served, "/papers/papers.json?_search=zzzzqqq") == []
    expected = {
        r[0]
        for r in fetch(
            f"sqlite:///{served}", "SELECT id FROM papers WHERE abstract LIKE '%TraceGrad%'"
        )
    }
    found = {r["id"] for r in rows(served, "/papers/papers.json?_search=TraceGrad&_col=id")}
    assert found == expected and len(found) == 1
    assert len(rows(served, '/papers/papers.json?_search="unbalanced&_col=id')) == 0


def test_ranked_search_query_ranks_and_highlights(served: Path) -> None:
    found = rows(served, "/papers/ranked_search.json?search=KV+cache")
    assert found and found[0]["label"] == "CommVQ"
    scores = [r["score"] for r in found]
    assert scores == sorted(scores, reverse=True)
    page = get(served, "/papers/ranked_search?search=KV+cache").text
    assert "<mark>KV</mark>" in page and "<mark>cache</mark>" in page
    for hostile in ['"unbalanced', "NEAR(", "-", "a:b:c", "papers_fts MATCH"]:
        response = get(served, f"/papers/ranked_search.json?search={hostile}&_shape=array")
        assert response.status_code == 200, hostile


def test_canned_queries_answer_the_questions(served: Path) -> None:
    assert {q.name for q in canned_queries()} == {
        "papers_with_code_by_topic",
        "methods_introduced_at_venue",
        "acronym_expansions",
        "ranked_search",
    }
    expansions = rows(served, "/papers/acronym_expansions.json?acronym=rope")
    assert "Rotary Position Embedding" in {r["expansion"] for r in expansions}
    introduced = rows(served, "/papers/methods_introduced_at_venue.json?venue=icml&year=2025")
    assert "TraceGrad" in {r["method"] for r in introduced}
    assert rows(served, "/papers/methods_introduced_at_venue.json?venue=icml&year=1999") == []
    url = f"sqlite:///{served}"
    topic, expected = fetch(
        url,
        "SELECT t.name, count(DISTINCT pwc.paper_id) FROM papers_with_code pwc "
        "JOIN papers p ON p.id = pwc.paper_id JOIN paper_topics pt ON pt.paper_pk = p.pk "
        "JOIN topics t ON t.slug = pt.topic_slug GROUP BY t.name ORDER BY 2 DESC, 1 LIMIT 1",
    )[0]
    by_topic = rows(served, f"/papers/papers_with_code_by_topic.json?topic={topic}")
    assert len({r["paper_id"] for r in by_topic}) == expected
    assert all(r["code_url"].startswith("https://") and r["label"] for r in by_topic)


def test_facets_and_views_first(served: Path) -> None:
    facets = get(served, "/papers/papers_with_code.json").json()["facet_results"]
    assert {"venue", "year", "code_host"} <= set(facets)
    page = get(served, "/papers").text
    assert page.index('href="/papers/papers_with_code"') < page.index('href="/papers/authors"')


def test_untitled_papers_show_their_label_escaped(served: Path) -> None:
    page = get(served, "/papers/papers?_size=max").text
    assert '<span class="etl-label">TraceGrad</span>' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    topics = get(served, "/papers/paper_topics?_size=max").text
    assert '<em class="etl-label">CommVQ</em>' in topics


def test_served_database_cannot_be_written(served: Path) -> None:
    before = fetch(f"sqlite:///{served}", "SELECT count(*) FROM papers")
    response = get(served, "/papers.json?sql=DELETE+FROM+papers")
    assert response.status_code == 400
    assert fetch(f"sqlite:///{served}", "SELECT count(*) FROM papers") == before


def test_serve_refuses_postgresql_and_missing_files(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["serve", "--db", "postgresql+psycopg://u@localhost/x"])
    assert result.exit_code == 1
    assert "supports SQLite only" in result.output
    missing = runner.invoke(main, ["serve", "--db", f"sqlite:///{tmp_path / 'none.db'}"])
    assert missing.exit_code == 1 and "etl run" in missing.output
    assert "Traceback" not in result.output + missing.output


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_etl_serve_listens_on_loopback(served: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "etl", "serve", "--db", f"sqlite:///{served}", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        body = wait_for(f"http://127.0.0.1:{port}/papers/papers.json?_search=zzzzqqq&_shape=array")
        assert json.loads(body) == []
        listening = subprocess.run(
            ["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True
        )
        local_addresses = {line.split()[3] for line in listening.stdout.splitlines()}
        assert local_addresses == {f"127.0.0.1:{port}"}
    finally:
        process.terminate()
        process.wait(timeout=10)


def wait_for(url: str, timeout: float = 20.0) -> str:
    """The body of a URL once the server answers."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode("utf-8"))
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


ETL_RUN = [sys.executable, "-m", "etl", "run", "-q", "--wait", "--workers", "1"]
PAGES = (
    "/papers/papers.json?_size=0",
    "/papers/papers.json?_search=cache&_size=3",
    "/papers/venue_summary.json",
    "/papers/method_index.json?_size=3",
    "/papers/topic_summary.json",
    "/papers/paper_overview.json?_size=3",
    "/papers/ranked_search.json?q=graph+cache",
)


@pytest.mark.slow
def test_serve_beside_three_loads_answers_every_page_with_committed_files(
    tmp_path: Path,
) -> None:
    """Next to loads into the same file, every page answers 200 and shows whole files: the
    paper count is always a whole number of files, and the last one once they are done."""
    from tests.helpers import write_corpus

    per_file = 40
    folders = []
    for seed in range(4):
        folder = tmp_path / f"in{seed}"
        write_corpus(folder, files=3, per_file=per_file, seed=100 + seed)
        for part in folder.iterdir():  # each load its own files (paths are sources)
            part.rename(folder / f"s{seed}_{part.name}")
        folders.append(folder)
    database = tmp_path / "papers.db"
    url = f"sqlite:///{database}"
    load(url, folders[0])
    loads = [
        subprocess.Popen(
            [*ETL_RUN, str(folder), "--db", url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for folder in folders[1:]
    ]
    counts: set[int] = set()
    statuses: list[tuple[str, int]] = []

    async def browse() -> None:
        datasette = build_datasette(database)
        await datasette.invoke_startup()
        while True:
            done = all(process.poll() is not None for process in loads)
            for page in PAGES:
                response = await datasette.client.get(page)
                statuses.append((page, response.status_code))
                if page.endswith("_size=0") and response.status_code == 200:
                    counts.add(response.json()["filtered_table_rows_count"])
            if done:
                return
            await asyncio.sleep(0.2)

    try:
        asyncio.run(browse())
    finally:
        for process in loads:
            process.kill()
    for process in loads:
        assert process.wait() == 0, process.communicate()
    assert [s for s in statuses if s[1] != 200] == []
    assert all(count % per_file == 0 for count in counts), sorted(counts)
    assert max(counts) == 4 * 3 * per_file  # the last page read everything loaded


def test_a_papers_page_shows_its_references_and_citers(tmp_path: Path) -> None:
    database = tmp_path / "papers.db"
    load(f"sqlite:///{database}", Path(__file__).parents[1] / "fixtures" / "sources" / "citations")
    pk = fetch(
        f"sqlite:///{database}",
        "SELECT pk FROM papers WHERE title = 'Lantern Networks for Sparse Rewards'",
    )[0][0]
    page = get(database, f"/papers/papers/{pk}").text
    references = page.split("<h2>References (5)</h2>")[1].split("</ol>")[0]
    assert ">Candles Before Lanterns</a>" in references  # a paper of the database, linked
    assert 'href="https://openalex.org/W2999999999"' in references  # not in it: its page
    assert "openalex: not an id" in references  # given as text
    torches = fetch(f"sqlite:///{database}", "SELECT pk FROM papers WHERE title LIKE 'Torches%'")[
        0
    ][0]
    page = get(database, f"/papers/papers/{torches}").text
    assert "<h2>Cited by 5 in this database</h2>" in page
    assert f'/papers/papers/{pk}">Lantern Networks for Sparse Rewards</a>' in page
    related = page.split("<h2>Related papers</h2>")[1].split("</ol>")[0]
    assert "Flint and Steel: Early Sparks</a>" in related and "cited here, cites this" in related

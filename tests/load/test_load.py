"""Loading into real databases (SQLite file and PostgreSQL): counts, reruns, updates, removals."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.exc import IntegrityError

from etl.load import create_db_engine, upgrade_to_head
from etl.load.foreign_keys import ForeignKeysCheckedAtEnd, keys_into_filled_tables
from etl.load.identity import matches
from tests.helpers import abstract, load, write_json
from tests.helpers import fetch as rows
from tests.helpers import fetch_one as scalar

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

TABLE_KEYS = {
    "papers": "id",
    "paper_sources": "paper_pk, source_id, position",
    "authors": "name",
    "paper_authors": "paper_pk, position",
    "methods": "key",
    "method_aliases": "key",
    "paper_methods": "paper_pk, key",
    "acronyms": "paper_pk, acronym, expansion",
    "paper_topics": "paper_pk, topic_slug",
    "links": "url",
    "paper_links": "paper_pk, link_id",
    "topics": "slug",
    "sources": "path",
}


def table_counts(url: str) -> dict[str, int]:
    return {table: int(scalar(url, f"SELECT count(*) FROM {table}")) for table in TABLE_KEYS}  # type: ignore[arg-type]


def test_seeds_load_38_icml_2025_papers(db_url: str, seeds: Path) -> None:
    report = load(db_url, seeds)
    assert report.status == "succeeded"
    assert (report.papers_inserted, report.papers_updated, report.rejects) == (38, 0, 0)
    assert rows(db_url, "SELECT venue, year, count(*) FROM papers GROUP BY venue, year") == [
        ("ICML", 2025, 38)
    ]
    assert scalar(db_url, "SELECT count(*) FROM paper_sources") == 38
    assert scalar(db_url, "SELECT count(*) FROM sources WHERE record_count = 19") == 2
    run = rows(db_url, "SELECT status, papers_inserted, sources_loaded FROM runs")
    assert run == [("succeeded", 38, 2)]


def test_second_run_changes_nothing_and_no_table_has_duplicates(db_url: str, seeds: Path) -> None:
    load(db_url, seeds)
    before = table_counts(db_url)
    report = load(db_url, seeds)
    assert report.sources_skipped == 2 and report.sources_loaded == 0
    assert (report.papers_inserted, report.papers_updated, report.papers_removed) == (0, 0, 0)
    assert table_counts(db_url) == before
    for table, key in TABLE_KEYS.items():
        duplicates = scalar(
            db_url,
            f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1) AS d",
        )
        assert duplicates == 0, table


def test_full_refresh_reloads_everything_to_the_same_state(db_url: str, seeds: Path) -> None:
    load(db_url, seeds)
    before = table_counts(db_url)
    report = load(db_url, seeds, full_refresh=True)
    assert report.sources_loaded == 2 and report.papers_inserted == 38
    assert table_counts(db_url) == before


def test_same_abstract_in_two_files_is_one_paper_with_two_provenance_rows(
    db_url: str, tmp_path: Path
) -> None:
    abstract = (  # long enough to identify a paper (20 words or more)
        "We propose **FooNet**, a novel network for bar that learns to count the foos in every "
        "picture of a bar without labels. Code: https://github.com/foo/foonet."
    )
    (tmp_path / "a.txt").write_text(f"ICML 2025 papers\n\n{abstract}\n", "utf-8")
    (tmp_path / "b.jsonl").write_text(
        json.dumps({"title": "FooNet", "abstract": abstract}) + "\n", "utf-8"
    )
    report = load(db_url, tmp_path / "a.txt", tmp_path / "b.jsonl")
    assert report.papers_inserted == 1
    assert scalar(db_url, "SELECT count(*) FROM papers") == 1
    assert scalar(db_url, "SELECT count(*) FROM paper_sources") == 2
    assert scalar(db_url, "SELECT title FROM papers") == "FooNet"
    assert scalar(db_url, "SELECT count(*) FROM paper_links") == 1


def test_changed_source_updates_only_what_changed_and_removes_what_left(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "list.txt"
    path.write_text(
        "ICML 2025 papers\n\nFirst abstract about graphs.\n\nSecond abstract, code at https://github.com/o/second.\n"
        "\nThird abstract, see https://github.com/o/third.\n",
        "utf-8",
    )
    load(db_url, path)
    path.write_text(
        "ICML 2025 papers\n\nFirst abstract about graphs.\n\n"
        "Third abstract, see https://github.com/o/third.\n\nA new fourth abstract.\n",
        "utf-8",
    )
    report = load(db_url, path)
    assert (
        report.papers_inserted,
        report.papers_updated,
        report.papers_unchanged,
        report.papers_removed,
    ) == (1, 0, 2, 1)
    abstracts = {r[0] for r in rows(db_url, "SELECT abstract FROM papers")}
    assert abstracts == {
        "First abstract about graphs.",
        "Third abstract, see https://github.com/o/third.",
        "A new fourth abstract.",
    }
    positions = rows(
        db_url,
        "SELECT p.abstract, ps.position FROM paper_sources ps JOIN papers p ON p.pk = ps.paper_pk ORDER BY ps.position",
    )
    assert [p for _, p in positions] == [3, 5, 7]
    assert scalar(db_url, "SELECT count(*) FROM links") == 1


def test_methods_merge_across_papers_through_aliases(db_url: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(
        "ICML 2025 papers\n\nWe propose Commutative Vector Quantization (CommVQ) to compress the cache.\n"
        "\nWe compare against CommVQ and find it is slower on long inputs.\n",
        "utf-8",
    )
    load(db_url, tmp_path / "a.txt")
    methods = rows(
        db_url, "SELECT method, role FROM method_index WHERE method = 'CommVQ' ORDER BY role"
    )
    assert methods == [("CommVQ", "introduced"), ("CommVQ", "mentioned")]
    assert scalar(db_url, "SELECT count(*) FROM methods WHERE name = 'CommVQ'") == 1
    aliases = {
        r[0]
        for r in rows(
            db_url,
            "SELECT alias FROM method_aliases a JOIN methods m ON m.id = a.method_id WHERE m.name = 'CommVQ'",
        )
    }
    assert aliases == {"CommVQ", "Commutative Vector Quantization"}


def test_a_method_without_alias_rows_is_reused_not_duplicated(db_url: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(
        "ICML 2025 papers\n\nWe propose CommVQ, a way to compress the cache.\n", "utf-8"
    )
    load(db_url, tmp_path / "a.txt")
    engine = create_engine(db_url)
    with engine.begin() as connection:  # as a hand edit or an older version could leave it
        connection.execute(text("DELETE FROM method_aliases"))
    engine.dispose()
    (tmp_path / "b.txt").write_text(
        "ICML 2025 papers\n\nWe compare against CommVQ on long inputs.\n", "utf-8"
    )
    load(db_url, tmp_path / "b.txt")
    assert rows(db_url, "SELECT count(*) FROM methods WHERE key = 'commvq'") == [(1,)]
    assert rows(
        db_url,
        "SELECT role FROM paper_methods pm JOIN methods m ON m.id = pm.method_id "
        "WHERE m.key = 'commvq' ORDER BY role",
    ) == [("introduced",), ("mentioned",)]
    assert rows(db_url, "SELECT key FROM method_aliases") == [("commvq",)]


def test_a_bad_file_fails_alone_and_leaves_the_rest_loaded(
    db_url: str, tmp_path: Path, seeds: Path
) -> None:
    folder = tmp_path / "in"
    shutil.copytree(seeds, folder)
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02 not text")
    (folder / "latin1.txt").write_bytes("ICML 2025 papers\n\nCaf\xe9 abstract.\n".encode("latin-1"))
    (folder / "broken.jsonl").write_text(
        '{"title": "Good", "abstract": "A good record."}\n{oops\n', "utf-8"
    )
    report = load(db_url, folder)
    assert report.status == "partial"
    failed = {Path(s.path).name: s.message for s in report.sources if s.status == "failed"}
    assert set(failed) == {"binary.txt", "latin1.txt"}
    assert "binary" in (failed["binary.txt"] or "") and "offset" in (failed["latin1.txt"] or "")
    assert report.rejects == 1
    assert scalar(db_url, "SELECT count(*) FROM papers") == 39
    assert rows(db_url, "SELECT position, reason FROM rejects") == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes at column 2")
    ]
    assert scalar(db_url, "SELECT status FROM runs") == "partial"


def test_a_file_that_breaks_mid_way_is_rolled_back_whole(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(
        '[{"title": "One", "abstract": "First."}, {"title": "Two", "abstract": "Second."}, {"title": ',
        "utf-8",
    )
    report = load(db_url, path)
    (source,) = report.sources
    assert source.status == "failed" and "does not parse after record 2" in (source.message or "")
    assert scalar(db_url, "SELECT count(*) FROM papers") == 0
    assert scalar(db_url, "SELECT count(*) FROM sources") == 0


def foreign_key_definitions(connection: Connection) -> dict[str, str]:
    """{name: definition} of every foreign key, as this connection's transaction sees them."""
    sql = "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f'"
    return {name: definition for name, definition in connection.exec_driver_sql(sql)}


@pytest.mark.postgres
def test_a_first_postgres_load_checks_foreign_keys_at_its_end(
    postgres_url: str, seeds: Path
) -> None:
    engine = create_db_engine(postgres_url)
    upgrade_to_head(engine)
    with engine.connect() as connection:
        before = foreign_key_definitions(connection)
    into_filled = {str(key.name) for key in keys_into_filled_tables()}
    assert len(into_filled) == 14 and into_filled < set(
        before
    )  # 0005: paper_keys; 0006: paper_tasks; 0008: paper_listed_terms; 0012: citations
    with engine.begin() as connection:  # papers is empty: the keys into it go for the load
        keys = ForeignKeysCheckedAtEnd(connection)
        assert set(before) - set(foreign_key_definitions(connection)) == into_filled
        connection.exec_driver_sql(  # a row that breaks two keys fails when they come back
            "INSERT INTO paper_methods "
            "(paper_pk, key, name, method_id, role, surface, kind, aliases, position) "
            "VALUES (999, 'x', 'X', 999, 'introduced', 'X', 'method', '[]', 1)"
        )
        with pytest.raises(IntegrityError, match="fk_paper_methods"):
            keys.restore()
    with engine.connect() as connection:  # the failed transaction rolled back whole
        assert foreign_key_definitions(connection) == before

    load(postgres_url, seeds)
    with engine.begin() as connection:
        assert foreign_key_definitions(connection) == before  # the same keys, put back
        assert ForeignKeysCheckedAtEnd(connection).dropped == []  # papers exist: keys stay
    engine.dispose()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_reader_in_a_transaction_keeps_the_foreign_keys_of_a_first_postgres_load(
    postgres_url: str,
) -> None:
    engine = create_db_engine(postgres_url)
    upgrade_to_head(engine)
    with engine.connect() as reader, engine.begin() as loader:
        before = foreign_key_definitions(loader)
        reader.execute(text("SELECT count(*) FROM papers"))  # its open transaction holds papers
        keys = ForeignKeysCheckedAtEnd(loader)  # gives up after LOCK_WAIT_MS, keeps the keys
        assert keys.dropped == []
        assert foreign_key_definitions(loader) == before
        assert loader.exec_driver_sql("SHOW lock_timeout").scalar() == "0"  # the default again
        loader.exec_driver_sql("SELECT count(*) FROM papers")  # the load's transaction goes on
    engine.dispose()


# Paper identity and sightings on real-list shapes (issue 17), made-up records.

ABSTRACT = (
    "We show that a small recurrent model trained only on short sequences of numbers learns "
    "to sort sequences ten times longer, and explain which of its units carry the order."
)
OTHER = (
    "We measure how often crowd workers agree on the labels of ambiguous photographs, and "
    "propose a voting rule that weighs each worker by their agreement with the others."
)


def test_placeholder_abstracts_never_merge_papers_with_different_titles(
    db_url: str, tmp_path: Path
) -> None:
    nips = [{"title": f"Paper number {n}", "abstract": "Part of"} for n in (1, 2, 3)]
    report = load(db_url, write_json(tmp_path / "nips2018.json", nips))
    assert report.papers_inserted == 3
    assert sorted(r[0] for r in rows(db_url, "SELECT title FROM papers")) == [
        "Paper number 1",
        "Paper number 2",
        "Paper number 3",
    ]
    again = load(db_url, tmp_path / "nips2018.json", full_refresh=True)
    assert again.papers_inserted == 3  # the same three, not one


def test_same_abstract_with_different_titles_is_two_papers_and_an_abstract_only_record_joins_one(
    db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "list.txt").write_text(f"ICML 2025 papers\n\n{ABSTRACT}\n", "utf-8")
    write_json(
        tmp_path / "icml2025.json",
        [
            {"title": "Sorting, Learned", "abstract": ABSTRACT},
            {"title": "Other", "abstract": ABSTRACT},
        ],
    )
    load(db_url, tmp_path / "list.txt", tmp_path / "icml2025.json")
    assert sorted(
        rows(
            db_url,
            "SELECT title, (SELECT count(*) FROM paper_sources ps WHERE ps.paper_pk = p.pk) FROM papers p",
        )
    ) == [
        ("Other", 1),
        ("Sorting, Learned", 2),  # the abstract-only record took the first title's paper
    ]


def test_an_external_id_merges_records_whatever_their_text_and_keys_a_new_paper(
    db_url: str, tmp_path: Path
) -> None:
    forum = "https://openreview.net/forum?id=Ab_cD-123"
    write_json(
        tmp_path / "iclr2018.json", [{"title": "Sorting", "abstract": ABSTRACT, "site": forum}]
    )
    write_json(
        tmp_path / "later.json",
        [{"title": "Sorting, revised", "abstract": OTHER, "openreview": forum}],
    )
    load(db_url, tmp_path / "iclr2018.json", tmp_path / "later.json")
    assert scalar(db_url, "SELECT count(*) FROM papers") == 1
    assert "openreview:Ab_cD-123" in {r[0] for r in rows(db_url, "SELECT key FROM paper_keys")}


@pytest.mark.parametrize("runs", ["one run", "a run per file"])
def test_a_title_many_papers_share_joins_an_abstract_only_to_its_paper_without_one(
    db_url: str, tmp_path: Path, runs: str
) -> None:
    # Two papers of one title with their own abstracts and OpenReview ids, then a third known
    # by its title and another id alone (so it joins neither): a record of that title with a
    # new abstract is the third (the one without an abstract), one with the first abstract is
    # the first, a record of the second abstract under another title is the second (its title
    # corrected), and a record with the second id is the second paper.
    def paper(number: int) -> dict[str, object]:
        return {"title": "On Sorting", "abstract": abstract(random.Random(number), number)}

    def forum(number: int) -> dict[str, object]:
        return {"openreview": f"https://openreview.net/forum?id=Or-{number}"}

    first = write_json(
        tmp_path / "a.json",
        [{**paper(1), **forum(1)}, {**paper(2), **forum(2)}],
    )
    bare = write_json(tmp_path / "b.json", [{"title": "On Sorting", **forum(3)}])
    later = write_json(
        tmp_path / "c.json",
        [
            paper(3),
            paper(1),
            {**paper(2), "title": "Sorting, Again"},
            {**paper(4), "title": "Sorting, Renamed", **forum(2)},
        ],
    )
    if runs == "one run":
        load(db_url, first, bare, later)
    else:
        for path in (first, bare, later):
            load(db_url, path)
    sightings = rows(
        db_url,
        "SELECT s.path, ps.position, k.key FROM paper_sources ps"
        " JOIN sources s ON s.id = ps.source_id"
        " JOIN paper_keys k ON k.paper_pk = ps.paper_pk AND k.key LIKE 'openreview:%'",
    )
    by_record = {(Path(path).name, position): key for path, position, key in sightings}
    assert by_record == {
        ("a.json", 1): "openreview:Or-1",
        ("a.json", 2): "openreview:Or-2",
        ("b.json", 1): "openreview:Or-3",
        ("c.json", 1): "openreview:Or-3",  # the new abstract joined the paper without one
        ("c.json", 2): "openreview:Or-1",
        ("c.json", 3): "openreview:Or-2",  # its abstract, whatever its title
        ("c.json", 4): "openreview:Or-2",  # its id, whatever its title and abstract
    }
    assert scalar(db_url, "SELECT count(*) FROM papers") == 3


def test_each_sighting_keeps_its_venue_and_status_and_the_paper_shows_the_accepted_one(
    db_url: str, tmp_path: Path
) -> None:
    iclr = [{"title": "Sorting", "abstract": ABSTRACT, "status": "Reject"}]
    iclr += [{"title": "Crowds", "abstract": OTHER, "status": "Withdraw"}]
    write_json(tmp_path / "iclr2018.json", iclr)
    nips = tmp_path / "nips2018.json"
    write_json(nips, [{"title": "Sorting", "abstract": ABSTRACT, "status": "Poster"}])
    load(db_url, tmp_path / "iclr2018.json", nips)
    papers = "SELECT title, venue, year, status FROM papers ORDER BY title"
    assert rows(db_url, papers) == [
        ("Crowds", "ICLR", 2018, "Withdraw"),
        ("Sorting", "NeurIPS", 2018, "Poster"),
    ]
    summary = "SELECT venue, year, status, papers FROM venue_summary ORDER BY venue, status"
    assert rows(db_url, summary) == [
        ("ICLR", 2018, "Reject", 1),
        ("ICLR", 2018, "Withdraw", 1),
        ("NeurIPS", 2018, "Poster", 1),
    ]
    write_json(nips, [{"title": "Unrelated", "abstract": "Part of", "status": "Poster"}])
    load(db_url, tmp_path / "iclr2018.json", nips)  # the paper left the NeurIPS list
    assert rows(db_url, papers)[1:] == [
        ("Sorting", "ICLR", 2018, "Reject"),
        ("Unrelated", "NeurIPS", 2018, "Poster"),
    ]


def test_github_markdown_and_author_homepages_land_where_they_belong(
    db_url: str, tmp_path: Path
) -> None:
    record = {
        "title": "Sorting",
        "abstract": ABSTRACT,
        "author": "Ann Lee;Bo Chen;Ann Lee",
        "homepage": "https://ann.example.org;https://github.com/bochen/site;",
        "github": "[![github](/images/github_icon.svg) lab/sorter](https://github.com/lab/sorter)",
    }
    load(db_url, write_json(tmp_path / "corl2024.json", [record]))
    assert rows(db_url, "SELECT repo_owner, repo_name, found_in FROM papers_with_code") == [
        ("lab", "sorter", "github")
    ]
    assert rows(db_url, "SELECT url FROM links WHERE kind = 'project'") == []
    authors = "SELECT a.name, pa.homepage FROM paper_authors pa JOIN authors a ON a.id = pa.author_id ORDER BY pa.position"
    assert rows(db_url, authors) == [
        ("Ann Lee", "https://ann.example.org"),
        ("Bo Chen", "https://github.com/bochen/site"),
        ("Ann Lee", None),
    ]


def test_withdrawn_placeholders_with_their_own_openreview_ids_stay_apart(
    db_url: str, tmp_path: Path
) -> None:
    records = [
        {
            "title": "Withdrawn",
            "abstract": ABSTRACT,
            "site": "https://openreview.net/forum?id=aaaaaa1",
        },
        {
            "title": "Withdrawn",
            "abstract": "withdrawn",
            "site": "https://openreview.net/forum?id=bbbbbb2",
        },
        {"title": "Withdrawn", "abstract": "withdrawn"},  # nothing identifies it but itself
    ]
    report = load(db_url, write_json(tmp_path / "iclr2018.json", records))
    assert report.papers_inserted == 3
    assert load(db_url, tmp_path / "iclr2018.json", full_refresh=True).papers_inserted == 3


@pytest.mark.parametrize(
    ("record", "paper", "same"),
    [
        (("openreview:a", "title:t"), {"openreview:a", "title:u"}, True),  # an id wins
        (("openreview:a", "title:t"), {"openreview:b", "title:t"}, False),  # two ids: two papers
        (("arxiv:1", "title:t"), {"openreview:b", "title:t"}, True),  # ids of other kinds
        (("abs:x",), {"abs:x", "title:t"}, True),  # abstract-only joins the titled paper
        (("abs:x", "title:u"), {"abs:x", "title:t"}, True),  # a corrected title: the abstract
        (("abs:y", "title:t"), {"abs:x", "title:t"}, False),  # different abstracts
        (("title:t",), {"abs:x", "title:t"}, True),  # title-only (placeholder abstract)
        (("text:z",), {"title:t"}, False),  # nothing shared
        (("text:z",), {"text:z"}, True),  # the same short text, known by nothing else
        (("text:z",), {"text:z", "openreview:b"}, False),  # a paper known by more is not it
        (("text:z", "openreview:b"), {"text:z"}, False),
    ],
)
def test_identity_rules(record: tuple[str, ...], paper: set[str], same: bool) -> None:
    assert matches(record, paper) is same


def test_a_taken_id_gets_the_next_free_suffix(db_url: str, tmp_path: Path) -> None:
    # one file's records with one abstract and different titles stay apart: each needs an id
    same = {"abstract": ABSTRACT}
    write_json(tmp_path / "a.json", [{"title": "One", **same}, {"title": "Two", **same}])
    load(db_url, tmp_path / "a.json")
    write_json(
        tmp_path / "a.json",
        [{"title": "One", **same}, {"title": "Two", **same}, {"title": "Three", **same}],
    )
    load(db_url, tmp_path / "a.json")  # its id and the first suffix are both taken already
    ids = sorted(str(r[0]) for r in rows(db_url, "SELECT id FROM papers"))
    assert len(ids) == 3 and ids[1] == ids[0] + "-2" and ids[2] == ids[0] + "-3"


def test_an_id_every_record_of_a_file_shares_does_not_merge_different_titles(
    db_url: str, tmp_path: Path
) -> None:
    shared = {"doi": "10.1109/PROC.2019"}  # the proceedings' DOI on every record
    records = [
        {"title": "Sorting", "abstract": ABSTRACT, **shared},
        {"title": "Crowds", "abstract": OTHER, **shared},
        {"title": "Sorting", "abstract": "Part of", **shared},  # the first one, listed again
    ]
    path = write_json(tmp_path / "cvpr2019.json", records)
    assert load(db_url, path).papers_inserted == 2
    write_json(path, list(reversed(records)))  # read again, in another order
    again = load(db_url, path)
    assert (again.papers_inserted, again.papers_removed) == (0, 0)
    assert sorted(r[0] for r in rows(db_url, "SELECT title FROM papers")) == ["Crowds", "Sorting"]

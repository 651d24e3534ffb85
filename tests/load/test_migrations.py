"""Alembic is the only way the schema comes to exist; `alembic upgrade head` equals `etl run`."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from etl.load.database import create_db_engine, head_revision, upgrade_to_head
from etl.load.schema import include_object, metadata
from etl.transform.ids import identity_keys
from tests.helpers import BACKENDS, REPO, fetch, fetch_one, fresh_database, load, snapshot

sys_alembic = [sys.executable, "-m", "alembic"]


def alembic(url: str, *args: str) -> None:
    env = {**os.environ, "ETL_DATABASE_URL": url}
    subprocess.run([*sys_alembic, *args], cwd=REPO, env=env, check=True, capture_output=True)


def schema(url: str) -> dict[str, object]:
    """Tables, views and their columns, as the database reports them."""
    engine = create_engine(url)
    try:
        inspector = inspect(engine)
        names = sorted(inspector.get_table_names()) + sorted(inspector.get_view_names())
        return {
            name: sorted((c["name"], str(c["type"])) for c in inspector.get_columns(name))
            for name in names
        }
    finally:
        engine.dispose()


def test_alembic_upgrade_head_creates_the_schema_etl_run_creates(
    db_url: str, tmp_path: Path, seeds: Path
) -> None:
    if db_url.startswith("sqlite"):
        by_etl = f"sqlite:///{tmp_path / 'by_etl.db'}"
        load(by_etl, seeds)
        alembic(db_url, "upgrade", "head")
        assert schema(db_url) == schema(by_etl)
    else:
        alembic(db_url, "upgrade", "head")
        migrated = schema(db_url)
        load(db_url, seeds)  # etl run on the migrated database adds nothing to the schema
        assert schema(db_url) == migrated
    assert {"papers_with_code", "paper_overview", "papers"} <= set(schema(db_url))


@pytest.mark.slow
def test_downgrade_to_base_and_upgrade_again(db_url: str) -> None:
    alembic(db_url, "upgrade", "head")
    alembic(db_url, "downgrade", "base")
    assert set(schema(db_url)) <= {"alembic_version"}
    alembic(db_url, "upgrade", "head")
    assert "papers_with_code" in schema(db_url)


def test_migrations_match_the_schema_definition(db_url: str) -> None:
    alembic(db_url, "upgrade", "head")
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection,
                opts={"include_object": include_object, "compare_type": True},
            )
            assert compare_metadata(context, metadata) == []
    finally:
        engine.dispose()


def execute(url: str, *statements: str) -> None:
    engine = create_db_engine(url)  # as etl connects: foreign keys enforced on SQLite too
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.execute(text(statement))
    finally:
        engine.dispose()


@pytest.mark.slow
def test_0003_rekeys_child_rows_by_paper_pk_and_back_keeping_every_row(db_url: str) -> None:
    alembic(db_url, "upgrade", "0002")
    counts = ", ".join(["0"] * 10)
    execute(
        db_url,
        "INSERT INTO runs (id, started_at, status, sources_loaded, sources_skipped, "
        "sources_failed, papers_inserted, papers_updated, papers_unchanged, papers_removed, "
        f"links, methods, rejects) VALUES (1, '2026-01-01', 'succeeded', {counts})",
        "INSERT INTO papers (pk, id, abstract, abstract_raw, content_hash, created_run_id, "
        "updated_run_id) VALUES (7, 'pa', 'A.', 'A.', 'h1', 1, 1), (9, 'pb', 'B.', 'B.', 'h2', 1, 1)",
        "INSERT INTO authors (id, name) VALUES (1, 'Ada'), (2, 'Bo')",
        "INSERT INTO paper_authors (paper_id, position, author_id) "
        "VALUES ('pa', 1, 1), ('pa', 2, 2), ('pb', 1, 2)",
        "INSERT INTO acronyms (paper_id, acronym, expansion) VALUES ('pb', 'GNN', 'graph network')",
    )
    alembic(db_url, "upgrade", "head")
    assert fetch(
        db_url, "SELECT paper_pk, position, author_id FROM paper_authors ORDER BY 1, 2"
    ) == [
        (7, 1, 1),
        (7, 2, 2),
        (9, 1, 2),
    ]
    assert fetch(db_url, "SELECT acronym, paper_id FROM acronym_glossary") == [("GNN", "pb")]
    execute(db_url, "DELETE FROM papers WHERE id = 'pa'")  # the new key cascades
    assert fetch(db_url, "SELECT paper_pk FROM paper_authors") == [(9,)]

    alembic(db_url, "downgrade", "0002")
    assert fetch(db_url, "SELECT paper_id, position FROM paper_authors") == [("pb", 1)]
    assert fetch(db_url, "SELECT paper_id, acronym FROM acronyms") == [("pb", "GNN")]
    assert "acronym_glossary" not in schema(db_url)  # views return with `upgrade head`
    alembic(db_url, "upgrade", "head")
    assert fetch(db_url, "SELECT paper_id FROM acronym_glossary") == [("pb",)]


def search_vector_storage(url: str) -> object:
    return fetch_one(
        url,
        "SELECT attstorage FROM pg_attribute "
        "WHERE attrelid = 'papers'::regclass AND attname = 'search_vector'",
    )


@pytest.mark.slow
def test_0004_keeps_search_vectors_in_the_row_on_postgres(postgres_url: str, seeds: Path) -> None:
    load(postgres_url, seeds)
    assert search_vector_storage(postgres_url) == "m"  # MAIN: in the row, compressed if need be
    alembic(postgres_url, "downgrade", "0003")
    assert search_vector_storage(postgres_url) == "x"  # EXTENDED, PostgreSQL's default
    alembic(postgres_url, "upgrade", "head")
    assert search_vector_storage(postgres_url) == "m"
    assert fetch(postgres_url, "SELECT count(*) FROM papers_with_code")[0][0] == 10


@pytest.mark.slow
def test_0005_moves_venues_to_sightings_and_keys_existing_papers(
    db_url: str, tmp_path: Path
) -> None:
    alembic(db_url, "upgrade", "0004")
    counts = ", ".join(["0"] * 10)
    abstract = " ".join(["Sorting numbers with a small recurrent model"] * 4)
    execute(
        db_url,
        # no explicit ids: the identity sequences must serve the load that follows
        "INSERT INTO runs (started_at, status, sources_loaded, sources_skipped, "
        "sources_failed, papers_inserted, papers_updated, papers_unchanged, papers_removed, "
        f"links, methods, rejects) VALUES ('2026-01-01', 'succeeded', {counts})",
        "INSERT INTO sources (path, checksum, fingerprint, format, size_bytes, record_count, "
        "reject_count, loaded_at, run_id) SELECT 'old.json', 'c', 'f', 'json', 1, 1, 0, "
        "'2026-01-01', id FROM runs",
        "INSERT INTO papers (id, venue, year, title, abstract, abstract_raw, status, "
        "content_hash, created_run_id, updated_run_id) SELECT 'pold', 'ICLR', 2018, "
        f"'Sorting', '{abstract}', '{abstract}', 'Reject', 'h', id, id FROM runs",
        "INSERT INTO paper_sources (paper_pk, source_id, position, run_id) "
        "SELECT p.pk, s.id, 1, s.run_id FROM papers p, sources s",
    )
    alembic(db_url, "upgrade", "head")
    assert fetch(db_url, "SELECT venue, year, status FROM paper_sources") == [
        ("ICLR", 2018, "Reject")
    ]
    assert sorted(k.split(":")[0] for (k,) in fetch(db_url, "SELECT key FROM paper_keys")) == [
        "abs",
        "title",
    ]
    assert fetch(db_url, "SELECT venue, year, status FROM venue_summary") == [
        ("ICLR", 2018, "Reject")
    ]
    new = tmp_path / "new.json"
    new.write_text(
        json.dumps([{"title": "Sorting", "abstract": abstract, "venue": "NeurIPS 2018"}])
    )
    load(db_url, new)  # the record finds the paper stored before 0005
    ((paper_id, venue),) = fetch(db_url, "SELECT id, venue FROM papers")
    # its id is now the one its records give (the smaller of two abstracts' ids: 0010)
    assert venue == "NeurIPS" and paper_id == min("pold", str(paper_id))
    alembic(db_url, "downgrade", "0004")
    assert "paper_keys" not in schema(db_url)
    assert "venue" not in {c for c, _ in schema(db_url)["paper_sources"]}  # type: ignore[attr-defined]
    alembic(db_url, "upgrade", "head")
    assert fetch(db_url, "SELECT count(*) FROM papers_with_code") == [(0,)]


def test_0010_gives_each_sighting_its_papers_values_and_a_row_per_mention(
    db_url: str, tmp_path: Path
) -> None:
    """A paper stored before 0010 keeps everything it showed: its sighting is given the paper's
    values as its record, its method mention keeps its method; a file naming it later is
    merged with that record (a new repository added, the old one kept)."""
    alembic(db_url, "upgrade", "0009")
    counts = ", ".join(["0"] * 10)
    abstract = " ".join(["Sorting numbers with a small recurrent model"] * 4)
    execute(
        db_url,
        "INSERT INTO runs (started_at, status, sources_loaded, sources_skipped, "
        "sources_failed, papers_inserted, papers_updated, papers_unchanged, papers_removed, "
        f"links, methods, rejects) VALUES ('2026-01-01', 'succeeded', {counts})",
        "INSERT INTO sources (path, checksum, fingerprint, format, size_bytes, record_count, "
        "reject_count, loaded_at, run_id) SELECT 'old.json', 'c', 'f', 'json', 1, 1, 0, "
        "'2026-01-01', id FROM runs",
        "INSERT INTO papers (id, venue, year, title, abstract, abstract_raw, status, "
        "method_names, content_hash, created_run_id, updated_run_id) SELECT 'pold', 'ICLR', "
        f"2018, 'Sorting', '{abstract}', '{abstract}', 'Reject', 'SortNet', 'h', id, id "
        "FROM runs",
        "INSERT INTO paper_sources (paper_pk, source_id, position, run_id, venue, year, status) "
        "SELECT p.pk, s.id, 1, s.run_id, 'ICLR', 2018, 'Reject' FROM papers p, sources s",
        *(
            f"INSERT INTO paper_keys (paper_pk, key) SELECT pk, '{key}' FROM papers"
            for key in (*identity_keys(abstract, "Sorting"), "bib:old")
        ),
        "INSERT INTO authors (name) VALUES ('Ada Lovelace')",
        "INSERT INTO paper_authors (paper_pk, position, author_id) "
        "SELECT p.pk, 1, a.id FROM papers p, authors a",
        "INSERT INTO links (url, host, kind, repo_owner, repo_name) "
        "VALUES ('https://github.com/ada/sort', 'github.com', 'code', 'ada', 'sort')",
        "INSERT INTO paper_links (paper_pk, link_id, found_in) "
        "SELECT p.pk, l.id, 'github' FROM papers p, links l",
        "INSERT INTO methods (key, name, kind) VALUES ('sortnet', 'SortNet', 'model')",
        "INSERT INTO method_aliases (key, alias, method_id) SELECT 'sortnet', 'SortNet', id "
        "FROM methods",
        "INSERT INTO method_aliases (key, alias, method_id) SELECT 'sortingnetwork', "
        "'Sorting Network', id FROM methods",
        "INSERT INTO paper_methods (paper_pk, method_id, role, surface) "
        "SELECT p.pk, m.id, 'introduced', 'SortNet' FROM papers p, methods m",
    )
    alembic(db_url, "upgrade", "head")
    ((content_hash, record),) = fetch(db_url, "SELECT content_hash, record FROM paper_sources")
    given = json.loads(str(record))
    assert content_hash == "h" and given["title"] == "Sorting" and given["id"] == "pold"
    assert given["authors"] == ["Ada Lovelace"]
    assert [link[0] for link in given["links"]] == ["https://github.com/ada/sort"]
    assert given["keys"] == sorted(identity_keys(abstract, "Sorting"))  # not the old bib: key
    mention = fetch(db_url, "SELECT key, role, kind, aliases, position FROM paper_methods")
    aliases = [["sortnet", "SortNet"], ["sortingnetwork", "Sorting Network"]]
    assert mention == [("sortnet", "introduced", "model", json.dumps(aliases), 1)]
    alembic(db_url, "downgrade", "0009")
    assert fetch(db_url, "SELECT role, surface FROM paper_methods") == [("introduced", "SortNet")]
    alembic(db_url, "upgrade", "head")
    newer = tmp_path / "later.json"
    newer.write_text(
        json.dumps(
            [{"title": "Sorting", "abstract": abstract, "github": "https://github.com/ada/sort2"}]
        )
    )
    load(db_url, newer)
    assert fetch_one(db_url, "SELECT count(*) FROM papers") == 1
    assert sorted(r[0] for r in fetch(db_url, "SELECT code_url FROM papers_with_code")) == [
        "https://github.com/ada/sort",
        "https://github.com/ada/sort2",
    ]


# Frozen migrations: each revision does what it did when it was written.

REVISIONS = sorted(path.name[:4] for path in (REPO / "migrations" / "versions").glob("0*.py"))
ALLOWED_IMPORTS = {
    "__future__",
    "collections",
    "dataclasses",
    "hashlib",
    "json",
    "re",
    "unicodedata",
}


def test_no_revision_reads_live_code_or_sql_files() -> None:
    for path in (REPO / "migrations" / "versions").glob("0*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in ALLOWED_IMPORTS | {"sqlalchemy", "alembic"}, (path.name, name)
        assert "read_text" not in path.read_text("utf-8"), path.name


def catalog(url: str) -> dict[str, list[tuple[object, ...]]]:
    """Everything the database's catalog says about etl's schema (not the data)."""
    if url.startswith("sqlite"):
        return {
            "sqlite_master": fetch(
                url,
                "SELECT type, name, tbl_name, sql FROM sqlite_master "
                "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
            )
        }
    here = "current_schema()::regnamespace"
    queries = {
        "columns": "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, "
        "column_default, is_identity, is_generated, generation_expression "
        "FROM information_schema.columns WHERE table_schema = current_schema()",
        "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
        f"FROM pg_constraint WHERE connamespace = {here}",
        "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes "
        "WHERE schemaname = current_schema()",
        "views": "SELECT table_name, view_definition FROM information_schema.views "
        "WHERE table_schema = current_schema()",
        "comments": "SELECT c.relname, a.attnum, a.attname, a.attstorage, "
        "col_description(c.oid, a.attnum), obj_description(c.oid, 'pg_class') "
        "FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
        f"WHERE c.relnamespace = {here} AND a.attnum > 0 AND NOT a.attisdropped",
        "triggers": "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) "
        "FROM pg_trigger WHERE NOT tgisinternal",
    }
    return {name: sorted(fetch(url, sql), key=repr) for name, sql in queries.items()}


@pytest.mark.parametrize("revision", REVISIONS[:-1])
@pytest.mark.slow
def test_a_database_made_at_an_old_revision_upgrades_to_what_a_fresh_one_is(
    db_url: str, tmp_path: Path, seeds: Path, revision: str
) -> None:
    """A database made at an old revision, then loaded by today's `etl run` (which upgrades
    it), has the schema and the rows of a database made fresh by the same run."""
    alembic(db_url, "upgrade", revision)
    load(db_url, seeds)
    kind = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    (tmp_path / "fresh").mkdir()
    with fresh_database(kind, tmp_path / "fresh") as fresh:
        load(fresh, seeds)
        assert catalog(db_url) == catalog(fresh)
        assert snapshot(db_url) == snapshot(fresh)


def test_the_search_trigger_a_load_drops_comes_back_as_the_database_held_it(
    tmp_path: Path, seeds: Path
) -> None:
    """The first load drops the full-text insert trigger for speed and puts back the database's
    own definition, whatever today's files say."""
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    alembic(url, "upgrade", "head")
    held = (
        "CREATE TRIGGER papers_fts_insert AFTER INSERT ON papers BEGIN\n"
        "    -- as an older release made it\n"
        "    INSERT INTO papers_fts(rowid, title, abstract, method_names)\n"
        "    VALUES (new.pk, new.title, new.abstract, new.method_names);\n"
        "END"
    )
    execute(url, "DROP TRIGGER papers_fts_insert", held)
    load(url, seeds)
    trigger = "SELECT sql FROM sqlite_master WHERE name = 'papers_fts_insert'"
    assert fetch(url, trigger) == [(held,)]


def test_0012_adds_citations_and_a_sources_count_keeping_every_sighting(db_url: str) -> None:
    """A database at 0011 gains `citations` (empty: a reload of a file gives its edges) and
    `paper_sources.cited_by_count`; a downgrade drops both and keeps the sightings."""
    alembic(db_url, "upgrade", "0011")
    execute(
        db_url,
        "INSERT INTO runs (started_at, status, sources_loaded, sources_skipped, "
        "sources_failed, papers_inserted, papers_updated, papers_unchanged, papers_removed, "
        "links, methods, rejects) VALUES ('2026-01-01', 'succeeded', 0, 0, 0, 0, 0, 0, 0, 0, "
        "0, 0)",
        "INSERT INTO sources (path, checksum, fingerprint, format, size_bytes, record_count, "
        "reject_count, loaded_at, run_id) SELECT 'old.json', 'c', 'f', 'json', 1, 1, 0, "
        "'2026-01-01', id FROM runs",
        "INSERT INTO papers (id, abstract, abstract_raw, method_names, content_hash, "
        "created_run_id, updated_run_id) SELECT 'pold', 'a', 'a', '', 'h', id, id FROM runs",
        "INSERT INTO paper_sources (paper_pk, source_id, position, run_id, content_hash, record) "
        "SELECT p.pk, s.id, 1, s.run_id, 'h', '{}' FROM papers p, sources s",
    )
    alembic(db_url, "upgrade", "0012")
    assert fetch(db_url, "SELECT position, cited_by_count FROM paper_sources") == [(1, None)]
    execute(
        db_url,
        "INSERT INTO citations (paper_pk, source_id, position, cited_key, cited_paper_pk) "
        "SELECT paper_pk, source_id, position, 'doi:10.1/x', paper_pk FROM paper_sources",
        "DELETE FROM papers",  # the sighting goes with its paper, and the edge with it
    )
    assert fetch(db_url, "SELECT count(*) FROM citations") == [(0,)]
    alembic(db_url, "downgrade", "0011")
    assert "citations" not in schema(db_url)
    assert "cited_by_count" not in dict(schema(db_url)["paper_sources"])  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_migrated_databases_tests_get_are_what_a_migration_makes_and_each_their_own(
    kind: str, tmp_path: Path, seeds: Path
) -> None:
    """The copies of a migrated template that tests marked `migrated` get (tests/conftest.py)
    hold what migrating a new database makes, and what one test writes is in no other copy."""
    for name in ("fresh", "first", "second"):
        (tmp_path / name).mkdir()
    with (
        fresh_database(kind, tmp_path / "fresh") as fresh,
        fresh_database(kind, tmp_path / "first", migrated=True) as first,
    ):
        engine = create_db_engine(fresh)
        upgrade_to_head(engine)  # as `etl run` migrates a new database
        engine.dispose()
        assert catalog(first) == catalog(fresh)
        assert fetch(first, "SELECT version_num FROM alembic_version") == [(head_revision(),)]
        load(first, seeds)
        with fresh_database(kind, tmp_path / "second", migrated=True) as second:
            assert fetch_one(second, "SELECT count(*) FROM papers") == 0
            assert fetch_one(second, "SELECT count(*) FROM runs") == 0
            assert catalog(second) == catalog(fresh)

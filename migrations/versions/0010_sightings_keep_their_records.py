"""Sightings keep their records; one paper_methods row per mention

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02

A paper is now derived from all its sightings (etl.load.derive), so each sighting keeps the
values its record gave: `paper_sources.record` (JSON) and `content_hash`. Sightings loaded
before this revision did not keep theirs: each is given the paper's values as they stand
(what its paper shows, so nothing is lost; a later load of its file replaces them with the
record's own).

`paper_methods` holds one row per mention (keyed by the mention's normalised name), with the
kind and the names the mention gives: methods are recomputed from the mentions, so a method
no longer depends on which file named it first. Existing rows keep their method, and every
name of it as their aliases.

The `bib:` identity keys change form (the first author's family name with an initial, not any
word of the name): the old ones are dropped; a reload of a file gives its records new ones.
"""

import json
import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
CHUNK = 500
SIGHTINGS_BEFORE = "Where each paper was seen: each sighting with its venue, year and status."
SIGHTINGS_NOW = (
    "Where each paper was seen: each sighting with the values its source gave. A paper's "
    "values are derived from all its sightings (docs: identity and reruns)."
)
FIELDS_BEFORE = (
    "what changed: title, abstract, authors, venue, year, status; the link's kind "
    "(code, project); source (a sighting's)"
)
FIELDS_NOW = (
    "what changed: title, abstract, authors, venue, year, status, id; the link's "
    "kind (code, project); source (a sighting's)"
)
KEYS_BEFORE = (
    "doi:, arxiv:, openreview:, openalex:, s2:, s2corpus:, dblp:, pwc:, abs: "
    "(abstract hash), title: (title hash), bib: (title, first author, year), text:"
)
KEYS_NOW = (
    "doi:, arxiv:, openreview:, openalex:, s2:, s2corpus:, dblp:, pwc:, abs: "
    "(abstract hash), title: (title hash), bib: (title, first author's family name and "
    "initial, year), text:"
)


def upgrade() -> None:
    drop_views_reading("paper_methods", "paper_sources", "paper_keys")
    bind = op.get_bind()
    op.execute("DELETE FROM paper_keys WHERE key >= 'bib:' AND key < 'bib;'")
    _one_row_per_mention(bind)
    # Added as NOT NULL with an empty default (SQLite adds such a column in place), filled,
    # then the default dropped where the database can (PostgreSQL).
    op.add_column(
        "paper_sources",
        sa.Column(
            "content_hash",
            sa.Text(),
            nullable=False,
            server_default="",
            comment="hash of the record's content (everything but venue, year and status)",
        ),
    )
    op.add_column(
        "paper_sources",
        sa.Column(
            "record",
            sa.Text(),
            nullable=False,
            server_default="",
            comment="JSON object: the record's own values (title, abstract, authors, links, "
            "identity keys, what the transform found); the paper is derived from its "
            "sightings'",
        ),
    )
    _records_from_papers(bind)
    if bind.dialect.name == "postgresql":
        for column in ("content_hash", "record"):
            op.alter_column("paper_sources", column, server_default=None)
    op.create_index(
        op.f("ix_paper_sources_source_id_position"), "paper_sources", ["source_id", "position"]
    )
    _comments(SIGHTINGS_NOW, KEYS_NOW, FIELDS_NOW)


def _comments(sightings: str, keys: str, fields: str) -> None:
    """The comments on `paper_sources`, `paper_keys.key` and `change_events.field` (SQLite
    keeps no comments)."""
    if op.get_bind().dialect.name == "postgresql":
        op.create_table_comment("paper_sources", sightings)
        op.alter_column(
            "paper_keys", "key", existing_type=sa.Text(), existing_nullable=False, comment=keys
        )
        op.alter_column(
            "change_events",
            "field",
            existing_type=sa.Text(),
            existing_nullable=True,
            comment=fields,
        )


def _one_row_per_mention(bind: sa.Connection) -> None:
    """Rebuild paper_methods keyed by mention, each row keeping its method."""
    aliases: dict[int, list[list[str]]] = {}
    for method_id, key, alias, canonical in bind.exec_driver_sql(
        "SELECT a.method_id, a.key, a.alias, m.key FROM method_aliases AS a "
        "JOIN methods AS m ON m.id = a.method_id ORDER BY a.method_id, a.key"
    ):
        pairs = aliases.setdefault(method_id, [])
        pairs.insert(0, [key, alias]) if key == canonical else pairs.append([key, alias])
    old = bind.exec_driver_sql(
        "SELECT pm.paper_pk, m.key, pm.method_id, pm.role, pm.surface, m.kind, m.name "
        "FROM paper_methods AS pm JOIN methods AS m ON m.id = pm.method_id "
        "ORDER BY pm.paper_pk, pm.method_id"
    ).all()
    op.drop_index(op.f("ix_paper_methods_method_id"), table_name="paper_methods")
    op.drop_table("paper_methods")
    table = op.create_table(
        "paper_methods",
        sa.Column("paper_pk", ID, nullable=False, comment="the paper (papers.pk)"),
        sa.Column(
            "key",
            sa.Text(),
            nullable=False,
            comment="the mention's normalised name (one row per paper and mention)",
        ),
        sa.Column("name", sa.Text(), nullable=False, comment="the mention's name, as spelled"),
        sa.Column("method_id", ID, nullable=False),
        sa.Column("role", sa.Text(), nullable=False, comment="introduced or mentioned"),
        sa.Column("surface", sa.Text(), nullable=False, comment="the form as written"),
        sa.Column(
            "kind", sa.Text(), nullable=False, comment="the kind the transform gave this mention"
        ),
        sa.Column(
            "aliases",
            sa.Text(),
            nullable=False,
            comment="JSON array of [key, name] pairs: every name the mention gives the "
            "artifact, its own first; methods are the groups of mentions these names join",
        ),
        sa.Column(
            "position",
            sa.Integer(),
            nullable=False,
            comment="1 for the paper's first mention, in the order the text gives them",
        ),
        sa.ForeignKeyConstraint(
            ["method_id"],
            ["methods.id"],
            name=op.f("fk_paper_methods_method_id_methods"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["paper_pk"],
            ["papers.pk"],
            name=op.f("fk_paper_methods_paper_pk_papers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paper_pk", "key", name=op.f("pk_paper_methods")),
        comment="Named artifacts each paper introduces or mentions, one row per mention. Two "
        "mentions of a paper may name one method (paper_method_roles gives one row per method).",
    )
    op.create_index(op.f("ix_paper_methods_method_id"), "paper_methods", ["method_id"])
    rows = []
    position = {}
    for paper_pk, key, method_id, role, surface, kind, name in old:
        position[paper_pk] = position.get(paper_pk, 0) + 1
        pairs = aliases.get(method_id) or [[key, name]]
        rows.append(
            {
                "paper_pk": paper_pk,
                "key": key,
                "name": name,
                "method_id": method_id,
                "role": role,
                "surface": surface,
                "kind": kind,
                "aliases": json.dumps(pairs, ensure_ascii=False),
                "position": position[paper_pk],
            }
        )
    for start in range(0, len(rows), CHUNK):
        op.bulk_insert(table, rows[start : start + CHUNK])


def _records_from_papers(bind: sa.Connection) -> None:
    """Give each sighting its paper's values as they stand, as a record of its own."""
    pks = [row[0] for row in bind.exec_driver_sql("SELECT pk FROM papers ORDER BY pk")]
    update = sa.text(
        "UPDATE paper_sources SET content_hash = :content_hash, record = :record "
        "WHERE paper_pk = :pk"
    )
    for start in range(0, len(pks), CHUNK):
        part = pks[start : start + CHUNK]
        records = _records(bind, part)
        bind.execute(
            update,
            [
                {"pk": pk, "content_hash": h, "record": record}
                for pk, (h, record) in records.items()
            ],
        )


def _records(bind: sa.Connection, pks: list[int]) -> dict[int, tuple[str, str]]:
    """(content hash, record JSON) of each paper, from its row and its child rows."""
    marks = ", ".join(str(int(pk)) for pk in pks)

    def rows(sql: str) -> dict[int, list[tuple[object, ...]]]:
        found: dict[int, list[tuple[object, ...]]] = {pk: [] for pk in pks}
        for row in bind.exec_driver_sql(sql.format(pks=marks)):
            found[row[0]].append(tuple(row[1:]))
        return found

    authors = rows(
        "SELECT pa.paper_pk, a.name, pa.homepage FROM paper_authors AS pa "
        "JOIN authors AS a ON a.id = pa.author_id WHERE pa.paper_pk IN ({pks}) "
        "ORDER BY pa.paper_pk, pa.position"
    )
    links = rows(
        "SELECT pl.paper_pk, l.url, l.host, l.kind, l.repo_owner, l.repo_name, pl.found_in "
        "FROM paper_links AS pl JOIN links AS l ON l.id = pl.link_id "
        "WHERE pl.paper_pk IN ({pks}) ORDER BY pl.paper_pk, l.url"
    )
    methods = rows(
        "SELECT pm.paper_pk, pm.name, pm.kind, pm.role, pm.surface, pm.aliases "
        "FROM paper_methods AS pm WHERE pm.paper_pk IN ({pks}) ORDER BY pm.paper_pk, pm.position"
    )
    acronyms = rows(
        "SELECT paper_pk, acronym, expansion FROM acronyms WHERE paper_pk IN ({pks}) "
        "ORDER BY paper_pk, acronym, expansion"
    )
    topics = rows(
        "SELECT paper_pk, topic_slug, score, evidence FROM paper_topics "
        "WHERE paper_pk IN ({pks}) ORDER BY paper_pk, score DESC, topic_slug"
    )
    tasks = rows(
        "SELECT paper_pk, task_name, score, evidence FROM paper_tasks "
        "WHERE paper_pk IN ({pks}) ORDER BY paper_pk, score DESC, task_name"
    )
    keys = rows("SELECT paper_pk, key FROM paper_keys WHERE paper_pk IN ({pks}) ORDER BY key")
    listed = rows(
        "SELECT plt.paper_pk, lt.kind, lt.name, lt.detail FROM paper_listed_terms AS plt "
        "JOIN listed_terms AS lt ON lt.id = plt.term_id WHERE plt.paper_pk IN ({pks}) "
        "ORDER BY plt.paper_pk, plt.position"
    )
    papers = bind.exec_driver_sql(
        "SELECT pk, id, title, abstract, abstract_raw, keywords, extra, method_names, "
        f"title_raw, content_hash FROM papers WHERE pk IN ({marks})"
    ).all()
    records = {}
    for pk, pid, title, abstract, raw, keywords, extra, names, title_raw, content_hash in papers:
        homepages = [homepage for _, homepage in authors[pk]]
        record = {
            "id": pid,
            "title": title,
            "abstract": abstract,
            "abstract_raw": raw,
            "keywords": keywords,
            "extra": extra,
            "method_names": names,
            "title_raw": title_raw,
            "authors": [name for name, _ in authors[pk]],
            "links": [list(link) for link in links[pk]],
            "methods": [
                [
                    name,
                    kind,
                    role,
                    surface,
                    [a for _, a in json.loads(pairs)[1:]],
                    [k for k, _ in json.loads(pairs)],
                ]
                for name, kind, role, surface, pairs in methods[pk]
            ],
            "acronyms": [list(a) for a in acronyms[pk]],
            "topics": [list(t) for t in topics[pk]],
            "tasks": [list(t) for t in tasks[pk]],
            "keys": [key for (key,) in keys[pk]],
            "author_homepages": homepages if any(homepages) else [],
            "listed": [list(term) for term in listed[pk]],
        }
        records[pk] = (content_hash, json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return records


def downgrade() -> None:
    drop_views_reading("paper_methods", "paper_sources", "paper_keys")
    op.drop_index(op.f("ix_paper_sources_source_id_position"), table_name="paper_sources")
    with op.batch_alter_table("paper_sources") as batch:
        batch.drop_column("record")
        batch.drop_column("content_hash")
    _comments(SIGHTINGS_BEFORE, KEYS_BEFORE, FIELDS_BEFORE)
    bind = op.get_bind()
    old = bind.exec_driver_sql(
        "SELECT paper_pk, method_id, MIN(role), MIN(surface) FROM paper_methods "
        "GROUP BY paper_pk, method_id ORDER BY paper_pk, method_id"
    ).all()
    op.drop_index(op.f("ix_paper_methods_method_id"), table_name="paper_methods")
    op.drop_table("paper_methods")
    table = op.create_table(
        "paper_methods",
        sa.Column("paper_pk", ID, nullable=False, comment="the paper (papers.pk)"),
        sa.Column("method_id", ID, nullable=False),
        sa.Column("role", sa.Text(), nullable=False, comment="introduced or mentioned"),
        sa.Column("surface", sa.Text(), nullable=False, comment="the form as written"),
        sa.ForeignKeyConstraint(
            ["method_id"],
            ["methods.id"],
            name=op.f("fk_paper_methods_method_id_methods"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["paper_pk"],
            ["papers.pk"],
            name=op.f("fk_paper_methods_paper_pk_papers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paper_pk", "method_id", name=op.f("pk_paper_methods")),
    )
    op.create_index(op.f("ix_paper_methods_method_id"), "paper_methods", ["method_id"])
    rows = [
        {"paper_pk": pk, "method_id": method, "role": role, "surface": surface}
        for pk, method, role, surface in old
    ]
    for start in range(0, len(rows), CHUNK):
        op.bulk_insert(table, rows[start : start + CHUNK])


def drop_views_reading(*tables: str) -> None:
    """Drop the views the database holds that read these tables, directly or through other
    views, as its catalog lists them (a copy frozen with this revision: never edit)."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        rows = bind.exec_driver_sql(
            "WITH RECURSIVE reading(oid) AS ("
            " SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid"
            " WHERE r.ev_class <> d.refobjid AND d.refobjid IN (SELECT c.oid FROM pg_class c"
            " WHERE c.relname = ANY(%s) AND c.relnamespace = to_regnamespace(current_schema()))"
            " UNION SELECT r.ev_class FROM reading JOIN pg_depend d ON d.refobjid = reading.oid"
            " JOIN pg_rewrite r ON r.oid = d.objid WHERE r.ev_class <> d.refobjid)"
            " SELECT DISTINCT c.relname FROM pg_class c JOIN reading ON reading.oid = c.oid"
            " WHERE c.relkind = 'v'",
            (list(tables),),
        ).all()
        for (name,) in rows:
            bind.exec_driver_sql(f'DROP VIEW IF EXISTS "{name}" CASCADE')
        return
    views = dict(
        bind.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'view'").all()
    )
    read = set(tables)
    dropped: set[str] = set()
    while True:
        found = {
            name
            for name, sql in views.items()
            if name not in dropped
            and any(re.search(rf"\b{re.escape(table)}\b", sql or "", re.I) for table in read)
        }
        if not found:
            break
        dropped |= found
        read |= found
    for name in sorted(dropped):
        bind.exec_driver_sql(f'DROP VIEW IF EXISTS "{name}"')

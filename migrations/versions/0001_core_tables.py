"""Core tables, and the full-text search structures of each dialect (frozen copies of sql/)

Revision ID: 0001
Revises: 
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The full-text search structures of each dialect, as this revision made them: the
# statements of sql/*/search.sql, copied here so that what 0001 does never changes.
SEARCH = {
    "sqlite": [
        """\
-- Full-text index over title, abstract and method names (SQLite FTS5).
-- External content: the text lives in `papers`; triggers keep the index in step with it,
-- inside the same transaction as the change.
CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, method_names,
    content='papers', content_rowid='pk',
    tokenize='porter unicode61 remove_diacritics 2'
);""",
        """\
CREATE TRIGGER papers_fts_insert AFTER INSERT ON papers BEGIN
    INSERT INTO papers_fts(rowid, title, abstract, method_names)
    VALUES (new.pk, new.title, new.abstract, new.method_names);
END;""",
        """\
CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, method_names)
    VALUES ('delete', old.pk, old.title, old.abstract, old.method_names);
END;""",
        """\
CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract, method_names ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, method_names)
    VALUES ('delete', old.pk, old.title, old.abstract, old.method_names);
    INSERT INTO papers_fts(rowid, title, abstract, method_names)
    VALUES (new.pk, new.title, new.abstract, new.method_names);
END;""",
    ],
    "postgresql": [
        """\
-- Full-text search on PostgreSQL: a weighted tsvector (title and method names above the
-- abstract), generated from the row so it can never drift from it, with a GIN index.
ALTER TABLE papers ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(title, '')), 'A')
    || setweight(to_tsvector('english', coalesce(method_names, '')), 'A')
    || setweight(to_tsvector('english', coalesce(abstract, '')), 'B')
) STORED;""",
        """\
CREATE INDEX ix_papers_search_vector ON papers USING gin (search_vector);""",
    ],
}
SEARCH_DROP = {
    "sqlite": [
        'DROP TRIGGER IF EXISTS papers_fts_update;',
        'DROP TRIGGER IF EXISTS papers_fts_delete;',
        'DROP TRIGGER IF EXISTS papers_fts_insert;',
        'DROP TABLE IF EXISTS papers_fts;',
    ],
    "postgresql": [
        'DROP INDEX IF EXISTS ix_papers_search_vector;',
        'ALTER TABLE papers DROP COLUMN IF EXISTS search_vector;',
    ],
}


def upgrade() -> None:
    op.create_table('authors',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_authors')),
    sa.UniqueConstraint('name', name=op.f('uq_authors_name'))
    )
    op.create_table('links',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('url', sa.Text(), nullable=False, comment='normalised URL'),
    sa.Column('host', sa.Text(), nullable=False),
    sa.Column('kind', sa.Text(), nullable=False, comment='code, project, paper, data or other'),
    sa.Column('repo_owner', sa.Text(), nullable=True),
    sa.Column('repo_name', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_links')),
    sa.UniqueConstraint('url', name=op.f('uq_links_url'))
    )
    op.create_table('methods',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('key', sa.Text(), nullable=False, comment='normalised name the aliases merge on'),
    sa.Column('name', sa.Text(), nullable=False, comment='canonical name'),
    sa.Column('kind', sa.Text(), nullable=False, comment='method, model, benchmark, dataset, loss ...'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_methods')),
    sa.UniqueConstraint('key', name=op.f('uq_methods_key')),
    comment='Named methods, models, benchmarks and datasets, one row per artifact.'
    )
    op.create_table('runs',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.Column('status', sa.Text(), nullable=False, comment='running, succeeded, partial, failed, interrupted'),
    sa.Column('sources_loaded', sa.Integer(), nullable=False),
    sa.Column('sources_skipped', sa.Integer(), nullable=False),
    sa.Column('sources_failed', sa.Integer(), nullable=False),
    sa.Column('papers_inserted', sa.Integer(), nullable=False),
    sa.Column('papers_updated', sa.Integer(), nullable=False),
    sa.Column('papers_unchanged', sa.Integer(), nullable=False),
    sa.Column('papers_removed', sa.Integer(), nullable=False),
    sa.Column('links', sa.Integer(), nullable=False),
    sa.Column('methods', sa.Integer(), nullable=False),
    sa.Column('rejects', sa.Integer(), nullable=False),
    sa.Column('seconds', sa.Float(), nullable=True),
    sa.Column('stage_seconds', sa.Text(), nullable=True, comment='JSON object: seconds per stage'),
    sa.Column('options', sa.Text(), nullable=True, comment='JSON object: the options the run was given'),
    sa.Column('message', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_runs')),
    comment='One row per `etl run`.'
    )
    op.create_table('topics',
    sa.Column('slug', sa.Text(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('parent_slug', sa.Text(), nullable=True, comment='the area a topic belongs to'),
    sa.Column('terms', sa.Text(), nullable=True, comment='JSON array of the terms that signal the topic'),
    sa.ForeignKeyConstraint(['parent_slug'], ['topics.slug'], name=op.f('fk_topics_parent_slug_topics')),
    sa.PrimaryKeyConstraint('slug', name=op.f('pk_topics'))
    )
    op.create_table('method_aliases',
    sa.Column('key', sa.Text(), nullable=False, comment='normalised alias'),
    sa.Column('alias', sa.Text(), nullable=False),
    sa.Column('method_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.ForeignKeyConstraint(['method_id'], ['methods.id'], name=op.f('fk_method_aliases_method_id_methods'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_method_aliases'))
    )
    with op.batch_alter_table('method_aliases', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_method_aliases_method_id'), ['method_id'], unique=False)

    op.create_table('papers',
    sa.Column('pk', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False, comment="internal row number (the full-text index's rowid)"),
    sa.Column('id', sa.Text(), nullable=False, comment="stable id from the paper's content"),
    sa.Column('venue', sa.Text(), nullable=True),
    sa.Column('year', sa.Integer(), nullable=True),
    sa.Column('title', sa.Text(), nullable=True),
    sa.Column('abstract', sa.Text(), nullable=False, comment='abstract without markup'),
    sa.Column('abstract_raw', sa.Text(), nullable=False, comment='abstract as written in the source'),
    sa.Column('status', sa.Text(), nullable=True, comment='status or track from the source'),
    sa.Column('keywords', sa.Text(), nullable=True, comment='JSON array'),
    sa.Column('extra', sa.Text(), nullable=True, comment='JSON object of source fields the extractor does not map'),
    sa.Column('method_names', sa.Text(), nullable=True, comment="names of the paper's methods, for search"),
    sa.Column('content_hash', sa.Text(), nullable=False),
    sa.Column('created_run_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('updated_run_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.ForeignKeyConstraint(['created_run_id'], ['runs.id'], name=op.f('fk_papers_created_run_id_runs')),
    sa.ForeignKeyConstraint(['updated_run_id'], ['runs.id'], name=op.f('fk_papers_updated_run_id_runs')),
    sa.PrimaryKeyConstraint('pk', name=op.f('pk_papers')),
    sa.UniqueConstraint('id', name=op.f('uq_papers_id')),
    comment='One row per distinct paper.'
    )
    with op.batch_alter_table('papers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_papers_venue_year'), ['venue', 'year'], unique=False)

    op.create_table('rejects',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('run_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('source_path', sa.Text(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('raw', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_rejects_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rejects')),
    comment='Records that could not be loaded, with the reason and their raw text.'
    )
    with op.batch_alter_table('rejects', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_rejects_run_id'), ['run_id'], unique=False)

    op.create_table('sources',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('checksum', sa.Text(), nullable=False, comment="SHA-256 of the file's bytes"),
    sa.Column('fingerprint', sa.Text(), nullable=False, comment='transform version and taxonomy hash'),
    sa.Column('format', sa.Text(), nullable=False),
    sa.Column('venue', sa.Text(), nullable=True),
    sa.Column('year', sa.Integer(), nullable=True),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('mtime_ns', sa.BigInteger(), nullable=True, comment='modification time when last read; unchanged size and time skip hashing'),
    sa.Column('record_count', sa.Integer(), nullable=False),
    sa.Column('reject_count', sa.Integer(), nullable=False),
    sa.Column('loaded_at', sa.DateTime(), nullable=False),
    sa.Column('run_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_sources_run_id_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sources')),
    sa.UniqueConstraint('path', name=op.f('uq_sources_path')),
    comment='Each input file loaded.'
    )
    op.create_table('acronyms',
    sa.Column('paper_id', sa.Text(), nullable=False),
    sa.Column('acronym', sa.Text(), nullable=False),
    sa.Column('expansion', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_acronyms_paper_id_papers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('paper_id', 'acronym', 'expansion', name=op.f('pk_acronyms'))
    )
    with op.batch_alter_table('acronyms', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_acronyms_acronym'), ['acronym'], unique=False)

    op.create_table('paper_authors',
    sa.Column('paper_id', sa.Text(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False, comment='1 for the first author'),
    sa.Column('author_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.ForeignKeyConstraint(['author_id'], ['authors.id'], name=op.f('fk_paper_authors_author_id_authors')),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_paper_authors_paper_id_papers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('paper_id', 'position', name=op.f('pk_paper_authors'))
    )
    with op.batch_alter_table('paper_authors', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_paper_authors_author_id'), ['author_id'], unique=False)

    op.create_table('paper_links',
    sa.Column('paper_id', sa.Text(), nullable=False),
    sa.Column('link_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('found_in', sa.Text(), nullable=False, comment='abstract, title or the record field'),
    sa.ForeignKeyConstraint(['link_id'], ['links.id'], name=op.f('fk_paper_links_link_id_links'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_paper_links_paper_id_papers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('paper_id', 'link_id', name=op.f('pk_paper_links'))
    )
    with op.batch_alter_table('paper_links', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_paper_links_link_id'), ['link_id'], unique=False)

    op.create_table('paper_methods',
    sa.Column('paper_id', sa.Text(), nullable=False),
    sa.Column('method_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('role', sa.Text(), nullable=False, comment='introduced or mentioned'),
    sa.Column('surface', sa.Text(), nullable=False, comment='the form as written'),
    sa.ForeignKeyConstraint(['method_id'], ['methods.id'], name=op.f('fk_paper_methods_method_id_methods'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_paper_methods_paper_id_papers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('paper_id', 'method_id', name=op.f('pk_paper_methods'))
    )
    with op.batch_alter_table('paper_methods', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_paper_methods_method_id'), ['method_id'], unique=False)

    op.create_table('paper_sources',
    sa.Column('paper_id', sa.Text(), nullable=False),
    sa.Column('source_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False, comment='line (text, JSON Lines, CSV) or record number'),
    sa.Column('run_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False, comment='the last run that saw it there'),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_paper_sources_paper_id_papers'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_paper_sources_run_id_runs')),
    sa.ForeignKeyConstraint(['source_id'], ['sources.id'], name=op.f('fk_paper_sources_source_id_sources'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('paper_id', 'source_id', 'position', name=op.f('pk_paper_sources')),
    comment='Where each paper was seen.'
    )
    with op.batch_alter_table('paper_sources', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_paper_sources_source_id_run_id'), ['source_id', 'run_id'], unique=False)

    op.create_table('paper_topics',
    sa.Column('paper_id', sa.Text(), nullable=False),
    sa.Column('topic_slug', sa.Text(), nullable=False),
    sa.Column('score', sa.Float(), nullable=False),
    sa.Column('evidence', sa.Text(), nullable=False, comment='the terms that matched, comma separated'),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_paper_topics_paper_id_papers'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic_slug'], ['topics.slug'], name=op.f('fk_paper_topics_topic_slug_topics')),
    sa.PrimaryKeyConstraint('paper_id', 'topic_slug', name=op.f('pk_paper_topics'))
    )
    with op.batch_alter_table('paper_topics', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_paper_topics_topic_slug'), ['topic_slug'], unique=False)


    for statement in SEARCH[op.get_bind().dialect.name]:
        op.get_bind().exec_driver_sql(statement)

def downgrade() -> None:
    for statement in SEARCH_DROP[op.get_bind().dialect.name]:
        op.get_bind().exec_driver_sql(statement)
    with op.batch_alter_table('paper_topics', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_paper_topics_topic_slug'))

    op.drop_table('paper_topics')
    with op.batch_alter_table('paper_sources', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_paper_sources_source_id_run_id'))

    op.drop_table('paper_sources')
    with op.batch_alter_table('paper_methods', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_paper_methods_method_id'))

    op.drop_table('paper_methods')
    with op.batch_alter_table('paper_links', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_paper_links_link_id'))

    op.drop_table('paper_links')
    with op.batch_alter_table('paper_authors', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_paper_authors_author_id'))

    op.drop_table('paper_authors')
    with op.batch_alter_table('acronyms', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_acronyms_acronym'))

    op.drop_table('acronyms')
    op.drop_table('sources')
    with op.batch_alter_table('rejects', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_rejects_run_id'))

    op.drop_table('rejects')
    with op.batch_alter_table('papers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_papers_venue_year'))

    op.drop_table('papers')
    with op.batch_alter_table('method_aliases', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_method_aliases_method_id'))

    op.drop_table('method_aliases')
    op.drop_table('topics')
    op.drop_table('runs')
    op.drop_table('methods')
    op.drop_table('links')
    op.drop_table('authors')

"""Load stage: migrations, set-based writes, runs and locks (SQLAlchemy Core only).

Public entry points: `create_db_engine`, `upgrade_to_head`, `SourceLoader` and the run
bookkeeping re-exported here. The writer is split by job: `writer` (a source's batches: each
record a sighting, papers derived again where their sightings change, removals), `derive` (the
one rule that makes a paper of its sightings), `identity` (which paper a record is),
`sightings` (the sightings' rows), `citations` (the edges sightings give), `children` (a
paper's child rows, declared once), `methods` (methods recomputed from their mentions),
`sources` (source state), `taxonomy` (topic and task sync), `maintenance` (orphans, search
index, statistics, full refresh); `backend` holds what differs between SQLite and
PostgreSQL; `search_index` and `foreign_keys` undo and restore what a fast first load
changes in the schema.
"""

from etl.load.backend import (
    Backend,
    backend_of,
    claim_source,
    exclude_loaders,
    hold_database,
    run_lock,
)
from etl.load.changes import record_run_start
from etl.load.citations import resolve_citations
from etl.load.database import (
    create_db_engine,
    first_load_journal,
    recreate_views,
    upgrade_to_head,
    view_definitions,
)
from etl.load.identity import FileKeys
from etl.load.known import RememberedRows
from etl.load.locks import RunLock
from etl.load.maintenance import (
    clear_data,
    delete_orphans,
    optimize_search,
    refresh_statistics,
)
from etl.load.runs import finish_run, record_rejects, start_run
from etl.load.sources import (
    SourceState,
    holds_enough,
    known_sources,
    move_source,
    moved_candidates,
    moved_share,
    paths_loaded_in,
    same_content,
    source_id_of,
    source_state,
    taken_over,
    touch_source,
)
from etl.load.taxonomy import sync_tasks, sync_topics
from etl.load.writer import LoadCounts, SourceLoader, forget_source, remove_all_unseen

__all__ = [
    "Backend",
    "FileKeys",
    "LoadCounts",
    "RememberedRows",
    "RunLock",
    "SourceLoader",
    "SourceState",
    "backend_of",
    "claim_source",
    "clear_data",
    "create_db_engine",
    "delete_orphans",
    "exclude_loaders",
    "finish_run",
    "first_load_journal",
    "forget_source",
    "hold_database",
    "holds_enough",
    "known_sources",
    "move_source",
    "moved_candidates",
    "moved_share",
    "optimize_search",
    "paths_loaded_in",
    "record_rejects",
    "record_run_start",
    "recreate_views",
    "refresh_statistics",
    "remove_all_unseen",
    "resolve_citations",
    "run_lock",
    "same_content",
    "source_id_of",
    "source_state",
    "start_run",
    "sync_tasks",
    "sync_topics",
    "taken_over",
    "touch_source",
    "upgrade_to_head",
    "view_definitions",
]

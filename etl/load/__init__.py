"""Load stage: migrations, set-based writes, runs and locks (SQLAlchemy Core only).

Public entry points: `create_db_engine`, `upgrade_to_head`, `SourceLoader` and the run
bookkeeping re-exported here.
"""

from etl.load.database import (
    create_db_engine,
    first_load_journal,
    recreate_views,
    upgrade_to_head,
    view_definitions,
)
from etl.load.known import RememberedRows
from etl.load.locks import RunLock, claim_source, exclude_loaders, hold_database, run_lock
from etl.load.runs import finish_run, start_run
from etl.load.writer import (
    LoadCounts,
    SourceLoader,
    SourceState,
    clear_data,
    delete_orphans,
    optimize_search,
    remove_all_unseen,
    source_state,
    sync_tasks,
    sync_topics,
    touch_source,
)

__all__ = [
    "LoadCounts",
    "RememberedRows",
    "RunLock",
    "SourceLoader",
    "SourceState",
    "claim_source",
    "clear_data",
    "create_db_engine",
    "delete_orphans",
    "exclude_loaders",
    "finish_run",
    "first_load_journal",
    "hold_database",
    "optimize_search",
    "recreate_views",
    "remove_all_unseen",
    "run_lock",
    "source_state",
    "start_run",
    "sync_tasks",
    "sync_topics",
    "touch_source",
    "upgrade_to_head",
    "view_definitions",
]

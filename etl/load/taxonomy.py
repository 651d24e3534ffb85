"""Taxonomy sync: the `topics` and `tasks` tables hold the run's taxonomy."""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import Connection

from etl.load import schema as s
from etl.load.backend import backend_of
from etl.models import Task, Topic


def sync_topics(connection: Connection, topics: Sequence[Topic]) -> None:
    """Make the topics table hold the taxonomy's topics (parents first)."""
    parents = {t.slug: t.parent for t in topics}

    def depth(slug: str | None) -> int:
        return 0 if slug is None else 1 + depth(parents.get(slug))

    rows = [
        (t.slug, t.name, t.parent, json.dumps(list(t.terms)))
        for t in sorted(topics, key=lambda t: depth(t.parent))
    ]
    backend_of(connection).upsert_rows(
        connection,
        s.topics,
        ("slug", "name", "parent_slug", "terms"),
        rows,
        conflict=["slug"],
        update=["name", "parent_slug", "terms"],
    )


def sync_tasks(connection: Connection, tasks: Sequence[Task]) -> None:
    """Make the tasks table hold the taxonomy's tasks (their topics synced first)."""
    rows = [(t.name, t.topic, json.dumps(list(t.terms))) for t in tasks]
    backend_of(connection).upsert_rows(
        connection,
        s.tasks,
        ("name", "topic_slug", "terms"),
        rows,
        conflict=["name"],
        update=["topic_slug", "terms"],
    )

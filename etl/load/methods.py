"""Method resolution: each mention of a batch is matched to a stored method through its alias
keys (the spellings that merge into one method), or a new method is created with its aliases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection

from etl.load import schema as s
from etl.load.bulk import highest_id, ids_since, insert_rows, upsert_rows
from etl.load.known import StoredRows
from etl.models import MethodValues


def resolve_methods(
    connection: Connection, stored: StoredRows, mentions: Sequence[tuple[int, MethodValues]]
) -> dict[tuple[int, int], tuple[int, int, str, str]]:
    """The paper_methods rows of (paper row number, mention): each mention's method found by
    an alias key, or created with its aliases."""
    all_keys = {k for _, (*_, keys) in mentions for k in keys}
    aliases_c = s.method_aliases.c
    known = stored.lookup(connection, aliases_c.key, aliases_c.method_id, all_keys)
    stored_keys = set(known)
    unknown = [keys for _, (*_, keys) in mentions if known.keys().isdisjoint(keys)]
    canonical = _cluster_keys(unknown)
    new_methods = {
        canonical[keys[0]]: (canonical[keys[0]], name, kind)
        for _, (name, kind, _role, _surface, _aliases, keys) in reversed(mentions)
        if keys[0] in canonical
    }
    if new_methods:
        known.update(_create_methods(connection, stored, new_methods, canonical))
    aliases: dict[str, tuple[str, str, int]] = {}
    rows: dict[tuple[int, int], tuple[int, int, str, str]] = {}
    for pk, (name, _kind, role, surface, more_names, keys) in mentions:
        method_id = _first_known(keys, known)
        for key, alias in zip(keys, (name, *more_names), strict=False):
            if key not in stored_keys:
                aliases.setdefault(key, (key, alias, method_id))
        previous = rows.get((pk, method_id))
        if previous is None or role == "introduced":
            rows[(pk, method_id)] = (pk, method_id, role, surface)
    insert_rows(connection, s.method_aliases, ("key", "alias", "method_id"), list(aliases.values()))
    stored.wrote_lookups(s.method_aliases.c.key, {key: row[2] for key, row in aliases.items()})
    return rows


def _first_known(keys: Sequence[str], known: Mapping[str, int]) -> int:
    """The method of a mention's first key that has one."""
    for key in keys:
        if key in known:
            return known[key]
    raise KeyError(keys)


def _create_methods(
    connection: Connection,
    stored: StoredRows,
    new_methods: dict[str, tuple[str, str, str]],
    canonical: dict[str, str],
) -> dict[str, int]:
    """Insert methods (rows of key, name, kind, by key); the method id of every key that
    `canonical` maps to one of them. A key an existing method already holds (without an
    alias row for it) keeps that method."""
    mark = highest_id(connection, s.methods.c.id)
    upsert_rows(connection, s.methods, ("key", "name", "kind"), list(new_methods.values()))
    created = ids_since(connection, s.methods.c.key, s.methods.c.id, mark)
    stored.wrote_lookups(s.methods.c.key, created)
    if len(created) < len(new_methods):
        held = [k for k in new_methods if k not in created]
        created.update(stored.lookup(connection, s.methods.c.key, s.methods.c.id, held))
    return {key: created[root] for key, root in canonical.items()}


def _cluster_keys(key_groups: Sequence[tuple[str, ...]]) -> dict[str, str]:
    """Map each key to its cluster's canonical key; groups sharing a key form one cluster."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for keys in key_groups:
        root = find(keys[0])
        for key in keys[1:]:
            other = find(key)
            if other != root:
                parent[other] = root
    return {key: find(key) for key in parent}

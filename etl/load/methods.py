"""Methods: the groups of mentions their names join, recomputed from the mentions themselves.

Each mention (a `paper_methods` row) gives one or more names of an artifact (`aliases`: its
own name first, then the long form, the acronym ...). Two mentions that share a name are the
same method; a method is a group of mentions joined this way, however many papers apart. So
what a method is depends on the mentions stored, never on which file named it first:

- its key is the name its mentions give first most often (ties: the smaller key);
- its name is the spelling most of those mentions write (ties: the smaller);
- its kind is the kind most of its mentions have (ties: the smaller);
- each of its names is an alias, spelled as most mentions spell it.

When a source ends, the methods its mentions (written or deleted) touch are recomputed: the
mentions reachable from those names through the stored aliases are read, grouped again, and
the `methods`, `method_aliases` and the mentions' `method_id` made to match. A method no
mention names any more is deleted, at once when the loader writes alone, else by the run's
tidying (another loader may be adding a mention of it).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, bindparam, delete, select, text, update

from etl.load import schema as s
from etl.load.backend import Backend
from etl.load.bulk import chunks

# (paper_pk, key, kind, aliases) of a mention: all grouping needs
Mention = tuple[int, str, str, tuple[tuple[str, str], ...]]


@dataclass
class MethodGroup:
    """Mentions joined by their names, and what they make of the method."""

    mentions: list[Mention] = field(default_factory=list)

    def names(self) -> set[str]:
        return {key for *_, pairs in self.mentions for key, _ in pairs}

    def key(self) -> str:
        return _vote(m[1] for m in self.mentions)

    def name(self, key: str) -> str:
        return _vote(m[3][0][1] for m in self.mentions if m[1] == key)

    def kind(self) -> str:
        return _vote(m[2] for m in self.mentions)

    def aliases(self) -> dict[str, str]:
        """Each name's key and its most common spelling."""
        spellings: dict[str, Counter[str]] = {}
        for *_, pairs in self.mentions:
            for key, alias in pairs:
                spellings.setdefault(key, Counter())[alias] += 1
        return {key: _vote(counts.elements()) for key, counts in spellings.items()}


def _vote(values: Iterable[str]) -> str:
    """The most common value; of equally common ones, the smallest."""
    counts = Counter(values)
    return min(counts, key=lambda value: (-counts[value], value))


def group_mentions(mentions: Sequence[Mention]) -> list[MethodGroup]:
    """Mentions grouped by shared names (connected through any chain of them)."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for *_, pairs in mentions:
        root = find(pairs[0][0])
        for key, _ in pairs[1:]:
            other = find(key)
            if other != root:
                parent[other] = root
    groups: dict[str, MethodGroup] = {}
    for mention in mentions:
        groups.setdefault(find(mention[3][0][0]), MethodGroup()).mentions.append(mention)
    return list(groups.values())


class MethodRecompute:
    """Recompute the methods that mentions with these names belong to, and write the staged
    mentions (`stage`) with their methods."""

    def __init__(self, connection: Connection, backend: Backend, stage: object) -> None:
        self.connection = connection
        self.backend = backend
        self.stage = stage  # the staged mentions' temporary table
        self.orphaned = 0  # methods left without mentions for the run's tidying to delete
        self.current: dict[tuple[int, str], int] = {}  # stored mentions' methods, as read

    def run(self, touched: set[str]) -> None:
        """Recompute the methods of the touched names; write the staged mentions."""
        staged = self._staged()
        if not touched and not staged:
            return
        names = set(touched) | {key for *_, pairs in staged for key, _ in pairs}
        stored, methods = self._reachable(names)
        groups = group_mentions([*stored.values(), *staged])
        ids = self._write_methods(groups, methods)
        self._point_mentions(stored, groups, ids)
        self._drop_unused(methods - set(ids.values()))  # their mentions point elsewhere now
        self.connection.execute(
            text(
                "INSERT INTO paper_methods "
                "(paper_pk, key, method_id, role, surface, kind, aliases, position) "
                "SELECT st.paper_pk, st.key, ma.method_id, st.role, st.surface, st.kind, "
                f"st.aliases, st.position FROM {self.stage.name} AS st "  # type: ignore[attr-defined]
                "JOIN method_aliases AS ma ON ma.key = st.key"
            )
        )

    def _staged(self) -> list[Mention]:
        rows = self.connection.execute(
            text(f"SELECT paper_pk, key, kind, aliases FROM {self.stage.name}")  # type: ignore[attr-defined]
        )
        return [(pk, key, kind, _pairs(aliases)) for pk, key, kind, aliases in rows]

    def _reachable(self, names: set[str]) -> tuple[dict[tuple[int, str], Mention], set[int]]:
        """The stored mentions reachable from these names through the stored aliases (by
        paper and key), and the methods they and the names belong to."""
        mentions: dict[tuple[int, str], Mention] = {}
        methods: set[int] = set()
        seen: set[str] = set()
        frontier = set(names)
        while frontier:
            seen |= frontier
            found = self._methods_of(frontier) - methods
            methods |= found
            frontier = set()
            for mention in self._mentions_of(found):
                mentions[(mention[0], mention[1])] = mention
                frontier.update(key for key, _ in mention[3])
            frontier.update(self._aliases_of(found))
            frontier -= seen
        return mentions, methods

    def _methods_of(self, names: set[str]) -> set[int]:
        c = s.method_aliases.c
        found = {
            method
            for (method,) in self.backend.select_rows(
                self.connection, c.key, (c.method_id,), names
            ).values()
        }
        m = s.methods.c
        found |= {
            method
            for (method,) in self.backend.select_rows(
                self.connection, m.key, (m.id,), names
            ).values()
        }
        return found

    def _mentions_of(self, methods: set[int]) -> list[Mention]:
        """The stored mentions of these methods (their methods noted in `current`)."""
        c = s.paper_methods.c
        found = []
        for part in chunks(sorted(methods)):
            query = select(c.paper_pk, c.key, c.kind, c.aliases, c.method_id).where(
                c.method_id.in_(part)
            )
            for pk, key, kind, aliases, method in self.connection.execute(query):
                found.append((pk, key, kind, _pairs(aliases)))
                self.current[(pk, key)] = method
        return found

    def _aliases_of(self, methods: set[int]) -> set[str]:
        c = s.method_aliases.c
        found: set[str] = set()
        for part in chunks(sorted(methods)):
            found.update(
                self.connection.execute(select(c.key).where(c.method_id.in_(part))).scalars()
            )
        return found

    def _write_methods(self, groups: Sequence[MethodGroup], methods: set[int]) -> dict[str, int]:
        """Make `methods` and `method_aliases` hold the groups; the method id of each key."""
        m, a = s.methods.c, s.method_aliases.c
        wanted = {group.key(): group for group in groups}
        existing = {
            key: (method, name, kind)
            for key, (method, name, kind) in self.backend.select_rows(
                self.connection, m.key, (m.id, m.name, m.kind), list(wanted)
            ).items()
        }
        new = [(key, g.name(key), g.kind()) for key, g in wanted.items() if key not in existing]
        self.backend.insert_rows(self.connection, s.methods, ("key", "name", "kind"), new)
        if new:
            for key, (method,) in self.backend.select_rows(
                self.connection, m.key, (m.id,), [key for key, *_ in new]
            ).items():
                existing[key] = (method, wanted[key].name(key), wanted[key].kind())
        changed = [
            {"b_id": method, "b_name": wanted[key].name(key), "b_kind": wanted[key].kind()}
            for key, (method, name, kind) in existing.items()
            if (name, kind) != (wanted[key].name(key), wanted[key].kind())
        ]
        if changed:
            self.connection.execute(
                update(s.methods)
                .where(m.id == bindparam("b_id"))
                .values(name=bindparam("b_name"), kind=bindparam("b_kind")),
                changed,
            )
        ids = {
            key: existing[group_key][0]
            for group_key, group in wanted.items()
            for key in group.names()
        }
        aliases = {
            key: (key, alias, ids[key])
            for group in groups
            for key, alias in group.aliases().items()
        }
        stored = self._stored_aliases(methods | {ids[k] for k in wanted}, set(aliases))
        gone = [key for key in stored if key not in aliases]
        for part in chunks(sorted(gone)):
            self.connection.execute(delete(s.method_aliases).where(a.key.in_(part)))
        self.backend.upsert_rows(
            self.connection,
            s.method_aliases,
            ("key", "alias", "method_id"),
            [row for key, row in sorted(aliases.items()) if stored.get(key) != row[1:]],
            conflict=["key"],
            update=["alias", "method_id"],
        )
        return ids

    def _stored_aliases(self, methods: set[int], keys: set[str]) -> dict[str, tuple[str, int]]:
        """(alias, method) of the stored aliases of these methods or with these keys."""
        a = s.method_aliases.c
        found = {
            key: (alias, method)
            for key, (alias, method) in self.backend.select_rows(
                self.connection, a.key, (a.alias, a.method_id), keys
            ).items()
        }
        for part in chunks(sorted(methods)):
            query = select(a.key, a.alias, a.method_id).where(a.method_id.in_(part))
            for key, alias, method in self.connection.execute(query):
                found[key] = (alias, method)
        return found

    def _drop_unused(self, methods: set[int]) -> None:
        """Delete methods no group is; leave them to the run's tidying when other loaders may
        be adding mentions of them meanwhile."""
        if not methods:
            return
        if self.backend.concurrent:
            self.orphaned += len(methods)
            return
        for part in chunks(sorted(methods)):
            self.connection.execute(delete(s.methods).where(s.methods.c.id.in_(part)))

    def _point_mentions(
        self,
        stored: dict[tuple[int, str], Mention],
        groups: Sequence[MethodGroup],
        ids: dict[str, int],
    ) -> None:
        """Point the stored mentions at their groups' methods (those another loader is
        deleting meanwhile are left to it)."""
        c = s.paper_methods.c
        moves = [
            {"b_pk": pk, "b_key": key, "b_method": ids[key]}
            for (pk, key) in stored
            if self.current[(pk, key)] != ids[key]
        ]
        if not moves:
            return
        if self.backend.concurrent:
            held: set[tuple[int, str]] = set()
            for part in chunks(sorted({m["b_pk"] for m in moves})):
                query = select(c.paper_pk, c.key).where(c.paper_pk.in_(part))
                held.update(
                    tuple(row) for row in self.connection.execute(self.backend.skipping_held(query))
                )
            moves = [m for m in moves if (m["b_pk"], m["b_key"]) in held]
        self.connection.execute(
            update(s.paper_methods)
            .where(c.paper_pk == bindparam("b_pk"), c.key == bindparam("b_key"))
            .values(method_id=bindparam("b_method")),
            moves,
        )


def _pairs(aliases: str) -> tuple[tuple[str, str], ...]:
    return tuple((key, alias) for key, alias in json.loads(aliases))

"""Methods: the groups of mentions their names join, kept so as the mentions come and go.

Each mention (a `paper_methods` row) gives one or more names of an artifact (`aliases`: its
own name first, then the long form, the acronym ...). Two mentions that share a name are the
same method; a method is a group of mentions joined this way, however many papers apart, and
what it is depends on the mentions stored, never on which file named it first:

- a new mention joins the method holding one of its names; one whose names lead to two
  methods makes them one;
- when mentions leave (their papers changed or left a file), a method that a leaving mention
  with several names held together is grouped again from the mentions left (it may split);
- a method's key is the name its mentions give first most often, its name the spelling most
  of those mentions write, its kind the kind most of its mentions have (ties: the smaller),
  counted again whenever its mentions change; each of its names is an alias, spelled as the
  smallest spelling any mention gives it.

A method no mention names any more is deleted, at once when the loader writes alone, else by
the run's tidying (another loader may be deleting its last mentions meanwhile).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Connection,
    Text,
    and_,
    bindparam,
    delete,
    func,
    select,
    update,
)

from etl.load import schema as s
from etl.load.backend import Backend
from etl.load.bulk import chunks

Pairs = tuple[tuple[str, str], ...]  # (key, spelling) of each name a mention gives


class Mention(NamedTuple):
    """A mention as `paper_methods` holds it (but its method)."""

    paper_pk: int
    key: str  # its first name's key
    name: str  # its first name as spelled
    kind: str
    role: str
    surface: str
    aliases: Pairs
    position: int


MENTION_COLUMNS = (
    "paper_pk",
    "key",
    "name",
    "kind",
    "role",
    "surface",
    "aliases",
    "position",
    "method_id",
)


class Method(NamedTuple):
    """What a group of mentions makes of its method."""

    key: str
    name: str
    kind: str


def vote(values: Iterable[str], counts: Counter[str] | None = None) -> str:
    """The most common value; of equally common ones, the smallest."""
    counts = counts if counts is not None else Counter(values)
    if len(counts) == 1:
        return next(iter(counts))
    return min(counts, key=lambda value: (-counts[value], value))


def method_of(counts: Counter[tuple[str, str, str]]) -> Method:
    """A method from how many of its mentions give each (key, name, kind)."""
    keys: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for (key, _, kind), count in counts.items():
        keys[key] += count
        kinds[kind] += count
    key = vote((), keys)
    names = Counter({name: n for (k, name, _), n in counts.items() if k == key})
    return Method(key, vote((), names), vote((), kinds))


class _Groups:
    """Union-find over names and methods (`#ID`)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, node: str) -> str:
        parent = self.parent
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def join(self, one: str, other: str) -> None:
        one, other = self.find(one), self.find(other)
        if one != other:
            self.parent[other] = one


class MethodWriter:
    """Keeps methods the groups of one source's mentions, as they are added and leave."""

    def __init__(self, connection: Connection, backend: Backend, *, shared: bool) -> None:
        self.connection = connection
        self.backend = backend
        self.shared = shared  # other loaders may write meanwhile: unused methods are left
        self.touched: set[int] = set()  # methods whose mentions changed: counted again
        self.split: set[str] = set()  # names a leaving mention held together
        self.left: set[str] = set()  # names leaving mentions gave: some may be no one's now
        self.orphaned = 0  # methods left for the run's tidying to delete
        self.written = 0  # mentions written

    def leaving(self, rows: Iterable[tuple[int, str]]) -> None:
        """Note stored mentions (method, aliases) about to be deleted."""
        for method, aliases in rows:
            self.touched.add(method)
            pairs = json.loads(aliases)
            self.left.update(key for key, _ in pairs)
            if len(pairs) > 1:
                self.split.update(key for key, _ in pairs)

    def add(self, mentions: Sequence[Mention]) -> None:
        """Write mentions, each with the method its names lead to (created, or made one of
        the methods they lead to)."""
        if not mentions:
            return
        a = s.method_aliases.c
        keys = {key for mention in mentions for key, _ in mention.aliases}
        known = self.backend.select_rows(self.connection, a.key, (a.method_id, a.alias), keys)
        # a method's key is one of its aliases, unless a hand or an old version removed them
        m = s.methods.c
        keyed = self.backend.select_rows(self.connection, m.key, (m.id,), keys - set(known))
        groups = _Groups()
        for mention in mentions:
            for key, _ in mention.aliases[1:]:
                groups.join(mention.key, key)
        for key, (method, *_) in (*known.items(), *keyed.items()):
            groups.join(key, f"#{method}")
        members: dict[str, list[Mention]] = {}
        for mention in mentions:
            members.setdefault(groups.find(mention.key), []).append(mention)
        methods: dict[str, int] = {}  # group -> its method
        new: dict[str, Method] = {}
        for root, group in members.items():
            found = sorted(
                {
                    (known.get(k) or keyed[k])[0]
                    for mention in group
                    for k, _ in mention.aliases
                    if k in known or k in keyed
                }
            )
            if not found:
                counts = Counter((m.key, m.name, m.kind) for m in group)
                new[root] = method_of(counts)
                continue
            methods[root] = found[0]
            self.touched.add(found[0])
            for other in found[1:]:
                self._merge(other, found[0])
        methods.update(self._create(new))
        spellings: dict[str, tuple[str, int]] = {}
        for root, group in members.items():
            for mention in group:
                for key, alias in mention.aliases:
                    held = spellings.get(key)
                    if held is None or alias < held[0]:
                        spellings[key] = (alias, methods[root])
        self._spell(spellings, known)
        rows = [
            (*mention[:6], _dumped(mention.aliases), mention.position, methods[root])
            for root, group in members.items()
            for mention in group
        ]
        self.backend.insert_rows(self.connection, s.paper_methods, MENTION_COLUMNS, rows)
        self.written += len(rows)

    def _create(self, new: dict[str, Method]) -> dict[str, int]:
        """Insert new methods; their ids by group."""
        if not new:
            return {}
        m = s.methods.c
        rows = [(made.key, made.name, made.kind) for made in new.values()]
        self.backend.insert_rows(self.connection, s.methods, ("key", "name", "kind"), rows)
        ids = self.backend.select_rows(self.connection, m.key, (m.id,), [r[0] for r in rows])
        return {root: ids[made.key][0] for root, made in new.items()}

    def _spell(
        self, spellings: dict[str, tuple[str, int]], known: dict[str, tuple[int, str]]
    ) -> None:
        """Add the names not known yet, and respell those a smaller spelling was given."""
        rows = [
            (key, alias, method)
            for key, (alias, method) in sorted(spellings.items())
            if key not in known or alias < known[key][1]
        ]
        self.backend.upsert_rows(
            self.connection,
            s.method_aliases,
            ("key", "alias", "method_id"),
            rows,
            conflict=["key"],
            update=["alias"],
        )

    def _merge(self, other: int, survivor: int) -> None:
        """Make one method of two: the other's names and mentions become the survivor's."""
        a, pm = s.method_aliases.c, s.paper_methods.c
        self.connection.execute(
            update(s.method_aliases).where(a.method_id == other).values(method_id=survivor)
        )
        self._point(pm.method_id == other, survivor)
        self._unused([other])

    def _point(self, where: ColumnElement[bool], method: int) -> None:
        """Point the stored mentions matching `where` at a method (those another loader is
        deleting meanwhile are left to it: see the tidying's repair)."""
        pm = s.paper_methods.c
        if not self.shared:
            self.connection.execute(update(s.paper_methods).where(where).values(method_id=method))
            return
        query = select(pm.paper_pk, pm.key).where(where)
        held = list(self.connection.execute(self.backend.skipping_held(query)))
        if held:
            self.connection.execute(
                update(s.paper_methods)
                .where(pm.paper_pk == bindparam("b_pk"), pm.key == bindparam("b_key"))
                .values(method_id=method),
                [{"b_pk": pk, "b_key": key} for pk, key in held],
            )

    def _unused(self, methods: Sequence[int]) -> None:
        """Methods no group is any more: deleted, or (other loaders writing) left to the run's
        tidying, their key given up so that another method may take it."""
        if not methods:
            return
        m = s.methods.c
        for part in chunks(sorted(methods)):
            if self.shared:
                self.connection.execute(
                    update(s.methods)
                    .where(m.id.in_(part))
                    .values(key="unused:" + m.id.cast(Text()))  # keys never hold ':'
                )
            else:
                self.connection.execute(delete(s.methods).where(m.id.in_(part)))
        self.touched -= set(methods)
        self.orphaned += len(methods) if self.shared else 0

    def finish(self) -> None:
        """After the source's mentions are in: group again what leaving mentions held
        together, then count the changed methods' key, name and kind again."""
        if self.split:
            self._regroup(self.split)
            self.split = set()
        if self.left:
            self._forget_names(self.left)
            self.left = set()
        self._recount(sorted(self.touched))
        self.touched = set()

    def _forget_names(self, names: set[str]) -> None:
        """Delete the aliases no stored mention of their method gives any more."""
        a, pm = s.method_aliases.c, s.paper_methods.c
        owners: dict[int, list[str]] = {}
        for key, (method,) in self.backend.select_rows(
            self.connection, a.key, (a.method_id,), names
        ).items():
            owners.setdefault(method, []).append(key)
        gone: list[str] = []
        for method, keys in owners.items():
            given: set[str] = set()
            for (aliases,) in self.connection.execute(
                select(pm.aliases).where(pm.method_id == method)
            ):
                given.update(key for key, _ in json.loads(aliases))
            gone += [key for key in keys if key not in given]
        for part in chunks(sorted(gone)):
            self.connection.execute(delete(s.method_aliases).where(a.key.in_(part)))

    def _regroup(self, names: set[str]) -> None:
        """Group again the stored mentions of the methods holding these names: a method whose
        mentions no longer share names splits, the part with most mentions keeping it."""
        a, pm = s.method_aliases.c, s.paper_methods.c
        methods = {
            m
            for (m,) in self.backend.select_rows(
                self.connection, a.key, (a.method_id,), names
            ).values()
        }
        for method in sorted(methods):
            query = select(pm.paper_pk, pm.key, pm.name, pm.kind, pm.aliases).where(
                pm.method_id == method
            )
            groups = _Groups()
            stored = list(self.connection.execute(query))
            for _, key, _, _, aliases in stored:
                for other, _ in json.loads(aliases)[1:]:
                    groups.join(key, other)
            parts: dict[str, list[tuple[int, str, str, str]]] = {}
            for pk, key, name, kind, _ in stored:
                parts.setdefault(groups.find(key), []).append((pk, key, name, kind))
            if len(parts) <= 1:
                continue
            ordered = sorted(parts.values(), key=lambda part: (-len(part), min(p[1] for p in part)))
            for part in ordered[1:]:
                made = method_of(Counter((key, name, kind) for _, key, name, kind in part))
                (created,) = self._create({made.key: made}).values()
                names_of = {groups.find(p[1]) for p in part}
                moved = [
                    key
                    for key in self.connection.execute(
                        select(a.key).where(a.method_id == method)
                    ).scalars()
                    if groups.find(key) in names_of
                ]
                for keys in chunks(moved):
                    self.connection.execute(
                        update(s.method_aliases).where(a.key.in_(keys)).values(method_id=created)
                    )
                for keys in chunks(sorted({p[1] for p in part})):
                    self._point(and_(pm.method_id == method, pm.key.in_(keys)), created)
            self.touched.add(method)

    def _recount(self, methods: Sequence[int]) -> None:
        """Count the key, name and kind of these methods again from their stored mentions;
        delete (or leave to the tidying) those with none."""
        m, pm = s.methods.c, s.paper_methods.c
        unused: list[int] = []
        changed: list[dict[str, object]] = []
        for part in chunks(methods):
            counts: dict[int, Counter[tuple[str, str, str]]] = {}
            query = (
                select(pm.method_id, pm.key, pm.name, pm.kind, func.count())
                .where(pm.method_id.in_(part))
                .group_by(pm.method_id, pm.key, pm.name, pm.kind)
            )
            for method, key, name, kind, count in self.connection.execute(query):
                counts.setdefault(method, Counter())[(key, name, kind)] = count
            current = self.backend.select_rows(self.connection, m.id, (m.key, m.name, m.kind), part)
            for method in part:
                if method not in counts:
                    unused.append(method)
                    continue
                made = method_of(counts[method])
                if current.get(method) != tuple(made):
                    changed.append(
                        {"b_id": method, **{f"b_{k}": v for k, v in made._asdict().items()}}
                    )
        self._unused(unused)
        if changed:
            self.connection.execute(
                update(s.methods)
                .where(m.id == bindparam("b_id"))
                .values(key=bindparam("b_key"), name=bindparam("b_name"), kind=bindparam("b_kind")),
                changed,
            )


def staged_mentions(rows: Iterable[tuple[Any, ...]]) -> Iterator[Mention]:
    """Mentions from staged rows (MENTION_COLUMNS but the method; names as JSON)."""
    for pk, key, name, kind, role, surface, aliases, position in rows:
        pairs = tuple((k, spelled) for k, spelled in json.loads(aliases))
        yield Mention(pk, key, name, kind, role, surface, pairs, position)


def _dumped(pairs: Pairs) -> str:
    return json.dumps(pairs, ensure_ascii=False)

"""Source state: what the database remembers of each input file, and where it is now.

A source is its file's path (or a zip member's `ARCHIVE!/MEMBER`). A file at a path not seen
before may be a known source moved (its folder moved or renamed): `moved_candidates` lists the
sources whose path ends as its path does, from the folder the user named down; of those whose
files are gone (etl.extract.gone_reasons, the pipeline's test), one with the same bytes takes the
new path and keeps its sightings (`same_content`, `move_source`); else the file is loaded as
a source of its own, and a gone source it holds enough papers of (`moved_share`,
`holds_enough`, `taken_over`) is forgotten in the same transaction, so a record removed from a
moved file is removed, not kept by the old path, and a file that merely shares a name takes
nothing. `known_sources` lists every source, for `--prune` to ask which are gone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, func, select, text, update

from etl.load import schema as s
from etl.load.database import sql_dir

# A new file is a gone source moved (and maybe edited) when it holds at least this share of
# the gone source's papers: a file that shares a name but not its papers is another list.
MOVED_SHARE = 0.5


@dataclass(frozen=True)
class SourceState:
    """What the database remembers of a source file from its last load."""

    checksum: str
    fingerprint: str
    format: str
    size: int
    mtime_ns: int | None


def source_state(connection: Connection, path: str) -> SourceState | None:
    """The recorded state of a source path, if it was loaded before."""
    c = s.sources.c
    row = connection.execute(
        select(c.checksum, c.fingerprint, c.format, c.size_bytes, c.mtime_ns).where(c.path == path)
    ).first()
    if row is None:
        return None
    return SourceState(
        checksum=row.checksum,
        fingerprint=row.fingerprint,
        format=row.format,
        size=row.size_bytes,
        mtime_ns=row.mtime_ns,
    )


def touch_source(connection: Connection, path: str, mtime_ns: int) -> None:
    """Remember a new modification time for a file whose content did not change."""
    connection.execute(update(s.sources).where(s.sources.c.path == path).values(mtime_ns=mtime_ns))


def moved_candidates(connection: Connection, below_root: str) -> list[tuple[str, str]]:
    """(path, checksum) of the sources whose path ends as a file's does from the folder the
    user named down (`below_root`), compared exactly (case too) on both backends: not by
    LIKE, which ignores case on SQLite. Whether their files are gone is the caller's test."""
    c = s.sources.c
    tail = f"/{below_root}"
    ends = func.substr(c.path, func.length(c.path) - len(tail) + 1) == tail
    query = select(c.path, c.checksum).where(func.length(c.path) > len(tail), ends)
    return [(old, checksum) for old, checksum in connection.execute(query)]


def same_content(found: Sequence[tuple[str, str]], path: str, checksum: str) -> str | None:
    """Of gone sources (path, checksum), the one holding the same bytes as the file at `path`
    (of several, the one sharing the longest end of its path); None when none, or a tie."""
    return _closest([old for old, old_checksum in found if old_checksum == checksum], path)


def holds_enough(papers: int, held: int) -> bool:
    """Whether a new file holds enough of a gone source's papers to be that file, moved and
    edited: at least half of them (MOVED_SHARE); never a source that had none."""
    return papers > 0 and held >= papers * MOVED_SHARE


def moved_share(connection: Connection, old: str, new: str) -> tuple[int, int]:
    """(papers, held): how many papers the source `old` sights, and how many of them the
    source `new` sights too (the same paper by its identity keys, so the same row)."""
    query = text(sql_dir().joinpath("queries", "moved_share.sql").read_text("utf-8"))
    row = connection.execute(query, {"old": old, "new": new}).one()
    return int(row.papers), int(row.held)


def taken_over(shares: dict[str, float], path: str) -> str | None:
    """Of gone sources that a new file holds enough of (path: share of their papers), the
    one it is: the one sharing the longest end of its path, then the larger share; None for
    a tie."""
    return _closest(list(shares), path, key=lambda old: shares[old])


def _closest(
    olds: Sequence[str], path: str, key: Callable[[str], float] = lambda _: 0.0
) -> str | None:
    """The one path of `olds` that shares the longest end with `path` (then the largest
    `key`); None when there is none, or two tie."""
    ranks = {old: (_shared_tail(old, path), key(old)) for old in olds}
    if not ranks:
        return None
    top = max(ranks.values())
    best = [old for old, rank in ranks.items() if rank == top]
    return best[0] if len(best) == 1 else None


def _shared_tail(one: str, other: str) -> int:
    """How many trailing path components two paths share."""
    count = 0
    for a, b in zip(reversed(Path(one).parts), reversed(Path(other).parts), strict=False):
        if a != b:
            break
        count += 1
    return count


def move_source(connection: Connection, old: str, new: str) -> bool:
    """Record a source's new place (False if another loader moved it meanwhile)."""
    statement = update(s.sources).where(s.sources.c.path == old).values(path=new)
    return bool(connection.execute(statement).rowcount)


def known_sources(connection: Connection) -> list[tuple[int, str]]:
    """(id, path) of every source, by path (`--prune` asks which are gone)."""
    c = s.sources.c
    query = select(c.id, c.path).order_by(c.path)
    return [(int(source_id), path) for source_id, path in connection.execute(query)]


def source_id_of(connection: Connection, path: str) -> int | None:
    """The id of the source at a path, if it is known."""
    found = connection.scalar(select(s.sources.c.id).where(s.sources.c.path == path))
    return None if found is None else int(found)


def paths_loaded_in(connection: Connection, run_id: int) -> frozenset[str]:
    """The paths of the sources a run committed (its workers' too, reported or not)."""
    query = select(s.sources.c.path).where(s.sources.c.run_id == run_id)
    return frozenset(connection.scalars(query))

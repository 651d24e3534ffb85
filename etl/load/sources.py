"""Source state: what the database remembers of each input file, and where it is now.

A source is its file's path. A file at a path not seen before may be a known source moved
(its folder moved or renamed): `moved_from` finds it by the end of its path, from the folder
the user named down, among the sources whose files are gone; the source then takes the new
path and keeps its sightings, so a removed record is removed, not kept by the old path.
`gone_sources` lists the sources under the named folders whose files are gone, for `--prune`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, select, update

from etl.load import schema as s


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


def moved_from(
    connection: Connection, path: str, below_root: str, checksum: Callable[[], str]
) -> str | None:
    """The recorded path of the source a file not seen before is, moved: a source whose file
    no longer exists and whose path ends as this one does from the folder the user named down
    (`below_root`). Of several, the one sharing the longest end of its path, then the one with
    the same content; None when that leaves more than one, or none."""
    c = s.sources.c
    escaped = below_root.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    query = select(c.path, c.checksum).where(c.path.like(f"%/{escaped}", escape="\\"))
    found = [
        (old, old_checksum)
        for old, old_checksum in connection.execute(query)
        if old != path and not Path(old).exists()
    ]
    if not found:
        return None
    shared = {old: _shared_tail(old, path) for old, _ in found}
    longest = max(shared.values())
    best = [(old, old_checksum) for old, old_checksum in found if shared[old] == longest]
    if len(best) > 1:
        mine = checksum()  # hashed only when the paths leave a choice
        best = [(old, old_checksum) for old, old_checksum in best if old_checksum == mine]
    return best[0][0] if len(best) == 1 else None


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


def gone_sources(connection: Connection, roots: Sequence[Path]) -> list[tuple[int, str]]:
    """(id, path) of the sources under these folders whose files no longer exist."""
    c = s.sources.c
    under = [f"{root.as_posix().rstrip('/')}/" for root in roots]
    return [
        (int(source_id), path)
        for source_id, path in connection.execute(select(c.id, c.path).order_by(c.path))
        if any(path.startswith(prefix) for prefix in under) and not Path(path).exists()
    ]

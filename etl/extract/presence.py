"""Whether a known source is still there, and which known sources the paths given to a run
cover: what `--prune` and the moved-file rule decide from.

A source is a file's path or a zip member's `ARCHIVE!/MEMBER`. A member never exists on disk
as a path: it is gone only when its archive is gone or no longer holds it.
"""

from __future__ import annotations

import fnmatch
import glob
import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from etl.errors import SourceError
from etl.extract.compressed import MEMBER_SEPARATOR, zip_members
from etl.extract.files import resolved

FILE_GONE = "the file is gone"
ARCHIVE_GONE = "the archive is gone"
MEMBER_GONE = "the archive no longer holds this member"


def gone_reasons(locations: Iterable[str]) -> dict[str, str]:
    """The known sources of `locations` that are gone, each with why (FILE_GONE,
    ARCHIVE_GONE, MEMBER_GONE); each archive's members are listed once for them all."""
    listed: dict[str, frozenset[str] | None] = {}
    gone = {}
    for location in locations:
        why = _why_gone(location, listed)
        if why is not None:
            gone[location] = why
    return gone


def _why_gone(location: str, listed: dict[str, frozenset[str] | None]) -> str | None:
    """Why one source is gone, or None while it is there. An archive that is there but
    cannot be listed (damaged, no longer a zip) is not known to have lost a member: its
    members are kept."""
    if os.path.exists(location):
        return None
    splits = _member_readings(location)
    for archive, member in splits:
        if os.path.isfile(archive):
            if archive not in listed:
                listed[archive] = _members(archive)
            members = listed[archive]
            return None if members is None or member in members else MEMBER_GONE
    return ARCHIVE_GONE if splits else FILE_GONE


def _member_readings(location: str) -> list[tuple[str, str]]:
    """The (archive, member) readings of a location that may name a zip member: `x!/y`
    beside a folder `x!` is a file in that folder, not a member of an archive `x`."""
    return [(a, m) for a, m in _member_splits(location) if not os.path.isdir(f"{a}!")]


def _member_splits(location: str) -> list[tuple[str, str]]:
    """Every (archive, member) reading of a location, at each `!/` in it, shortest first."""
    splits = []
    start = 0
    while (at := location.find(MEMBER_SEPARATOR, start)) >= 0:
        splits.append((location[:at], location[at + len(MEMBER_SEPARATOR) :]))
        start = at + 1
    return splits


def _members(archive: str) -> frozenset[str] | None:
    """The members an archive lists; None when it cannot be listed."""
    try:
        return frozenset(zip_members(Path(archive)))
    except SourceError:
        return None


def prune_scope(paths: Sequence[str]) -> Callable[[str], bool]:
    """Whether a known source is under the paths given to a run, for `--prune`: a file's own
    source (an archive's members too); the sources under a folder, at any depth; those a glob
    matches, with the glob's own meaning (`*` within one folder, `**` across folders) or
    whose archive it matches."""
    tests = [_scope_of(given) for given in paths]
    return lambda location: any(test(location) for test in tests)


def _scope_of(given: str) -> Callable[[str], bool]:
    """The test of one path given."""
    path = Path(given)
    if glob.has_magic(given) and not os.path.lexists(given):
        pattern = _absolute_pattern(path).parts
        return lambda location: any(
            _glob_matches(pattern, Path(candidate).parts) for candidate in _candidates(location)
        )
    if path.is_dir():
        folder = f"{resolved(path).as_posix().rstrip('/')}/"
        return lambda location: location.startswith(folder)
    file = resolved(path).as_posix()
    return lambda location: location == file or location.startswith(file + MEMBER_SEPARATOR)


def _candidates(location: str) -> list[str]:
    """What a glob is matched against: a file's path; for a zip member, its archive's (a
    glob matches files on disk, never inside an archive)."""
    return [archive for archive, _ in _member_readings(location)] or [location]


def _absolute_pattern(pattern: Path) -> Path:
    """A glob made absolute, the folders before its first wildcard resolved as discovery
    resolves the files it matches."""
    plain = list(itertools.takewhile(lambda part: not glob.has_magic(part), pattern.parts))
    rest = pattern.parts[len(plain) :]
    return resolved(Path(*plain) if plain else Path.cwd()).joinpath(*rest)


def _glob_matches(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """Whether path components match glob components as `glob.glob(recursive=True)` does:
    `**` stands for any number of folders, other wildcards for part of one component, and
    only a wildcard starting with `.` matches a hidden name."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        visible = itertools.takewhile(lambda part: not part.startswith("."), parts)
        reach = len(list(visible))
        return any(_glob_matches(rest, parts[skip:]) for skip in range(reach + 1))
    if not parts or (parts[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and _glob_matches(rest, parts[1:])

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
from collections.abc import Callable, Sequence
from pathlib import Path

from etl.errors import SourceError
from etl.extract.compressed import MEMBER_SEPARATOR, zip_members
from etl.extract.files import resolved

FILE_GONE = "the file is gone"
ARCHIVE_GONE = "the archive is gone"
MEMBER_GONE = "the archive no longer holds this member"


def why_gone(location: str) -> str | None:
    """Why a known source is gone (FILE_GONE, ARCHIVE_GONE, MEMBER_GONE), or None while it is
    there. An archive that is there but cannot be listed (damaged, no longer a zip) is not
    known to have lost a member: its members are kept."""
    if os.path.exists(location):
        return None
    for archive, member in _member_splits(location):
        if os.path.isfile(archive):
            return None if _holds(archive, member) else MEMBER_GONE
    splits = _member_splits(location)
    if splits and not os.path.isdir(splits[0][0]):  # not a folder named `x!`: an archive
        return ARCHIVE_GONE
    return FILE_GONE


def _member_splits(location: str) -> list[tuple[str, str]]:
    """Every (archive, member) reading of a location, at each `!/` in it, shortest first."""
    splits = []
    start = 0
    while (at := location.find(MEMBER_SEPARATOR, start)) >= 0:
        splits.append((location[:at], location[at + len(MEMBER_SEPARATOR) :]))
        start = at + 1
    return splits


def _holds(archive: str, member: str) -> bool:
    """Whether an archive lists a member (True when it cannot be listed)."""
    try:
        return member in zip_members(Path(archive))
    except SourceError:
        return True


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
    """A location and, for a zip member, the archive that holds it."""
    return [location, *(archive for archive, _ in _member_splits(location))]


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

"""How far a run has read its files, in bytes: what the terminal's estimate of the time left
is made from.

A run knows its files' sizes before it starts. Inside the file being loaded, how far the
reader has got is the offset of the file's open descriptor (the compressed bytes, for a
compressed file), read from Linux's `/proc/self/fdinfo`; elsewhere a file counts when it is
done. The pipeline reports bytes as "read" events of its progress callback.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from etl.extract.compressed import split_member

# (event, count): "source" (one more file done), "records" (more records written), "files"
# and "bytes" (the run's files and their size, once at the start), "read" (more bytes read)
ProgressCallback = Callable[[str, int], None]
FDS = "/proc/self/fd"


def read_offset(path: str) -> int | None:
    """How far this process has read into a file: the largest offset of a descriptor it holds
    open on it (None where /proc is missing, or the file is not open)."""
    try:
        descriptors = os.listdir(FDS)
    except OSError:
        return None
    found = None
    for fd in descriptors:
        try:
            if os.readlink(f"{FDS}/{fd}") != path:
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                key, value = info.readline().split()
        except (OSError, ValueError):  # closed meanwhile, or not the line expected
            continue
        if key == "pos:":
            found = max(found or 0, int(value))
    return found


class ReadMeter:
    """Sends a run's progress in bytes: the total once, then what each batch and each
    finished file adds (never more than the file's size, never backwards)."""

    def __init__(self, progress: ProgressCallback | None) -> None:
        self.progress = progress
        self.sizes: dict[str, int] = {}
        self.current: str | None = None
        self.container = ""
        self.sent = 0

    def start(self, files: Sequence[Path]) -> None:
        """Tell the total: each file's size (a zip archive's shared among its members)."""
        if not self.progress:
            return
        containers = [split_member(str(path)) for path in files]
        members = Counter(archive for archive, _ in containers)
        for path, (archive, _) in zip(files, containers, strict=True):
            try:
                size = os.stat(archive).st_size // members[archive]
            except OSError:
                size = 0
            self.sizes[str(path)] = size
        self.progress("files", len(files))
        self.progress("bytes", sum(self.sizes.values()))

    def begin(self, path: Path) -> None:
        """A file starts being loaded."""
        archive, member = split_member(str(path))
        self.current = str(path)
        # a member's offset in its archive is not its share of it: members count when done
        self.container = os.path.realpath(archive) if member is None else ""
        self.sent = 0

    def batch(self) -> None:
        """A batch of the current file was written: report how far its reading has got."""
        if not self.progress or not self.container or self.current is None:
            return
        offset = read_offset(self.container)
        if offset is not None:
            self._send(min(offset, self.sizes.get(self.current, 0)))

    def done(self, path: Path) -> None:
        """A file is finished (loaded, unchanged, failed): all of it counts."""
        if self.current != str(path):
            self.current, self.sent = str(path), 0
        self._send(self.sizes.get(str(path), 0))
        self.current, self.container = None, ""

    def _send(self, upto: int) -> None:
        if self.progress and upto > self.sent:
            self.progress("read", upto - self.sent)
            self.sent = upto

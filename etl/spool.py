"""A file's transformed batches kept on disk between their transform and their write.

On PostgreSQL with other loaders about, a source locks everything it will hold before its
first write (etl.load.locks), so all of its records are transformed first. Kept in memory,
a large file's rows would grow with the file; pickled to an anonymous temporary file, memory
stays flat and the rows come back in order, once.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from typing import Generic, TypeVar

Item = TypeVar("Item")


class Spool(Generic[Item]):
    """Items written once, then read back once in order; the file is gone when closed."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by `close`)

    def add(self, item: Item) -> None:
        """Append an item."""
        pickle.dump(item, self.file, protocol=pickle.HIGHEST_PROTOCOL)

    def drain(self) -> Iterator[Item]:
        """The items in the order they were added; the file is closed at the end."""
        self.file.seek(0)
        try:
            while True:
                try:
                    yield pickle.load(self.file)  # only what this process wrote
                except EOFError:
                    return
        finally:
            self.close()

    def close(self) -> None:
        """Remove the file (also when its items were never read)."""
        self.file.close()

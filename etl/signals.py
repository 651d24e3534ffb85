"""Signals during a run: SIGTERM stops it like Ctrl-C, and writes hold both until they finish."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


def stop_on_sigterm() -> None:
    """Make SIGTERM raise KeyboardInterrupt, so a terminated run rolls back its current source
    and records itself as interrupted, exactly as after Ctrl-C."""
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while the loader writes; one that arrives meanwhile is
    delivered right after. Raised inside SQLite's executemany, the KeyboardInterrupt would
    leave a statement unfinished: SQLAlchemy then closes the connection without rolling back,
    the half-written transaction keeps the file locked while the exception propagates, and
    the run could not record itself as interrupted."""
    if not hasattr(signal, "pthread_sigmask"):  # not on Windows
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)

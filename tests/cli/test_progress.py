"""`etl run`'s progress: bytes read of all the files as the run goes (inside a file too, not
only when it is done), and the terminal's estimate of the time left made from them."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from rich.console import Console

from benchmarks.generate import generate
from etl.cli import run_progress
from etl.pipeline import RunOptions, run
from etl.progress import read_offset


def events_of_a_run(tmp_path: Path, *paths: Path) -> list[tuple[str, int]]:
    """Every progress event of a real run (one process) into a fresh SQLite file."""
    events: list[tuple[str, int]] = []
    options = RunOptions(
        paths=tuple(str(p) for p in paths),
        database_url=f"sqlite:///{tmp_path / 'papers.db'}",
        workers=1,
    )
    report = run(options, lambda event, count: events.append((event, count)))
    assert report.status == "succeeded"
    return events


def test_a_run_reports_the_bytes_it_reads_batch_by_batch(tmp_path: Path) -> None:
    [plain] = generate(1600, tmp_path / "in" / "big.jsonl", seed=2)
    [small] = generate(30, tmp_path / "small.jsonl", seed=4)
    packed = tmp_path / "in" / "small.jsonl.gz"
    with small.open("rb") as source, gzip.open(packed, "wb") as target:
        shutil.copyfileobj(source, target)
    events = events_of_a_run(tmp_path, tmp_path / "in")
    total = plain.stat().st_size + packed.stat().st_size
    assert events[:2] == [("files", 2), ("bytes", total)]
    reads = [count for event, count in events if event == "read"]
    assert sum(reads) == total and all(count > 0 for count in reads)
    # the big file (four batches) is measured while it is read, not only once it is done
    first_done = next(k for k, (event, _) in enumerate(events) if event == "source")
    assert sum(1 for event, _ in events[:first_done] if event == "read") >= 2


def test_an_unchanged_file_counts_all_its_bytes_at_once(tmp_path: Path) -> None:
    [path] = generate(20, tmp_path / "in.jsonl", seed=2)
    events_of_a_run(tmp_path, path)
    events = events_of_a_run(tmp_path, path)  # the rerun: nothing read
    assert [count for event, count in events if event == "read"] == [path.stat().st_size]


def test_the_offset_read_of_an_open_file_is_known(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 10_000)
    assert read_offset(str(path)) is None  # not open
    with path.open("rb", buffering=0) as handle:
        handle.read(1234)
        assert read_offset(str(path)) == 1234


def test_the_terminal_shows_the_time_left_from_the_bytes_read() -> None:
    now = [100.0]
    console = Console(record=True, width=160, force_terminal=True)
    progress, on_progress = run_progress(console, True, clock=lambda: now[0])
    on_progress("files", 3)
    on_progress("bytes", 4_000)
    on_progress("read", 1_000)
    now[0] += 30.0  # a quarter in 30 s: 90 s left at that pace
    on_progress("read", 1_000)
    on_progress("source", 1)
    on_progress("records", 1_200)
    console.print(progress.make_tasks_table(progress.tasks))
    shown = console.export_text()
    assert "1/3 files" in shown and "1,200 records" in shown and "50%" in shown
    assert "left 0:01:" in shown.replace("·", "").replace("  ", " ")

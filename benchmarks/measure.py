"""Measure one command's wall time, CPU time and peak memory, each in its own wrapper process.

`measure(cmd)` starts `python measure.py RESULT_FILE -- CMD...`. The wrapper has exactly one
child, so its `RUSAGE_CHILDREN.ru_maxrss` is that command's peak RSS (the largest single
process among the command and the descendants it waited for). On Linux the wrapper also
samples the whole process tree from /proc every 50 ms and keeps the largest sum, which counts
parallel workers together (a sample can miss a short spike). Its `RUSAGE_CHILDREN` user and
system time is the CPU the command and those descendants used, on all cores together.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_SECONDS = 0.05
WRAPPER = Path(__file__).resolve()


@dataclass(frozen=True)
class Sample:
    """One measured run: wall and CPU seconds, peak RSS in MB, the exit status and output.
    `server_cpu` is a local database server's CPU during the run, when it was measured."""

    wall: float
    cpu: float
    peak_mb: float
    tree_peak_mb: float | None
    returncode: int
    output: str
    server_cpu: float | None = None


class MeasureTimeout(Exception):
    """The command ran longer than its time limit and was killed."""


def measure(
    cmd: list[str],
    *,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Sample:
    """Run `cmd` under the wrapper; kill its whole process group if it exceeds `timeout`."""
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        result_path = Path(tmp) / "result.json"
        log_path = Path(tmp) / "output.log"
        with log_path.open("w") as log:
            wrapper = [sys.executable, str(WRAPPER), str(result_path), "--", *cmd]
            proc = subprocess.Popen(
                wrapper,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
                cwd=cwd,
            )
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise MeasureTimeout(f"killed after {timeout:.0f} s: {' '.join(cmd)}") from None
        output = log_path.read_text(errors="replace")
        if not result_path.exists():
            raise RuntimeError(f"the measuring wrapper failed:\n{output}")
        data = json.loads(result_path.read_text())
    return Sample(
        data["wall"], data["cpu"], data["peak_mb"], data["tree_peak_mb"], data["returncode"], output
    )


def tree_rss_bytes(root: int) -> int:
    """Resident memory of `root` and all its descendants now (Linux /proc), in bytes."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                pending.extend(int(child) for child in children.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def processes_cpu_seconds(name: str) -> float | None:
    """CPU seconds used so far by the processes called `name` and the children they reaped
    (Linux /proc); None when there is none. A local PostgreSQL server's postmaster reaps its
    backends, so the difference across a run is what the server spent on it (and on anything
    else it did meanwhile, such as autovacuum)."""
    if not Path("/proc/self/stat").exists():
        return None
    ticks, found = 0, False
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                command, fields = stat.read().split(" (", 1)[1].rsplit(") ", 1)
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError, ValueError):
            continue
        if command == name:
            found = True
            ticks += sum(int(x) for x in fields.split()[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK") if found else None


def _sample_tree(root: int, stop: threading.Event, peak: list[int]) -> None:
    """Keep the largest tree RSS seen in `peak[0]` until `stop` is set."""
    while not stop.is_set():
        peak[0] = max(peak[0], tree_rss_bytes(root))
        stop.wait(SAMPLE_SECONDS)


def _maxrss_mb(value: int) -> float:
    """ru_maxrss in MB: kilobytes on Linux, bytes on macOS."""
    return value / (1024 * 1024) if sys.platform == "darwin" else value / 1024


def wrapper_main(argv: list[str]) -> int:
    """Run the command after `--`, then write wall, peak and exit status as JSON."""
    result_path, separator, *cmd = argv
    if separator != "--" or not cmd:
        print("usage: measure.py RESULT_FILE -- CMD...", file=sys.stderr)
        return 2
    can_sample = Path("/proc/self/status").exists()
    started = time.perf_counter()
    child = subprocess.Popen(cmd)
    stop, peak = threading.Event(), [0]
    sampler = threading.Thread(target=_sample_tree, args=(child.pid, stop, peak), daemon=True)
    if can_sample:
        sampler.start()
    returncode = child.wait()
    wall = time.perf_counter() - started
    stop.set()
    if can_sample:
        sampler.join()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mb": _maxrss_mb(usage.ru_maxrss),
        "tree_peak_mb": peak[0] / 2**20 if can_sample else None,
        "returncode": returncode,
    }
    Path(result_path).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(wrapper_main(sys.argv[1:]))

"""A large `.jsonl.gz` load with default flags: wall time, CPU, every process's peak memory,
etl's stage times.

Usage:
    python benchmarks/bench_million.py [--n 1000000] [--seed 7] [--rev REV] [--timeout 7200]
        [--json OUT]

The records are the project's generator's (rich abstracts, `generate.py`), gzipped once and
cached as benchmarks/out/records-N-sSEED-vVERSION.jsonl.gz (1,000,000 records: about 1.4 GB
of JSON Lines on the way, 330 MB compressed). Then `etl run FILE --db sqlite:///out/million.db`
into a fresh file, with no other flag (workers: the machine's cores), while this script
samples every process of the run from /proc every 0.2 s (Linux):

- each process's peak resident memory (`VmHWM`, the kernel's own high-water mark, so no peak
  is missed between samples), named as the main process, a transform worker or a helper;
- the largest sum of the processes' resident memory at one sample (all of them together);
- the load average while it ran (other work on the machine slows a run).

It prints the wall time, the CPU time of the run and every process it waited for (user +
system, all cores), CPU / wall (how many cores it kept busy), each process's peak, etl's exit
status and its own summary: papers and seconds per stage (migrate, extract, transform: waiting
for the workers, load, index). At fewer than 1,000,000 records it also scales the wall and CPU
linearly to 1,000,000: a lower bound, since the writer's indexes grow slower to update with the
database (the 1,000,000-record figures in README.md show by how much).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import snapshot  # noqa: E402
from bench_load import dataset, remove_sqlite, tool  # noqa: E402

OUT = HERE / "out"
SAMPLE_SECONDS = 0.2
MILLION = 1_000_000


@dataclass
class Watch:
    """What the sampler saw of a process tree: each process's peak and role, the largest sum,
    the load averages."""

    peaks_kb: dict[int, int] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)
    tree_peak_kb: int = 0
    loads: list[float] = field(default_factory=list)


def gzipped(n: int, seed: int) -> Path:
    """The cached gzipped JSON Lines file of N generated records."""
    path = OUT / f"records-{n}-s{seed}-v{generate.VERSION}.jsonl.gz"
    if not path.exists():
        plain = dataset(n, seed)
        print(f"compressing → {path}", flush=True)
        partial = path.with_suffix(".partial")
        with plain.open("rb") as source, gzip.open(partial, "wb", compresslevel=6) as target:
            shutil.copyfileobj(source, target, 1 << 20)
        partial.rename(path)
    return path


def status_kb(pid: int, key: str) -> int:
    """A /proc/PID/status value in kB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def role(pid: int, root: int) -> str:
    """The main process, a transform worker, or a helper (multiprocessing's tracker)."""
    if pid == root:
        return "main"
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "gone"
    if "resource_tracker" in command:
        return "helper (resource tracker)"
    return "transform worker" if "spawn_main" in command else "other"


def tree(root: int) -> list[int]:
    """The process and its descendants now."""
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                pending.extend(int(child) for child in children.read().split())
        except OSError:
            continue
    return found


def sample(root: int, watch: Watch, stop: threading.Event) -> None:
    """Sample the tree until `stop` is set."""
    while not stop.is_set():
        total = 0
        for pid in tree(root):
            peak = status_kb(pid, "VmHWM:")
            if peak:
                watch.peaks_kb[pid] = max(watch.peaks_kb.get(pid, 0), peak)
                watch.roles.setdefault(pid, role(pid, root))
            total += status_kb(pid, "VmRSS:")
        watch.tree_peak_kb = max(watch.tree_peak_kb, total)
        watch.loads.append(os.getloadavg()[0])
        stop.wait(SAMPLE_SECONDS)


def run_etl(path: Path, database: Path, env: dict[str, str] | None, timeout: float) -> dict:
    """`etl run` with default flags into a fresh SQLite file, watched."""
    remove_sqlite(database)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    watch, stop = Watch(), threading.Event()
    tick = time.perf_counter()
    command = [tool("etl"), "run", str(path), "--db", f"sqlite:///{database}"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    sampler = threading.Thread(target=sample, args=(process.pid, watch, stop), daemon=True)
    sampler.start()
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    wall = time.perf_counter() - tick
    stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = output.decode(errors="replace")
    return {
        "returncode": process.returncode,
        "wall": wall,
        "cpu": cpu,
        "processes": [
            {"pid": pid, "role": watch.roles.get(pid, "?"), "peak_mb": kb / 1024}
            for pid, kb in sorted(watch.peaks_kb.items())
        ],
        "tree_peak_mb": watch.tree_peak_kb / 1024,
        "load_average": [min(watch.loads, default=0.0), max(watch.loads, default=0.0)],
        "summary": [line.strip() for line in text.splitlines() if line.strip()][-6:],
        "stages": stages(text),
    }


def stages(output: str) -> dict[str, float]:
    """etl's seconds per stage, from its summary's `seconds` line."""
    line = next((s for s in output.splitlines() if s.strip().startswith("seconds")), "")
    found = {name: float(value) for name, value in re.findall(r"(\w+) ([\d.]+)", line)}
    total = re.match(r"\s*seconds\s+([\d.]+)", line)
    if total:
        found["total"] = float(total.group(1))
    return found


def report(n: int, path: Path, result: dict) -> None:
    """Print the figures."""
    size = path.stat().st_size / 1e6
    print(f"\n{n:,} records, {path.name} ({size:,.0f} MB), etl exit {result['returncode']}")
    wall, cpu = result["wall"], result["cpu"]
    print(
        f"  wall {wall:,.1f} s, CPU {cpu:,.1f} s (user + system, all processes), "
        f"CPU / wall {cpu / wall:.2f}"
    )
    low, high = result["load_average"]
    print(f"  load average while it ran: {low:.1f}-{high:.1f} (this run alone adds about 2)")
    for process in result["processes"]:
        print(f"  peak {process['peak_mb']:7.1f} MB  {process['role']} (pid {process['pid']})")
    print(f"  largest sum of all the processes at one sample: {result['tree_peak_mb']:.1f} MB")
    for line in result["summary"]:
        print(f"  etl: {line}")
    if n < MILLION:
        scale = MILLION / n
        print(
            f"  scaled linearly to {MILLION:,} records: wall {wall * scale / 60:,.1f} min, "
            f"CPU {cpu * scale / 60:,.1f} min (a lower bound: see the module docstring)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=MILLION, help="records")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rev", help="run etl as at this commit (snapshot.py)")
    parser.add_argument("--timeout", type=float, default=7200.0, help="kill etl after this")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    path = gzipped(args.n, args.seed)
    env = snapshot.environment(snapshot.prepare(args.rev)) if args.rev else None
    result = run_etl(path, OUT / "million.db", env, args.timeout)
    report(args.n, path, result)
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, **result}, indent=2))
    return 0 if result["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

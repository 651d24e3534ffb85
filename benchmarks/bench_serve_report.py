"""Time `etl serve` pages and searches, and `etl report`'s build time and size.

Usage: python benchmarks/bench_serve_report.py [--n 10000] [--repeats 20] [--postgres URL]

Two SQLite databases: the packaged sample, and N generated records (benchmarks/generate.py),
both loaded with `etl run` into benchmarks/out/ (kept between runs, keyed by N and the
generator's version). For each, `etl serve` runs as a subprocess on a free loopback port and
every page is fetched `--repeats` times after one warm-up fetch: median, p95 and max in ms
(targets: under 200 ms). Then `etl report` is run as the CLI, `--repeats 3` times: median
wall seconds (target: under 10 s, with Python's start-up and imports) and the file's size
(target: under 2 MB). With --postgres, the generated records are also loaded into that
(empty) PostgreSQL database and the report timed there. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (benchmarks/generate.py, beside this file)

# Pages to time; the search words occur in the generated records and in the seed lists.
PAGES = (
    ("index", "/"),
    ("database", "/{db}"),
    ("papers table", "/{db}/papers"),
    ("papers_with_code view", "/{db}/papers_with_code"),
    ("paper_overview view", "/{db}/paper_overview"),
    ("method_index view", "/{db}/method_index"),
    ("topic_summary view", "/{db}/topic_summary"),
    ("venue_summary view", "/{db}/venue_summary"),
    ("a paper's row", "/{db}/papers/1"),
    ("search box on papers", "/{db}/papers?_search=graph+learning"),
    ("search box, no match", "/{db}/papers?_search=zzzzqqq"),
    ("ranked search query", "/{db}/ranked_search?search=graph+learning"),
    ("ranked search, phrase", "/{db}/ranked_search?search=%22language+models%22"),
    ("papers with code by topic", "/{db}/papers_with_code_by_topic?topic=Large+language+models"),
    ("methods introduced at venue", "/{db}/methods_introduced_at_venue?venue={venue}&year="),
    ("acronym expansions", "/{db}/acronym_expansions?acronym=LLM"),
)


def run(*args: str) -> float:
    """Run a command, fail loudly if it fails; its wall seconds."""
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr}")
    return time.perf_counter() - start


def sample_database() -> Path:
    """The packaged sample lists in benchmarks/out/sample.db."""
    path = OUT / "sample.db"
    if not path.exists():
        run(sys.executable, "-m", "etl", "run", "-q", "--db", f"sqlite:///{path}")
    return path


def generated_records(n: int) -> Path:
    """N generated records as JSON Lines (cached by N and the generator's version)."""
    path = OUT / f"records_{n}_v{generate.VERSION}.jsonl"
    if not path.exists():
        run(sys.executable, str(HERE / "generate.py"), str(n), str(path))
    return path


def generated_database(n: int) -> Path:
    """N generated records loaded into benchmarks/out/generated_N.db."""
    path = OUT / f"generated_{n}_v{generate.VERSION}.db"
    if not path.exists():
        seconds = run(
            sys.executable, "-m", "etl", "run", "-q", str(generated_records(n)),
            "--venue", "BENCH", "--year", "2025", "--db", f"sqlite:///{path}",
        )  # fmt: skip
        print(f"loaded {n:,} generated records into {path.name} in {seconds:.1f} s")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch_ms(url: str) -> float:
    """Milliseconds to fetch a page completely."""
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
        if response.status != 200:
            raise SystemExit(f"{url}: HTTP {response.status}")
    return (time.perf_counter() - start) * 1000


def bench_serve(path: Path, repeats: int, venue: str) -> None:
    """Fetch every page `repeats` times from a running `etl serve`."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "etl", "serve", "--db", f"sqlite:///{path}", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                fetch_ms(base + "/-/versions.json")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        print(f"\netl serve {path.name} ({path.stat().st_size / 1e6:.1f} MB)")
        print(f"  {'page':<30} {'median':>8} {'p95':>8} {'max':>8}  (ms, {repeats} fetches)")
        db = urllib.parse.quote(path.stem)
        for name, template in PAGES:
            url = base + template.format(db=db, venue=urllib.parse.quote(venue))
            fetch_ms(url)  # warm-up: first use of the page's statements
            times = sorted(fetch_ms(url) for _ in range(repeats))
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            median = statistics.median(times)
            print(f"  {name:<30} {median:8.1f} {p95:8.1f} {times[-1]:8.1f}")
    finally:
        process.terminate()
        process.wait(timeout=10)


def bench_report(url: str, label: str, repeats: int) -> None:
    """Time `etl report` as a user runs it, and weigh its file."""
    output = OUT / f"report_{label}.html"
    seconds = sorted(
        run(sys.executable, "-m", "etl", "report", "--db", url, "-o", str(output))
        for _ in range(repeats)
    )
    print(
        f"etl report {label}: {statistics.median(seconds):.2f} s median of {repeats} "
        f"(min {seconds[0]:.2f}, max {seconds[-1]:.2f}), {output.stat().st_size / 1024:,.0f} KB"
    )


def main(argv: list[str] | None = None) -> int:
    """Measure both databases and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="generated records")
    parser.add_argument("--repeats", type=int, default=20, help="fetches per page")
    parser.add_argument("--postgres", metavar="URL", help="an empty PostgreSQL database to use")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    sample = sample_database()
    generated = generated_database(args.n)
    bench_serve(sample, args.repeats, "ICML")
    bench_serve(generated, args.repeats, "BENCH")
    print()
    bench_report(f"sqlite:///{sample}", "sample", 3)
    bench_report(f"sqlite:///{generated}", f"generated_{args.n}", 3)
    if args.postgres:
        seconds = run(
            sys.executable, "-m", "etl", "run", "-q", str(generated_records(args.n)),
            "--venue", "BENCH", "--year", "2025", "--db", args.postgres,
        )  # fmt: skip
        print(f"loaded {args.n:,} generated records into PostgreSQL in {seconds:.1f} s")
        bench_report(args.postgres, f"postgresql_{args.n}", 3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

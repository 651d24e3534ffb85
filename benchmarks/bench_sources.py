"""Load a generated, compressed arXiv-snapshot file and report etl's peak memory.

    python benchmarks/bench_sources.py N [--workers W] [--out DIR] [--abstract-chars C]

Writes N made-up records in the arXiv metadata snapshot's shape (one JSON object a line:
`id`, `title`, `abstract`, `authors_parsed`, `versions`, `categories` ...) to
DIR/arxiv-N-C.jsonl.gz, streaming (memory flat in N), then runs `etl run` on it under
`/usr/bin/time -v` and prints the file's size, the wall time and the peak resident memory of
the main process (workers are separate processes; `time -v` reports the largest single
process). Abstracts come from benchmarks/generate.py's records.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import Generator


def write_snapshot(count: int, path: Path, abstract_chars: int) -> None:
    """N arXiv-shaped records, gzip-compressed, one a line (abstracts cut at a word before
    `abstract_chars`, 0 for whole)."""
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as out:
        for number, record in enumerate(Generator(7, max(count, 1)).records(count), 1):
            names = [a.split(" ", 1) for a in record.authors] or [["Ada", "Lovelace"]]
            out.write(
                json.dumps(
                    {
                        "id": f"{20 + number // 10**6 % 10:02d}{number // 10**5 % 10 + 1:02d}."
                        f"{number % 10**5:05d}",
                        "submitter": names[0][0],
                        "authors": ", ".join(" ".join(n) for n in names),
                        "title": record.title,
                        "comments": "12 pages",
                        "journal-ref": None,
                        "doi": None,
                        "report-no": None,
                        "categories": "cs.LG stat.ML",
                        "license": None,
                        "abstract": _cut(record.abstract, abstract_chars),
                        "versions": [{"version": "v1", "created": "Mon, 2 Apr 2024 19:18:42 GMT"}],
                        "update_date": "2024-04-02",
                        "authors_parsed": [[n[-1], n[0], ""] for n in names],
                    }
                )
                + "\n"
            )


def _cut(text: str, limit: int) -> str:
    """The text cut at the last word before `limit` characters (whole for 0)."""
    return text if not limit or len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--abstract-chars",
        type=int,
        default=0,
        help="cut abstracts to this length (the load's time is the transform's, per character)",
    )
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="bench-sources-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"arxiv-{args.n}-{args.abstract_chars}.jsonl.gz"
    if not path.exists():
        write_snapshot(args.n, path, args.abstract_chars)
    database = path.with_suffix("").with_suffix(".db")
    database.unlink(missing_ok=True)
    etl = Path(sys.executable).parent / "etl"
    command = ["/usr/bin/time", "-v", str(etl), "run", str(path)]
    command += ["--db", str(database), "--workers", str(args.workers), "-q"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)
    print(done.stdout.strip()[-2000:])
    print(f"file: {path} ({path.stat().st_size / 1e6:.1f} MB compressed)")
    print(f"exit status {done.returncode}; wall {wall.group(1) if wall else '?'}")
    print(f"peak RSS of the main process: {int(peak.group(1)) / 1024:.0f} MB" if peak else "?")


if __name__ == "__main__":
    main()

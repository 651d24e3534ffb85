"""Gold annotations of real abstracts, kept without the abstracts themselves.

Public paper lists (for example the papercopilot/paperlists collection) may not be copied into
this repository, so a real gold file holds only annotations and a key to each record: the
repository, commit, file and record id, and a short digest of the record's title and abstract
(to notice when the list changed since it was annotated). This script brings the text back from
a local copy of the lists and hands the full records to `etl eval`'s scorer.

    python tools/real_gold.py select --lists DIR --commit SHA --file colt/colt2022.json:15 ...
    python tools/real_gold.py show GOLD --lists DIR [--id ID]          # text to annotate
    python tools/real_gold.py materialize GOLD --lists DIR -o FULL.jsonl
    python tools/real_gold.py eval GOLD --lists DIR [--tagger model|rules] [--misses]
    python tools/real_gold.py agree FIRST SECOND --lists DIR        # two readings compared

DIR is either a git directory (read at each record's commit, so later upstream changes do not
matter) or a plain folder holding the lists at their usual paths.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

REPOSITORY = "papercopilot/paperlists"
MIN_ABSTRACT_CHARS = 400


class Lists:
    """A local copy of the paper lists: a git directory or a plain folder."""

    def __init__(self, location: str) -> None:
        self.path = Path(location)
        self.is_git = (self.path / "HEAD").is_file() and (self.path / "objects").is_dir()
        if not self.is_git and not self.path.is_dir():
            raise SystemExit(f"error: {location} is neither a git directory nor a folder")

    def head(self) -> str:
        """The commit the copy is at (git directories only)."""
        if not self.is_git:
            raise SystemExit("error: --commit is needed when --lists is a plain folder")
        return self._git("rev-parse", "HEAD").strip()

    @cache  # noqa: B019 - one Lists per run; files are read once each
    def records(self, commit: str, file: str) -> tuple[dict[str, Any], ...]:
        """The records of one list file at a commit."""
        if self.is_git:
            text = self._git("show", f"{commit}:{file}")
        else:
            text = (self.path / file).read_text("utf-8")
        data = json.loads(text)
        if isinstance(data, dict):
            data = list(data.values())
        return tuple(r for r in data if isinstance(r, dict))

    def _git(self, *args: str) -> str:
        result = subprocess.run(
            ["git", f"--git-dir={self.path}", *args], capture_output=True, text=True, check=False
        )
        if result.returncode:
            raise SystemExit(f"error: git {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout


def record_key(records: Sequence[dict[str, Any]], index: int) -> str:
    """A record's own id when it is unique in its file, else `#N` (1-based position)."""
    ids = [str(r.get("id") or "") for r in records]
    own = ids[index]
    return own if own and ids.count(own) == 1 else f"#{index + 1}"


def find_record(records: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """The record a key names."""
    if key.startswith("#"):
        return records[int(key[1:]) - 1]
    matches = [r for r in records if str(r.get("id") or "") == key]
    if len(matches) != 1:
        raise SystemExit(f"error: record id {key!r} found {len(matches)} times")
    return matches[0]


def digest(record: dict[str, Any]) -> str:
    """A short hash of a record's title and abstract (to detect upstream edits)."""
    text = f"{record.get('title') or ''}\n{record.get('abstract') or ''}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def venue_year(file: str) -> tuple[str, int | None]:
    """`nips/nips2018.json` -> ("nips", 2018): what the file name says (venue as written)."""
    stem = Path(file).stem
    match = re.fullmatch(r"([a-z]+?)(\d{4})", stem)
    return (match.group(1), int(match.group(2))) if match else (stem, None)


def select(
    lists: Lists,
    commit: str,
    plans: Sequence[str],
    seed: str,
    exclude: frozenset[tuple[str, str]] = frozenset(),
) -> Iterator[dict[str, Any]]:
    """Skeleton gold lines: N random records with a title and a long abstract per file.

    A plan is `FILE:N` or `FILE:N:REGEX` (REGEX, case-insensitive, must match the title).
    Records in `exclude` (file, record id) are never drawn: a new set never repeats an old one.
    """
    for plan in plans:
        file, count, *pattern = plan.split(":", 2)
        records = lists.records(commit, file)
        regex = re.compile(pattern[0], re.I) if pattern else None
        eligible = [
            i
            for i, r in enumerate(records)
            if r.get("title")
            and len(r.get("abstract") or "") >= MIN_ABSTRACT_CHARS
            and (regex is None or regex.search(str(r["title"])))
            and (file, record_key(records, i)) not in exclude
        ]
        chosen = sorted(random.Random(f"{seed}:{file}").sample(eligible, int(count)))
        venue, year = venue_year(file)
        for n, index in enumerate(chosen, 1):
            yield {
                "id": f"{venue}{year}-{n:02d}",
                "source": {
                    "repository": REPOSITORY,
                    "commit": commit,
                    "file": file,
                    "record_id": record_key(records, index),
                    "digest": digest(records[index]),
                },
                "venue": venue,
                "year": year,
            }


def drawn(golds: Sequence[str]) -> frozenset[tuple[str, str]]:
    """The (file, record id) pairs that existing gold files already hold."""
    return frozenset(
        (line["source"]["file"], line["source"]["record_id"])
        for gold in golds
        for line in read_gold(gold)
    )


def read_gold(path: str) -> list[dict[str, Any]]:
    """The lines of a real gold file."""
    lines = Path(path).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def with_text(lists: Lists, line: dict[str, Any]) -> dict[str, Any]:
    """A gold line with its record's title and abstract put back, checked against the digest."""
    source = line["source"]
    record = find_record(lists.records(source["commit"], source["file"]), source["record_id"])
    if digest(record) != source["digest"]:
        raise SystemExit(f"error: {line['id']}: the record's text changed since it was annotated")
    full = {k: v for k, v in line.items() if k != "source"}
    full["title"] = record.get("title")
    full["abstract"] = record["abstract"]
    return full


def materialize(lists: Lists, gold: str, out: Path) -> int:
    """Write the gold with its texts (a local file, never committed); the record count."""
    lines = read_gold(gold)
    with out.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(with_text(lists, line), ensure_ascii=False) + "\n")
    return len(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: select, show, materialize, eval."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pick = commands.add_parser("select", help="print skeleton lines for random records")
    pick.add_argument("--lists", required=True)
    pick.add_argument("--commit", help="default: the git directory's HEAD")
    pick.add_argument("--file", action="append", required=True, metavar="FILE:N[:TITLE_REGEX]")
    pick.add_argument("--seed", default="dev")
    pick.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GOLD",
        help="never draw a record this gold file holds (repeatable)",
    )
    show = commands.add_parser("show", help="print the text of gold records, to annotate")
    show.add_argument("gold")
    show.add_argument("--lists", required=True)
    show.add_argument("--id", action="append")
    full = commands.add_parser("materialize", help="write the gold with its texts")
    full.add_argument("gold")
    full.add_argument("--lists", required=True)
    full.add_argument("-o", "--output", required=True)
    score = commands.add_parser("eval", help="score the transform against the gold")
    score.add_argument("gold")
    score.add_argument("--lists", required=True)
    score.add_argument("--taxonomy")
    score.add_argument("--tagger", choices=("model", "rules"), default="model")
    score.add_argument("--misses", action="store_true")
    agree = commands.add_parser("agree", help="score a second reading against the first")
    agree.add_argument("first")
    agree.add_argument("second")
    agree.add_argument("--lists", required=True)
    args = parser.parse_args(argv)
    lists = Lists(args.lists)
    if args.command == "select":
        commit = args.commit or lists.head()
        for line in select(lists, commit, args.file, args.seed, drawn(args.exclude)):
            print(json.dumps(line, ensure_ascii=False))
    elif args.command == "show":
        for line in read_gold(args.gold):
            if args.id and line["id"] not in args.id:
                continue
            record = with_text(lists, line)
            print(f"## {line['id']}  ({line['source']['file']})\nTITLE: {record['title']}\n")
            print(f"{record['abstract']}\n")
    elif args.command == "materialize":
        count = materialize(lists, args.gold, Path(args.output))
        print(f"{count} records written to {args.output}", file=sys.stderr)
    elif args.command == "agree":
        from etl.evaluate import agreement

        with tempfile.TemporaryDirectory() as folder:
            first, second = Path(folder) / "first.jsonl", Path(folder) / "second.jsonl"
            materialize(lists, args.first, first)
            materialize(lists, args.second, second)
            table = agreement(str(first), str(second))
        print("  ".join(f"{c:>9}" for c in table.columns))
        for row in table.rows:
            print("  ".join(f"{v!s:>9}" for v in row))
    else:
        from etl.evaluate import main as evaluate_main

        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "gold.jsonl"
            materialize(lists, args.gold, out)
            extra = ["--taxonomy", args.taxonomy] if args.taxonomy else []
            extra += ["--tagger", args.tagger]
            return evaluate_main([str(out), *extra, *(["--misses"] if args.misses else [])])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

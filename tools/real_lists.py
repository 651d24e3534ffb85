"""Load a folder of real paper lists with etl and check, per file, what arrived in the database.

    python tools/real_lists.py FOLDER [--db URL] [--workers N] [--markdown]

FOLDER holds lists such as those of the papercopilot/paperlists collection (JSON arrays, JSON
Lines or CSV). They are copied to a scratch folder and loaded there with `etl run` (the real
pipeline), into a new SQLite file unless `--db` names a database. The script then prints one
row per file:

- records with a title in the file, and distinct titles of the file stored on papers seen in
  it (titles compared without case, spaces or punctuation);
- the venue and year the file name names, and how many of the file's sightings carry them;
- author slots in the file (the non-empty names of each record's author field) and stored
  for the papers seen in it;
- GitHub repositories written anywhere in a record (any field, including the abstract; not in
  per-author fields such as `homepage`) and how many of them `papers_with_code` holds for the
  paper of that record;
- links stored from per-author fields as project or code links (must be 0).

It then runs `etl run` again (every file must be skipped, nothing written), and changes one
copied file (its last record dropped) to check that only that file is read and one paper
leaves. The counts of what is written are taken from the files with code of this script, not
from etl's extractor, so that a record etl misreads shows up as a difference.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etl.extract.venues import venue_in_name
from etl.pipeline import RunOptions, run

# Fields holding one value per author: never the paper's links.
PER_AUTHOR_FIELDS = {"homepage", "homepages", "dblp", "google_scholar", "orcid", "linkedin"}
AUTHOR_FIELDS = ("author", "authors", "author_list", "authorlist", "creators")
GITHUB_RE = re.compile(r"(?i)github\.com[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)")
NOT_OWNERS = {"orgs", "features", "topics", "sponsors", "about", "marketplace", "site"}


@dataclass
class FileCounts:
    """What one list file holds, counted by this script."""

    records: int = 0
    unloadable: int = 0
    titled: int = 0
    titles: set[str] = field(default_factory=set)
    author_slots: int = 0
    repos: list[tuple[int, str, str]] = field(default_factory=list)  # (position, owner, name)


def loose(text: str) -> str:
    """Text compared without case, spaces or punctuation."""
    return re.sub(r"[\W_]", "", text.casefold())


def read_list(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(position as etl numbers it, record) for JSON arrays, JSON Lines and CSV."""
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows, line = [], 1
            for row in reader:
                rows.append((line + 1, dict(row)))
                line = reader.line_num
            return rows
    text = path.read_text("utf-8-sig")
    if path.suffix in (".jsonl", ".ndjson") or not text.lstrip().startswith(("[", "{")):
        return [
            (number, json.loads(line))
            for number, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
    data = json.loads(text)
    items = list(data.values()) if isinstance(data, dict) else data
    return [(number, item) for number, item in enumerate(items, 1) if isinstance(item, dict)]


def author_slots(value: Any) -> int:
    """Non-empty names in an author field (a list, or one string joined by `;` or `,`)."""
    if isinstance(value, list):
        return sum(1 for v in value if str(v or "").strip())
    text = str(value or "")
    separator = ";" if ";" in text else ","
    return sum(1 for part in text.split(separator) if part.strip())


def repos_in(record: dict[str, Any]) -> set[tuple[str, str]]:
    """GitHub repositories written in any field of a record but per-author ones."""
    found: set[tuple[str, str]] = set()
    for name, value in record.items():
        if name.lower() in PER_AUTHOR_FIELDS:
            continue
        for match in GITHUB_RE.finditer(json.dumps(value, ensure_ascii=False).replace("\\/", "/")):
            repo = re.sub(r"(?i)\.git$", "", match.group(2).rstrip(".")).rstrip(".")
            owner = match.group(1)
            if owner.lower() not in NOT_OWNERS and repo:
                found.add((owner.lower(), repo.lower()))
    return found


def count_file(path: Path) -> FileCounts:
    """The counts of one list file."""
    counts = FileCounts()
    for position, record in read_list(path):
        counts.records += 1
        title = str(record.get("title") or "").strip()
        if not title and not str(record.get("abstract") or "").strip():
            counts.unloadable += 1  # etl rejects it: neither a title nor an abstract
            continue
        if title:
            counts.titled += 1
            counts.titles.add(loose(title))
        author = next((record[k] for k in AUTHOR_FIELDS if record.get(k)), None)
        counts.author_slots += author_slots(author)
        counts.repos += [(position, owner, repo) for owner, repo in sorted(repos_in(record))]
    return counts


def stored(database: Path, path: Path) -> dict[str, Any]:
    """What the database holds for the papers seen in one file."""
    with sqlite3.connect(database) as db:
        source = db.execute("SELECT id FROM sources WHERE path = ?", (str(path),)).fetchone()
        if source is None:
            return {}
        (source_id,) = source
        sightings = db.execute(
            "SELECT ps.position, p.id, p.title_raw, ps.venue, ps.year, "
            "(SELECT count(*) FROM paper_authors pa WHERE pa.paper_pk = p.pk) "
            "FROM paper_sources ps JOIN papers p ON p.pk = ps.paper_pk WHERE ps.source_id = ?",
            (source_id,),
        ).fetchall()
        code = db.execute(
            "SELECT ps.position, lower(c.repo_owner), lower(c.repo_name) FROM paper_sources ps "
            "JOIN papers p ON p.pk = ps.paper_pk JOIN papers_with_code c ON c.paper_id = p.id "
            "WHERE ps.source_id = ?",
            (source_id,),
        ).fetchall()
        author_links = db.execute(
            "SELECT count(*) FROM paper_sources ps "
            "JOIN paper_links pl ON pl.paper_pk = ps.paper_pk "
            "JOIN links l ON l.id = pl.link_id WHERE ps.source_id = ? "
            "AND lower(pl.found_in) IN ('homepage', 'homepages') AND l.kind IN ('project', 'code')",
            (source_id,),
        ).fetchone()[0]
    return {"sightings": sightings, "code": code, "author_links": author_links}


def check_file(database: Path, path: Path) -> dict[str, Any]:
    """One row of the table: the file's counts beside what was stored."""
    counts = count_file(path)
    held = stored(database, path)
    sightings = held.get("sightings", [])
    venue, year = venue_in_name(path.stem)
    titles_stored = {loose(t) for _, _, t, *_ in sightings if t} & counts.titles
    code = {(position, owner, name) for position, owner, name in held.get("code", [])}
    found = sum(
        1
        for position, owner, name in counts.repos
        if any(
            p == position and o == owner and (n == name or n.startswith(name)) for p, o, n in code
        )
    )
    return {
        "file": path.name,
        "records": counts.records,
        "unloadable": counts.unloadable,
        "titled": counts.titled,
        "titles_in": len(counts.titles),
        "titles_stored": len(titles_stored),
        "venue": f"{venue or '-'} {year or '-'}",
        "venue_right": sum(1 for *_, v, y, _ in sightings if (v, y) == (venue, year)),
        "sightings": len(sightings),
        "authors_in": counts.author_slots,
        "authors_stored": sum(row[5] for row in sightings),
        "repos_in": len(counts.repos),
        "repos_found": found,
        "author_links_as_paper_links": held.get("author_links", 0),
    }


COLUMNS = (
    ("file", "file"),
    ("records", "records"),
    ("unloadable", "no title or abstract"),
    ("titled", "with a title"),
    ("titles_in", "distinct titles in"),
    ("titles_stored", "stored"),
    ("venue", "venue year (name)"),
    ("venue_right", "sightings with it"),
    ("sightings", "sightings"),
    ("authors_in", "author slots in"),
    ("authors_stored", "stored"),
    ("repos_in", "GitHub repos in"),
    ("repos_found", "in papers_with_code"),
    ("author_links_as_paper_links", "homepages as paper links"),
)


def print_table(rows: list[dict[str, Any]], markdown: bool) -> None:
    """The per-file table and a total row."""
    total: Counter[str] = Counter()
    for row in rows:
        total.update({k: v for k, v in row.items() if isinstance(v, int)})
    rows = [*rows, {**total, "file": "total", "venue": ""}]
    cells = [[str(row.get(key, "")) for key, _ in COLUMNS] for row in rows]
    headers = [title for _, title in COLUMNS]
    if markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "|".join("---" for _ in headers) + "|")
        for line in cells:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(h), *(len(c[k]) for c in cells)) for k, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    for line in cells:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))


def _json(path: Path) -> Any:
    """A JSON file's value (None when it is not JSON)."""
    try:
        return json.loads(path.read_text("utf-8-sig"))
    except ValueError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--db", help="database URL (default: a new SQLite file)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="real-lists-") as scratch:
        folder = Path(scratch) / "lists"
        shutil.copytree(args.folder, folder)
        database = Path(scratch) / "papers.db"
        url = args.db or f"sqlite:///{database}"
        if args.db and not args.db.startswith("sqlite:///"):
            raise SystemExit("error: the per-file checks read a SQLite file; --db must be one")
        if args.db:
            database = Path(args.db.split("///", 1)[1])
        options = RunOptions(paths=(str(folder),), database_url=url, workers=args.workers)
        first = run(options)
        print(
            f"first run: {first.status}, {first.sources_loaded} files, "
            f"{first.papers_inserted} papers, {first.rejects} rejects, {first.seconds:.1f} s"
        )
        files = sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl", ".csv"))
        print_table([check_file(database, path.resolve()) for path in files], args.markdown)
        again = run(options)
        print(
            f"rerun: {again.sources_skipped} of {len(files)} files skipped, "
            f"{again.papers_inserted} inserted, {again.papers_updated} updated, "
            f"{again.papers_removed} removed, {again.seconds:.1f} s"
        )
        arrays = [p for p in files if p.suffix == ".json" and isinstance(_json(p), list)]
        if not arrays:
            return 0
        changed = arrays[0]
        changed.write_text(json.dumps(_json(changed)[:-1]), "utf-8")
        third = run(options)
        print(
            f"after dropping the last record of {changed.name}: {third.sources_loaded} file read, "
            f"{third.sources_skipped} skipped, {third.papers_inserted} inserted, "
            f"{third.papers_updated} updated, {third.papers_unchanged} unchanged, "
            f"{third.papers_removed} removed"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

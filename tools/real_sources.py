"""Load real samples of the metadata services' shapes with etl and check what arrived.

    python tools/real_sources.py FILE_OR_FOLDER... [--markdown]

Each file is loaded alone, with `etl run` (the real pipeline), into a fresh SQLite file, so
that what is counted as stored came from that file only. The script counts, with code of its
own (not etl's readers), what each file holds: distinct records (by the source's id), titles,
abstracts, ids (DOI, arXiv, DBLP, S2 ..., each distinct value), author slots and GitHub
repositories; then what the database holds for the papers seen in the file: papers, titles,
abstracts, identity keys of those kinds, author slots, and repositories in `papers_with_code`.

Shapes counted: Semantic Scholar Graph API responses, Crossref works, arXiv snapshot lines,
OpenAlex works, OpenReview notes, BibTeX, DBLP XML and the Papers with Code files (the
last three by simple pattern counts).
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etl import extract
from etl.pipeline import RunOptions, run

GITHUB_RE = re.compile(r"(?i)github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)")
ID_PREFIXES = ("doi:", "arxiv:", "openreview:", "openalex:", "s2:", "s2corpus:", "dblp:", "pwc:")


@dataclass
class Counts:
    """What a file holds, or what the database holds for it."""

    records: int = 0
    titles: int = 0
    abstracts: int = 0
    ids: int = 0
    authors: int = 0
    repos: set[tuple[str, str]] = field(default_factory=set)
    unloadable: int = 0  # records with neither title nor abstract (rejects, when stored)


def _records(shape: str, data: Any) -> list[dict[str, Any]]:
    """The records of a parsed JSON file of a shape."""
    if shape == "semantic-scholar":
        items = data.get("data", [data]) if isinstance(data, dict) else data
    elif shape == "crossref":
        message = data.get("message", data) if isinstance(data, dict) else data
        items = message.get("items", [message]) if isinstance(message, dict) else message
    elif shape == "openalex":
        items = data.get("results", [data]) if isinstance(data, dict) else data
    elif shape == "openreview":
        items = data.get("notes", [data]) if isinstance(data, dict) else data
    else:
        items = data if isinstance(data, list) else [data]
    return [i for i in items if isinstance(i, dict)]


def _value(value: Any) -> Any:
    return value.get("value") if isinstance(value, dict) and "value" in value else value


def count_in(path: Path, shape: str) -> Counts:
    """What a file holds, counted without etl's readers."""
    counts = Counts()
    text = path.read_text("utf-8", errors="replace")
    counts.repos = {(o.lower(), r.lower().removesuffix(".git")) for o, r in GITHUB_RE.findall(text)}
    if shape == "bibtex":
        return _count_bibtex(text)
    if shape == "dblp":
        return _count_dblp(text)
    lines = (
        [json.loads(line) for line in text.splitlines() if line.strip()]
        if shape == "arxiv"
        else None
    )
    records = lines if lines is not None else _records(shape, json.loads(text))
    seen: dict[str, dict[str, Any]] = {}
    for record in records:
        key = str(record.get("paperId") or record.get("DOI") or record.get("id") or len(seen))
        seen.setdefault(key, record)
    ids: set[str] = set()
    for record in seen.values():
        content = {k: _value(v) for k, v in (record.get("content") or {}).items()}
        title = record.get("title") or content.get("title")
        abstract = (
            record.get("abstract")
            or content.get("abstract")
            or record.get("abstract_inverted_index")
        )
        if not title and not abstract:  # not a paper etl can store: rejected, counted apart
            counts.unloadable += 1
            continue
        counts.records += 1
        counts.titles += bool(title)
        counts.abstracts += bool(abstract)
        authors = record.get("authors_parsed") or record.get("authors") or record.get("author")
        authors = authors or record.get("authorships") or content.get("authors") or []
        counts.authors += len(authors) if isinstance(authors, list) else 0
        external = {k.lower(): v for k, v in (record.get("externalIds") or {}).items()}
        for kind in ("doi", "arxiv", "dblp", "corpusid"):
            if external.get(kind):
                ids.add(f"{kind}:{str(external[kind]).lower()}")
        for name in ("paperId", "DOI", "doi", "forum"):
            # the arXiv snapshot's `doi` holds one DOI or several separated by spaces
            for value in str(record.get(name) or "").split():
                ids.add(f"{name}:{value.lower()}")
        if shape == "arxiv" and record.get("id"):
            ids.add(f"arxiv:{record['id']}")
    counts.ids = len(ids)
    return counts


ARXIV_ID = re.compile(r"(?i)(?:arxiv[:/ ]\s*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5})")


def _count_bibtex(text: str) -> Counts:
    """A BibTeX file's papers (proceedings volumes are not), read with bibtexparser: one
    paper cited under two keys counts once (the same normalised title and first author)."""
    import bibtexparser

    counts = Counts()
    papers: dict[tuple[str, str], Any] = {}
    for entry in bibtexparser.parse_string(text).entries:
        if entry.entry_type.lower() == "proceedings":
            continue
        fields = {k.lower(): str(f.value) for k, f in entry.fields_dict.items()}
        title = re.sub(r"[^a-z0-9]", "", str(fields.get("title", "")).lower())
        authors = [a for a in re.split(r"\s+and\s+", str(fields.get("author", "")).strip()) if a]
        papers.setdefault((title, authors[0].split(",")[0] if authors else ""), (fields, authors))
    for fields, authors in papers.values():
        counts.records += 1
        counts.titles += bool(fields.get("title"))
        counts.abstracts += bool(fields.get("abstract"))
        counts.authors += len(authors)
        # ids: the DOI, and an arXiv id named anywhere (eprint, journal, url)
        arxiv = set(ARXIV_ID.findall(" ".join(fields.values())))
        if fields.get("archiveprefix", "").lower() == "arxiv" and fields.get("eprint"):
            arxiv.add(fields["eprint"])
        counts.ids += bool(fields.get("doi")) + len(arxiv)
    return counts


DBLP_RECORD = re.compile(
    r"<(article|inproceedings|incollection|book|phdthesis|mastersthesis)\s[^>]*\bkey=\"([^\"]+)\""
)


def _count_dblp(text: str) -> Counts:
    """A DBLP XML file's publications (proceedings volumes and person pages are not papers),
    counted by pattern: titles, author slots, and ids (the DBLP key, a DOI in `ee`)."""
    counts = Counts()
    for match in DBLP_RECORD.finditer(text):
        end = text.find(f"</{match.group(1)}>", match.end())
        body = text[match.end() : end]
        counts.records += 1
        counts.titles += "<title>" in body or "<title " in body
        counts.authors += len(re.findall(r"<author[ >]", body))
        dois = {d.lower() for d in re.findall(r"<ee[^>]*>https?://doi\.org/([^<]+)</ee>", body)}
        counts.ids += 1 + len(dois)
    return counts


def count_stored(database: Path) -> Counts:
    """What the database holds."""
    counts = Counts()
    with sqlite3.connect(database) as db:
        counts.records = db.execute("SELECT COUNT(*) FROM papers").fetchone()[0]
        counts.unloadable = db.execute("SELECT COUNT(*) FROM rejects").fetchone()[0]
        counts.titles = db.execute(
            "SELECT COUNT(*) FROM papers WHERE title IS NOT NULL"
        ).fetchone()[0]
        counts.abstracts = db.execute(
            "SELECT COUNT(*) FROM papers WHERE abstract != ''"
        ).fetchone()[0]
        keys = db.execute("SELECT key FROM paper_keys").fetchall()
        counts.ids = sum(
            1 for (k,) in keys if k.startswith(ID_PREFIXES) and not k.startswith("pwc:")
        )
        counts.authors = db.execute("SELECT COUNT(*) FROM paper_authors").fetchone()[0]
        rows = db.execute(
            "SELECT repo_owner, repo_name FROM papers_with_code WHERE code_host = 'github.com'"
        )
        counts.repos = {(o.lower(), r.lower()) for o, r in rows}
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    files = extract.discover_all(args.paths).files
    totals: dict[str, list[Counts]] = {}
    for path in files:
        shape = extract.identify(path).format
        with tempfile.TemporaryDirectory() as scratch:
            database = Path(scratch) / "p.db"
            run(RunOptions(paths=(str(path),), database_url=f"sqlite:///{database}", workers=1))
            stored = count_stored(database)
        found = count_in(path, shape)
        pair = totals.setdefault(shape, [Counts(), Counts()])
        for total, one in zip(pair, (found, stored), strict=True):
            total.records += one.records
            total.titles += one.titles
            total.abstracts += one.abstracts
            total.ids += one.ids
            total.authors += one.authors
            total.unloadable += one.unloadable
            total.repos |= one.repos
        print(f"{path.name}: in {found.__dict__ | {'repos': len(found.repos)}}", file=sys.stderr)
        print(
            f"{'':>{len(path.name)}}  stored {stored.__dict__ | {'repos': len(stored.repos)}}",
            file=sys.stderr,
        )
    print(
        "| shape | files | records | titles | abstracts | ids | author slots | GitHub repos "
        "| without title or abstract (rejected) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for shape, (found, stored) in totals.items():
        cells = [
            f"{getattr(found, n)} / {getattr(stored, n)}"
            for n in ("records", "titles", "abstracts", "ids", "authors")
        ]
        count = sum(1 for p in files if extract.identify(p).format == shape)
        repos = f"{len(found.repos)} / {len(stored.repos)}"
        rejected = f"{found.unloadable} / {stored.unloadable}"
        print(f"| {shape} | {count} | {' | '.join(cells)} | {repos} | {rejected} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

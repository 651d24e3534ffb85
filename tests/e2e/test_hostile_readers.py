"""Hostile input in every reader: the metadata-service shapes, BibTeX, DBLP, the Papers with
Code archive and compressed files, read within the stated limits (etl/extract/limits.py).

A record past a limit is a reject, a file that cannot be read within them fails alone, and
whatever a reader, a decoder or a transform worker raises is that file's failure, never the
run's (no exit 70). Each hostile file is made here by a small generator; where the original
takes minutes or gigabytes it is scaled down, still showing the growth: memory is measured in
a subprocess under an address-space cap.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from etl.extract import bibtex
from etl.models import RunReport
from etl.pipeline import RunOptions, run
from tests.helpers import (
    ADDRESS_SPACE,
    etl,
    fetch,
    fetch_one,
    fresh_postgres_database,
    measured_run,
    rejects,
)

DEEP = 100_000
GOOD = [{"title": "A good paper", "abstract": "An abstract that loads whatever else fails."}]
DEPTH_REASON = "nested deeper than 100 levels (--max-depth)"
FIELD_REASON = "field 'x' is 2,000,000 characters; the limit is 1,048,576 (--max-field-size)"
VALUES_REASON = "record holds over 1,000,000 values (--max-values)"
# What a run that rejects or fails every hostile file holds at most, with its good file (the
# tagger's model among it): the bound the issue states for every case with default flags.
BOUND_KB = 300 * 1024


# The records of each metadata shape: (file name, how its records are written, a record).
def _arxiv(n: int) -> dict[str, object]:
    return {
        "id": f"2101.{n:05d}",
        "submitter": "A. Author",
        "versions": [{"version": "v1", "created": "Mon, 4 Jan 2021 00:00:00 GMT"}],
        "categories": "cs.LG",
        "title": f"arXiv paper {n}",
        "abstract": "An arXiv abstract.",
        "x": None,
    }


def _openalex(n: int) -> dict[str, object]:
    return {
        "id": f"https://openalex.org/W{n}",
        "title": f"OpenAlex work {n}",
        "authorships": [{"author": {"display_name": "Ada Lovelace"}}],
        "abstract_inverted_index": {"An": [0], "abstract.": [1]},
        "x": None,
    }


def _s2(n: int) -> dict[str, object]:
    return {"paperId": f"s2id{n}", "title": f"S2 paper {n}", "abstract": "S2 text.", "x": None}


def _crossref(n: int) -> dict[str, object]:
    return {
        "DOI": f"10.1000/x{n}",
        "title": [f"Crossref work {n}"],
        "container-title": ["Journal"],
        "issued": {"date-parts": [[2020]]},
        "x": None,
    }


def _openreview(n: int) -> dict[str, object]:
    return {
        "id": f"note{n}",
        "forum": f"note{n}",
        "invitation": "ICLR.cc/2024/Conference/-/Submission",
        "content": {"title": {"value": f"OpenReview note {n}"}, "abstract": {"value": "Text."}},
        "x": None,
    }


def _pwc_paper(n: int) -> dict[str, object]:
    return {
        "paper_url": f"https://paperswithcode.com/paper/p{n}",
        "arxiv_id": f"2102.{n:05d}",
        "title": f"PwC paper {n}",
        "abstract": "A PwC abstract.",
        "tasks": [],
        "x": None,
    }


def _pwc_link(n: int) -> dict[str, object]:
    return {
        "paper_url": f"https://paperswithcode.com/paper/l{n}",
        "paper_title": f"PwC linked paper {n}",
        "repo_url": f"https://github.com/owner/repo{n}",
        "is_official": True,
        "x": None,
    }


Wrap = Callable[[list[str]], str]
SHAPES: dict[str, tuple[Callable[[int], dict[str, object]], Wrap]] = {
    "arxiv.jsonl": (_arxiv, lambda rs: "".join(r + "\n" for r in rs)),
    "arxiv-array.json": (_arxiv, lambda rs: "[" + ",".join(rs) + "]"),
    "openalex-page.json": (_openalex, lambda rs: '{"meta": {}, "results": [' + ",".join(rs) + "]}"),
    "openalex.jsonl": (_openalex, lambda rs: "".join(r + "\n" for r in rs)),
    "s2-page.json": (_s2, lambda rs: '{"total": 3, "data": [' + ",".join(rs) + "]}"),
    "crossref-page.json": (
        _crossref,
        lambda rs: '{"message-type": "work-list", "message": {"items": [' + ",".join(rs) + "]}}",
    ),
    "openreview-notes.json": (_openreview, lambda rs: '{"notes": [' + ",".join(rs) + "]}"),
    "pwc-papers.json": (_pwc_paper, lambda rs: "[" + ",".join(rs) + "]"),
    "pwc-links.json": (_pwc_link, lambda rs: "[" + ",".join(rs) + "]"),
    "pwc-links.jsonl": (_pwc_link, lambda rs: "".join(r + "\n" for r in rs)),
}


def shape_file(folder: Path, name: str, *hostile: str) -> Path:
    """A file of one shape: a good record, a record for each `hostile` JSON text (its `x`),
    and another good record."""
    make, wrap = SHAPES[name]
    texts = [json.dumps(make(1))]
    texts += [
        json.dumps(make(n)).replace('"x": null', '"x": ' + x) for n, x in enumerate(hostile, 2)
    ]
    texts.append(json.dumps(make(len(hostile) + 2)))
    path = folder / name
    path.write_text(wrap(texts), "utf-8")
    return path


def good_file(folder: Path) -> Path:
    path = folder / "good.json"
    path.write_text(json.dumps(GOOD), "utf-8")
    return path


def titles(url: str) -> set[str]:
    return {str(t) for (t,) in fetch(url, "SELECT title FROM papers")}


# 4, 7, 10. Depth, values and field sizes in every shape: a reject, in bounded memory ------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_record_past_any_limit_in_any_shape_is_a_reject_in_bounded_memory(
    name: str, sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    deep = "[" * DEEP + "]" * DEEP  # 200 KB
    long = json.dumps("y" * 2_000_000)
    many = "[" + ",".join(["0"] * 1_200_000) + "]"  # 2.4 MB of values
    shape_file(folder, name, deep, long, many)
    status, peak_kb, output = measured_run(
        "run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path
    )
    assert status == 3, output
    assert "Traceback" not in output
    assert peak_kb < BOUND_KB, f"peak {peak_kb} KB"
    assert rejects(sqlite_url) == [
        (name, 2, DEPTH_REASON),
        (name, 3, FIELD_REASON),
        (name, 4, VALUES_REASON),
    ]
    assert len(titles(sqlite_url)) == 2  # the records on either side load
    assert (
        int(str(fetch_one(sqlite_url, "SELECT coalesce(max(length(extra)), 0) FROM papers")))
        < 1_000
    )


@pytest.mark.migrated
def test_a_deep_value_fails_no_run_on_either_backend(db_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    shape_file(folder, "arxiv.jsonl", "[" * DEEP + "]" * DEEP)
    shape_file(folder, "openalex-page.json", "[" * 3_000 + "]" * 3_000)  # failed encoding `extra`
    good_file(folder)
    result = etl("run", str(folder), "--db", db_url, "-q", "--workers", "2", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Error:" not in result.stderr
    assert rejects(db_url) == [
        ("arxiv.jsonl", 2, DEPTH_REASON),
        ("openalex-page.json", 2, DEPTH_REASON),
    ]
    assert "A good paper" in titles(db_url)
    assert fetch_one(db_url, "SELECT status FROM runs") == "partial"


@pytest.mark.slow
@pytest.mark.postgres
def test_a_deep_value_under_dask_is_a_reject_and_the_run_counts_what_committed(
    tmp_path: Path,
) -> None:
    pytest.importorskip("distributed")
    folder = tmp_path / "in"
    folder.mkdir()
    shape_file(folder, "arxiv.jsonl", "[" * DEEP + "]" * DEEP)
    good_file(folder)
    with fresh_postgres_database(migrated=True) as url:
        report = run(RunOptions(paths=(str(folder),), database_url=url, dask="local:1"))
        assert isinstance(report, RunReport)
        assert (report.status, report.sources_loaded, report.rejects) == ("partial", 2, 1)
        assert fetch(url, "SELECT status, sources_loaded FROM runs") == [("partial", 2)]
        assert rejects(url) == [("arxiv.jsonl", 2, DEPTH_REASON)]


@pytest.mark.slow
def test_an_openalex_work_with_millions_of_empty_authorships_is_a_reject(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    work = _openalex(1)
    del work["authorships"]
    many = '"authorships": [' + ",".join(["{}"] * 5_000_000) + "]"  # 15 MB, 15 KB compressed
    text = json.dumps(work).replace('"x": null', many)
    with gzip.open(folder / "works.json.gz", "wt", encoding="utf-8") as handle:
        handle.write('{"results": [' + text + ", " + json.dumps(_openalex(2)) + "]}")
    status, peak_kb, output = measured_run(
        "run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path
    )
    assert status == 3, output
    assert peak_kb < BOUND_KB, f"peak {peak_kb} KB"
    assert rejects(sqlite_url) == [("works.json.gz", 1, VALUES_REASON)]
    assert titles(sqlite_url) == {"OpenAlex work 2"}


# 5. Whatever a reader or decoder raises fails its file alone --------------------------------

DBLP_RECORD = '<dblp><article key="journals/x/A"><title>T.</title></article></dblp>\n'


@pytest.mark.parametrize(
    "codec",
    [
        "hex",
        *(
            pytest.param(codec, marks=pytest.mark.slow)
            for codec in ("base64", "rot13", "zlib_codec", "uu_codec", "undefined", "punycode")
        ),
    ],
)
@pytest.mark.migrated
def test_an_xml_declaration_naming_a_codec_that_is_no_charset_fails_its_file_alone(
    codec: str, sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    declaration = f'<?xml version="1.0" encoding="{codec}"?>\n'
    (folder / "list.json").write_text(declaration + DBLP_RECORD, "utf-8")
    (folder / "dblp.xml").write_text(declaration + DBLP_RECORD, "utf-8")
    good_file(folder)
    result = etl("run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Error:" not in result.stderr
    for name in ("list.json", "dblp.xml"):
        assert f"failed   {folder / name}:1: XML does not parse: Unsupported encoding" in (
            result.stdout
        )
    assert titles(sqlite_url) == {"A good paper"}


# Replaces a reader and the transform worker with ones that raise what a library may raise,
# for files named for it: the run must name that file as failed and load the others.
RAISING = """
import sys
import etl.extract as extract
import etl.parallel as parallel

read_json = extract.ALL_READERS["json"]
transform_batch = parallel.transform_batch
RAISED = {"lookup": LookupError("'hex' is not a text encoding"),
          "unicode": UnicodeError("undefined encoding"),
          "recursion": RecursionError("maximum recursion depth exceeded"),
          "library": ValueError("a library's own error")}

def raising_reader(source, encoding):
    for record in read_json(source, encoding):
        yield record
        for word, error in RAISED.items():
            if word in source.path:
                raise error

def raising_worker(batch, taxonomy):
    if taxonomy is None and any("memory" in item.source.path for item in batch):
        raise MemoryError()  # in a worker (the run itself passes its taxonomy)
    return transform_batch(batch, taxonomy)

extract.ALL_READERS["json"] = raising_reader
parallel.transform_batch = raising_worker  # the workers import this script too

if __name__ == "__main__":
    from etl.cli import main
    sys.exit(main())
"""


@pytest.mark.migrated
def test_any_exception_of_a_reader_or_a_worker_fails_its_file_alone(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    records = [{"title": f"Paper {n}", "abstract": f"Abstract {n}."} for n in range(1_200)]
    for word in ("lookup", "unicode", "recursion", "library"):
        (folder / f"{word}.json").write_text(json.dumps(records), "utf-8")
    lines = "".join(json.dumps(r) + "\n" for r in records)  # batches that reach the workers
    (folder / "memory.jsonl").write_text(lines, "utf-8")
    good_file(folder)
    script = tmp_path / "raising.py"
    script.write_text(RAISING, "utf-8")
    result = subprocess.run(
        [sys.executable, str(script), "run", str(folder), "--db", db_url, "-q", "--workers", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "ETL_DATABASE_URL"},
    )
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Error:" not in result.stderr and "Traceback" not in result.stderr
    failed = {
        Path(line.split(":")[0].removeprefix("failed").strip()).name: line
        for line in result.stdout.splitlines()
        if line.startswith("failed")
    }
    assert sorted(failed) == [
        "library.json",
        "lookup.json",
        "memory.jsonl",
        "recursion.json",
        "unicode.json",
    ]
    assert "cannot be decoded (LookupError: 'hex' is not a text encoding)" in failed["lookup.json"]
    assert "cannot be decoded (UnicodeError: undefined encoding)" in failed["unicode.json"]
    assert "nested too deeply to be read (RecursionError" in failed["recursion.json"]
    assert "its reader failed (ValueError: a library's own error)" in failed["library.json"]
    assert "ran out of memory while it was read (MemoryError)" in failed["memory.jsonl"]
    assert titles(db_url) == {"A good paper"}  # each failed file rolled back whole
    assert fetch_one(db_url, "SELECT sources_failed FROM runs") == 5


# 8. Text between BibTeX entries, one DBLP record, a paper's PwC links: bounded --------------


@pytest.mark.slow
def test_junk_after_a_bibtex_entry_is_read_past_in_bounded_memory(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    entry = (
        "@article{{{key},\n  title = {{{title}}},\n  author = {{Doe, Jane}},\n  year = 2020\n}}\n"
    )
    with gzip.open(folder / "refs.bib.gz", "wt", encoding="utf-8") as handle:  # 60 MB, 200 KB
        handle.write(entry.format(key="a1", title="Before the junk"))
        handle.write(("junk " * 19 + "\n") * 600_000)
        handle.write(entry.format(key="a2", title="After the junk"))
    status, peak_kb, output = measured_run(
        "run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path
    )
    assert status == 0, output
    assert peak_kb < BOUND_KB, f"peak {peak_kb} KB"
    assert titles(sqlite_url) == {"Before the junk", "After the junk"}


def test_the_text_a_bibtex_batch_holds_is_bounded_whatever_follows_an_entry(
    tmp_path: Path,
) -> None:
    path = tmp_path / "refs.bib"
    entry = "@article{a1,\n  title = {T},\n}\n"
    path.write_text(entry + ("junk line\n" * 1_000_000) + entry.replace("a1", "a2"), "utf-8")
    batches = list(bibtex._batches(_source(path, "bibtex"), "utf-8-sig"))
    held = max(len(text) for _, text in batches)  # type: ignore[misc]
    assert held <= bibtex.MAX_ENTRY_CHARS + 100, held  # 10 MB of junk lines: 200 KB kept


def _source(path: Path, fmt: str) -> object:
    from etl import extract

    source = extract.identify(path)
    assert source.format == fmt
    return source


@pytest.mark.slow
def test_a_dblp_record_of_millions_of_elements_is_a_reject_in_bounded_memory(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    record = '<article key="journals/x/{key}"><author>Jane Doe</author><title>{title}.</title>'
    with gzip.open(folder / "dblp.xml.gz", "wt", encoding="utf-8") as handle:  # 10 MB, 20 KB
        handle.write('<?xml version="1.0"?>\n<dblp>\n')
        handle.write(record.format(key="A", title="Before") + "</article>\n")
        handle.write(record.format(key="B", title="Many") + "<i/>" * 2_500_000 + "</article>\n")
        handle.write(record.format(key="C", title="After") + "</article>\n</dblp>\n")
    status, peak_kb, output = measured_run(
        "run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path
    )
    assert status == 3, output
    assert peak_kb < BOUND_KB, f"peak {peak_kb} KB"
    assert rejects(sqlite_url) == [("dblp.xml.gz", 2, VALUES_REASON)]
    assert titles(sqlite_url) == {"Before", "After"}


# Reads a file's records (extract only) in a child process under a cap; prints their count
# and the child's peak in KB. (A child of the test's own process would report the test's
# memory at the fork as its peak: Linux keeps it across exec.)
EXTRACT_PEAK = """
import resource, subprocess, sys
READ = (
    "import sys\\n"
    "from pathlib import Path\\n"
    "from etl import extract\\n"
    "items = extract.read_items(extract.identify(Path(sys.argv[1])))\\n"
    "print(sum(1 for item in items if extract.parse_item(item)))\\n"
)
limit = int(sys.argv[1])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
child = subprocess.run([sys.executable, "-c", READ, sys.argv[2]], preexec_fn=cap,
                       capture_output=True, text=True, timeout=600)
sys.stderr.write(child.stderr)
print(child.stdout.strip() or -1, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def extract_peak(path: Path) -> tuple[int, int]:
    """How many records the extract stage gives for a file, and its peak memory in KB."""
    result = subprocess.run(
        [sys.executable, "-c", EXTRACT_PEAK, str(ADDRESS_SPACE), str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    count, peak = result.stdout.split()
    assert int(count) >= 0, result.stderr[-2000:]
    return int(count), int(peak)


EXTRACT_BOUND_KB = 80 * 1024  # the extract stage alone, Python and its libraries included


@pytest.mark.slow
def test_pwc_links_listing_every_paper_twice_hold_one_paper_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "links-between-papers-and-code.json"
    with path.open("w", encoding="utf-8") as handle:  # 170 MB: each paper's links far apart
        handle.write("[")
        for listing in range(2):
            for n in range(40_000):
                record = _pwc_link(n)
                record.update(paper_title=f"Paper {n} " + "t" * 2_000, x=listing)
                handle.write(("," if listing or n else "") + json.dumps(record))
        handle.write("]")
    count, peak_kb = extract_peak(path)
    assert count == 40_000  # a record per paper, with both of its repositories
    assert peak_kb < EXTRACT_BOUND_KB, f"peak {peak_kb} KB"


@pytest.mark.slow
def test_a_pwc_links_line_with_a_60_mb_string_is_a_reject_never_held(tmp_path: Path) -> None:
    path = tmp_path / "links.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:  # 60 MB, 60 KB compressed
        handle.write(json.dumps(_pwc_link(1)) + "\n")
        handle.write(json.dumps(_pwc_link(2)).replace("null", '"' + "x" * 60_000_000 + '"'))
        handle.write("\n" + json.dumps(_pwc_link(3)) + "\n")
    count, peak_kb = extract_peak(path)
    assert count == 3  # two papers and the reject
    assert peak_kb < EXTRACT_BOUND_KB, f"peak {peak_kb} KB"


# 9. OpenAlex positions: counted before they are collected -----------------------------------


@pytest.mark.slow
def test_an_openalex_line_of_millions_of_positions_is_a_reject_never_parsed_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "works.jsonl"
    work = json.dumps(_openalex(1)).replace('"x": null', '"y": 1')
    index = '{"word": [' + ",".join(["0"] * 5_000_000) + "]}"  # 10 MB: within a record's size
    many = work.replace('{"An": [0], "abstract.": [1]}', index)
    path.write_text(many + "\n" + json.dumps(_openalex(2)) + "\n", "utf-8")
    count, peak_kb = extract_peak(path)
    assert count == 2
    assert peak_kb < EXTRACT_BOUND_KB, f"peak {peak_kb} KB"


def test_an_inverted_index_past_the_word_limit_is_refused_before_its_positions_are_placed() -> None:
    import tracemalloc

    from etl.extract.openalex import MAX_ABSTRACT_WORDS, rebuild_abstract

    index = {"word": [0] * 900_000}
    tracemalloc.start()
    try:
        abstract, problem = rebuild_abstract(index)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (abstract, problem) == (None, f"more than {MAX_ABSTRACT_WORDS:,} words")
    assert peak < 1_000_000, peak  # 900,000 placed positions would be 60 MB


# 10. Field and record sizes in the metadata-service readers, on both backends ---------------


@pytest.mark.slow
@pytest.mark.migrated
def test_a_field_past_the_limit_in_an_openalex_work_is_a_reject_not_stored(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    long = json.dumps("y" * 2_000_000)
    shape_file(folder, "openalex-page.json", long)
    shape_file(folder, "openalex.jsonl", long)
    wide = "{" + ",".join(f'"f{n}": "{"z" * 1_000_000}"' for n in range(17)) + "}"  # 17 MB
    shape_file(folder, "s2-page.json", wide)
    result = etl("run", str(folder), "--db", db_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    found = rejects(db_url)
    assert found[:2] == [
        ("openalex-page.json", 2, FIELD_REASON),
        ("openalex.jsonl", 2, FIELD_REASON),
    ]
    assert found[2][:2] == ("s2-page.json", 2)
    assert found[2][2].startswith("record is over 16,777,216 characters (about 17,0")
    longest = fetch_one(db_url, "SELECT coalesce(max(length(extra)), 0) FROM papers")
    assert int(str(longest)) < 1_000
    assert len(titles(db_url)) == 4  # the page and the lines hold the same works


# 11. What a compressed file may expand to, and how many rejects a file may have -------------


@pytest.mark.slow
@pytest.mark.migrated
def test_a_bz2_of_concatenated_streams_stops_at_its_expansion_bound(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    spaces = bz2.compress(b" " * 100_000_000)  # 113 bytes
    with (folder / "list.txt.bz2").open("wb") as handle:  # 1 GB of spaces in 1 KB
        handle.write(bz2.compress(b"ICML 2025 papers\n\nAn abstract.\n\n"))
        for _ in range(10):
            handle.write(spaces)
    good_file(folder)
    result = etl("run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    stored = (folder / "list.txt.bz2").stat().st_size
    assert (
        f"failed   {folder / 'list.txt.bz2'}: the compressed data expands past 67,108,864 "
        f"bytes, the most a file of {stored:,} bytes may hold"
    ) in result.stdout
    assert titles(sqlite_url) == {"A good paper"}


@pytest.mark.slow
@pytest.mark.migrated
def test_a_deflate_bomb_in_a_zip_member_and_a_gzip_inside_one_stop_at_their_bound(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    bomb = b"[" + b" " * 200_000_000 + b"]"
    with zipfile.ZipFile(folder / "lists.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("deflated.json", bomb)  # 200 MB in 200 KB
        archive.writestr(zipfile.ZipInfo("inner.json.gz"), gzip.compress(bomb), zipfile.ZIP_STORED)
        archive.writestr("good.json", json.dumps(GOOD))
    result = etl("run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    for member in ("deflated.json", "inner.json.gz"):
        assert f"lists.zip!/{member}: the compressed data expands past 67,108,864" in result.stdout
    assert titles(sqlite_url) == {"A good paper"}


@pytest.mark.migrated
def test_a_file_that_is_mostly_rejects_fails_with_its_first_rejects_kept(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    with gzip.open(folder / "bad.jsonl.gz", "wt", encoding="utf-8") as handle:  # 2.4 MB
        handle.write(json.dumps(GOOD[0]) + "\n")
        for n in range(20_480):
            handle.write(f"{{not json {n} " + "x" * 100 + "\n")
    lines = [json.dumps({"title": f"Paper {n}", "abstract": "Text."}) for n in range(3_000)]
    lines[::2] = ["{broken"] * 1_500  # half of them rejects: the file loads
    (folder / "half.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    result = etl("run", str(folder), "--db", db_url, "-q", "--workers", "2", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"failed   {folder / 'bad.jsonl.gz'}: " in result.stdout
    assert "are rejects (over --max-rejects 1,000, and more than its records)" in result.stdout
    kept = fetch(
        db_url,
        "SELECT count(*), min(position), max(position) FROM rejects "
        "WHERE source_path LIKE '%bad.jsonl.gz'",
    )
    assert kept == [(1_000, 2, 1_001)]  # its first rejects, to see why
    assert "half.jsonl: 1500 of 3000 records rejected" in result.stdout
    assert "A good paper" not in titles(db_url)  # the failed file left nothing else
    assert fetch_one(db_url, "SELECT rejects FROM runs") == 2_500


# Beyond the listed cases: more ways a small file could take the machine --------------------


@pytest.mark.slow
@pytest.mark.migrated
def test_a_zip_of_more_members_than_an_archive_may_hold_fails_alone(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    with zipfile.ZipFile(folder / "many.zip", "w") as archive:  # each member a source
        for n in range(10_001):
            archive.writestr(f"list{n}.json", "")
    good_file(folder)
    result = etl("run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout[-3000:] + result.stderr
    assert (
        f"failed   {folder / 'many.zip'}: a zip archive of 10,001 members (588,950 bytes of "
        "directory): more than an archive may hold (10,000 members, 4M of directory)"
    ) in result.stdout
    assert sum(line.startswith("failed") for line in result.stdout.splitlines()) == 1
    assert titles(sqlite_url) == {"A good paper"}


@pytest.mark.slow
@pytest.mark.migrated
def test_an_xz_stream_asking_for_a_huge_dictionary_is_refused(
    sqlite_url: str, tmp_path: Path
) -> None:
    import lzma
    import zlib

    folder = tmp_path / "in"
    folder.mkdir()
    data = bytearray(lzma.compress(json.dumps(GOOD).encode("utf-8")))
    assert (data[12], data[14]) == (0x02, 0x21)  # a block header of one LZMA2 filter
    data[16] = 37  # its dictionary: 1.5 GiB, which liblzma would allocate
    data[20:24] = zlib.crc32(bytes(data[12:20])).to_bytes(4, "little")
    (folder / "huge-dictionary.json.xz").write_bytes(bytes(data))
    (folder / "fine.json.xz").write_bytes(lzma.compress(json.dumps(GOOD).encode("utf-8")))
    result = etl("run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert (
        f"failed   {folder / 'huge-dictionary.json.xz'}: an xz stream whose dictionary needs "
        "more than 256M to decompress"
    ) in result.stdout
    assert titles(sqlite_url) == {"A good paper"}


@pytest.mark.slow
@pytest.mark.migrated
def test_csv_lines_of_millions_of_cells_are_read_past(sqlite_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "wide-header.csv").write_text("title," + "c," * 2_000_000 + "\nT,x\n", "utf-8")
    wide = "title,abstract\nFirst,One.\n" + "x" + "," * 2_000_000 + "\nLast,Two.\n"
    (folder / "wide-row.csv").write_text(wide, "utf-8")
    result = etl("run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert (
        f"failed   {folder / 'wide-header.csv'}:1: CSV header not read: {VALUES_REASON}"
    ) in result.stdout
    assert rejects(sqlite_url) == [("wide-row.csv", 3, VALUES_REASON)]
    assert titles(sqlite_url) == {"First", "Last"}


@pytest.mark.migrated
def test_a_json_record_keyed_by_an_id_past_the_field_limit_is_a_reject(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    long_id = "k" * 2_000_000
    records = {"a": {"title": "First"}, long_id: {"title": "Long id"}, "b": {"title": "Last"}}
    (folder / "by-id.json").write_text(json.dumps(records), "utf-8")
    result = etl("run", str(folder), "--db", sqlite_url, "-q", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    reason = "its key is 2,000,000 characters; the limit is 1,048,576 (--max-field-size)"
    assert rejects(sqlite_url) == [("by-id.json", 2, reason)]
    assert titles(sqlite_url) == {"First", "Last"}


@pytest.mark.slow
def test_an_xml_dtd_of_a_million_entity_declarations_is_not_read(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    with (folder / "dblp.xml").open("w", encoding="utf-8") as handle:  # 30 MB of declarations
        handle.write('<?xml version="1.0"?>\n<!DOCTYPE dblp [\n')
        for n in range(1_000_000):
            handle.write(f'<!ENTITY e{n} "value {n}">\n')
        handle.write(']>\n<dblp><article key="x/a"><title>&e5;.</title></article></dblp>\n')
    good_file(folder)
    status, peak_kb, output = measured_run(
        "run",
        str(folder),
        "--db",
        sqlite_url,
        "-q",
        "--workers",
        "1",
        "--source-format",
        "dblp",
        cwd=tmp_path,
    )
    assert status == 3, output
    assert peak_kb < BOUND_KB, f"peak {peak_kb} KB"
    assert "dblp.xml: over 1M before the root element" in output

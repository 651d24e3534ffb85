"""The metadata services' shapes (etl/extract/*): made-up records of each, compressed or not,
read by content, mapped field by field, and one paper across sources in a real database."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from etl import extract
from etl.cli import main
from etl.errors import SourceError
from etl.models import RawRecord, Reject
from etl.pipeline import RunOptions, run

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sources"
SHAPES = {
    "arxiv.jsonl": "arxiv",
    "openalex-page.json": "openalex",
    "openreview-notes.json": "openreview",
    "openreview-v1.jsonl": "openreview",
    "s2-search.json": "semantic-scholar",
    "s2-papers-dataset.jsonl": "semantic-scholar",
    "crossref-works.json": "crossref",
    "dblp.xml": "dblp",
    "dblp-latin1.xml": "dblp",
    "refs.bib": "bibtex",
    "papers-with-abstracts.json": "pwc-papers",
    "links-between-papers-and-code.json": "pwc-links",
}


def records(path: Path, **given: str) -> list[RawRecord | Reject]:
    return list(extract.read_records(extract.identify(path, **given)))  # type: ignore[arg-type]


def papers(path: Path) -> list[RawRecord]:
    found = records(path)
    return [r for r in found if isinstance(r, RawRecord)]


def fetch(database: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(database) as connection:
        return connection.execute(sql).fetchall()


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_recognised_by_content_whatever_the_name(name: str, tmp_path: Path) -> None:
    renamed = tmp_path / "download"  # no suffix at all
    shutil.copy(FIXTURES / name, renamed)
    assert extract.identify(renamed).format == SHAPES[name]
    assert [r.title for r in papers(renamed)] == [r.title for r in papers(FIXTURES / name)]


def test_arxiv_snapshot_authors_are_the_parsed_slots_and_ids_become_keys() -> None:
    first, second = papers(FIXTURES / "arxiv.jsonl")
    assert first.authors == ("Ada Lovelace", "Jürgen Möller", "Wei Zhang")  # LaTeX made text
    assert json.loads(first.extra or "{}")["author_affiliations"][0] == ["Analytical Engines Ltd"]
    assert ("arxiv", "1905.00001") in first.ids and ("doi", "10.5555/qgln.2019.7") in first.ids
    assert (first.venue, first.year, first.status) == ("arXiv", 2019, "preprint")
    assert (second.venue, second.year, second.status) == ("ICLR", 2020, None)  # journal-ref
    assert first.keywords == ("cs.LG", "stat.ML")


def test_openalex_abstract_is_rebuilt_in_word_order_with_authors_in_order() -> None:
    work, bare = papers(FIXTURES / "openalex-page.json")
    assert work.abstract == (
        "We study quiet gradients, a made-up update rules, and show that quiet gradients "
        "train faster."
    )
    assert work.authors == ("Ada Lovelace", "Jürgen Möller", "Wei Zhang")
    assert work.author_links == (("orcid", ("https://orcid.org/0000-0000-0000-0001", "", "")),)
    assert (work.venue, work.year) == ("NeurIPS", 2019)
    assert ("url", "https://arxiv.org/abs/1905.00001") in work.links
    assert work.references == (("openalex", "https://openalex.org/W9"),)  # edges, not extra
    assert work.cited_by_count == 3 and "referenced_works" not in json.loads(work.extra or "{}")
    assert bare.abstract is None and bare.status == "preprint"


def test_openalex_inverted_index_that_is_not_one_is_a_reject(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    work = {"id": "https://openalex.org/W1", "title": "T", "abstract_inverted_index": {"a": ["x"]}}
    path.write_text(json.dumps(work) + "\n" + json.dumps(work) + "\n")
    found = records(path)
    assert all(isinstance(r, Reject) and "abstract_inverted_index" in r.reason for r in found)


def test_openreview_v2_and_v1_notes_give_venue_status_and_links() -> None:
    found = records(FIXTURES / "openreview-notes.json")
    accepted, rejected, reply = found
    assert isinstance(accepted, RawRecord) and isinstance(rejected, RawRecord)
    assert (accepted.venue, accepted.year, accepted.status) == ("ICLR", 2020, "Poster")
    assert ("pdf", "https://openreview.net/pdf/0123abcd.pdf") in accepted.links
    assert accepted.ids == (("openreview", "Zx4Quiet01"),)
    assert rejected.status == "Reject" and rejected.authors == ()  # `Anonymous` is nobody
    assert isinstance(reply, Reject) and "reply" in reply.reason
    (v1,) = papers(FIXTURES / "openreview-v1.jsonl")
    assert (v1.venue, v1.year, v1.status) == ("ICLR", 2019, "Accept (Oral)")  # the decision


def test_semantic_scholar_ids_include_the_corpus_id_in_either_case() -> None:
    paper, _ = papers(FIXTURES / "s2-search.json")
    assert {k for k, _ in paper.ids} == {"s2", "s2corpus", "doi", "arxiv", "dblp"}
    assert json.loads(paper.extra or "{}")["externalIds"] == {"MAG": "999"}
    (dataset,) = papers(FIXTURES / "s2-papers-dataset.jsonl")
    assert ("s2corpus", "777888999") in dataset.ids and ("arxiv", "2101.00077") in dataset.ids


def test_crossref_jats_is_stripped_and_a_preprint_relation_is_an_id() -> None:
    work, committee = papers(FIXTURES / "crossref-works.json")
    assert work.title == "Quiet Gradients for Loud Networks"
    assert work.abstract == "We study quiet gradients & their friends.\nThey train faster."
    assert ("doi", "10.48550/arXiv.1905.00001") in work.ids
    assert ("pdf", "https://papers.example.org/qgln.pdf") in work.links
    assert (work.venue, work.year) == ("NeurIPS", 2019)
    assert committee.title == "Committees as Authors: A Case Study"
    assert committee.authors == ("The Invented Consortium",) and committee.year == 2020


def test_dblp_entities_records_and_what_is_not_a_paper() -> None:
    found = papers(FIXTURES / "dblp.xml")
    assert [r.title for r in found] == [
        "Quiet Gradients for Loud Networks",
        "Compilers That Dream of Sheep",
        "Preface",
        "Preface",
    ]  # the person page and the proceedings volume are not papers
    first = found[0]
    assert first.authors == ("Ada Lovelace", "Jürgen Möller", "Wei Zhang")  # homonym 0001 apart
    assert json.loads(first.extra or "{}")["dblp_homonyms"] == {"Wei Zhang": "0001"}
    assert ("dblp", "conf/nips/LovelaceMZ19") in first.ids and (
        "doi",
        "10.5555/qgln.2019.7",
    ) in first.ids
    assert found[1].status == "preprint" and ("arxiv", "2002.00002") in found[1].ids
    (latin,) = papers(FIXTURES / "dblp-latin1.xml")
    assert latin.authors == ("François Latin",)


def test_dblp_xxe_and_entity_bombs_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read me")
    path = tmp_path / "evil.xml"
    path.write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE dblp [<!ENTITY x SYSTEM "file://{secret}">]>\n'
        '<dblp><article key="a/b"><title>&x;</title><year>2020</year></article></dblp>\n'
    )
    with pytest.raises(SourceError, match="not defined"):
        records(path)


def test_bibtex_strings_authors_ids_rejects_and_volumes() -> None:
    found = records(FIXTURES / "refs.bib")
    sheep, broken, quiet = found  # the @proceedings volume is not a paper
    assert isinstance(sheep, RawRecord) and isinstance(quiet, RawRecord)
    assert sheep.venue == "ICLR" and sheep.year == 2020  # @string resolved
    assert sheep.authors == ("Grace Hopper", "Alan Turing")  # `and others` is nobody
    assert ("arxiv", "2002.00002v3") in sheep.ids
    assert ("note", "code: github.com/invented/sheep") in sheep.code_mentions
    assert isinstance(broken, Reject) and broken.position == 17
    assert quiet.authors == ("Ada Lovelace", "Jürgen Möller", "Wei Zhang")
    assert ("dblp", "journals/corr/abs-1905-00001") in quiet.ids


def test_bibtex_streams_a_large_file_in_batches(tmp_path: Path) -> None:
    path = tmp_path / "big.bib"
    entry = (
        '@misc{k%d, title = "Paper number %d", author = "A. Author", year = 2020, note = iclr}\n'
    )
    path.write_text('@string{iclr = "International Conference on Learning Representations"}\n')
    with path.open("a") as handle:
        for number in range(1, 1001):
            handle.write(entry % (number, number))
    found = papers(path)
    assert len(found) == 1000 and found[-1].position == 1001
    assert json.loads(found[-1].extra or "{}")["note"].startswith("International")  # carried over


def test_papers_with_code_lists_tasks_and_methods_and_groups_repositories() -> None:
    first, _ = papers(FIXTURES / "papers-with-abstracts.json")
    assert [(k, n) for k, n, _ in first.listed] == [
        ("task", "Image Classification"),
        ("task", "Invented Task Nobody Lists"),
        ("method", "Quiet Gradient"),
        ("method", "Dropout"),
    ]
    assert json.loads(first.listed[2][2] or "{}")["introduced_year"] == 2019
    links = {p.title: p for p in papers(FIXTURES / "links-between-papers-and-code.json")}
    quiet = links["Quiet Gradients for Loud Networks"]  # its two repositories, apart in the file
    assert ("official code", "https://github.com/invented/quiet-gradients") in quiet.links
    assert ("code", "https://gitlab.com/someone/quiet-gradients-tf") in quiet.links


@pytest.mark.parametrize(
    "compress",
    [
        gzip.compress,
        bz2.compress,
        lzma.compress,
        lambda data: zstandard.ZstdCompressor().compress(data),
    ],
    ids=["gzip", "bzip2", "xz", "zstd"],
)
def test_compressed_files_are_read_by_their_first_bytes(compress, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "works.bin"  # a name that says nothing
    path.write_bytes(compress((FIXTURES / "arxiv.jsonl").read_bytes()))
    source = extract.identify(path)
    assert source.format == "arxiv"
    assert [r.title for r in papers(path)] == [r.title for r in papers(FIXTURES / "arxiv.jsonl")]


def test_zip_members_are_sources_of_their_own(tmp_path: Path) -> None:
    archive = tmp_path / "dump.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.write(FIXTURES / "dblp.xml", "inner/dblp.xml")
        handle.writestr("refs.bib.gz", gzip.compress((FIXTURES / "refs.bib").read_bytes()))
        handle.writestr("README.pdf", b"%PDF-1.4")
        handle.writestr("__MACOSX/._dblp.xml", b"")
    found = extract.discover_all([str(archive)])
    names = sorted(str(p).split("!/")[1] for p in found.files)
    assert names == ["inner/dblp.xml", "refs.bib.gz"]
    assert [str(p).split("!/")[1] for p in found.unsupported] == ["README.pdf"]
    formats = {str(p).split("!/")[1]: extract.identify(p).format for p in found.files}
    assert formats == {"inner/dblp.xml": "dblp", "refs.bib.gz": "bibtex"}


def test_a_damaged_or_unreadable_compressed_file_fails_alone(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    shutil.copy(FIXTURES / "arxiv.jsonl", good)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress((FIXTURES / "arxiv.jsonl").read_bytes() * 50)[:300])
    tarred = tmp_path / "lists.tar.gz"
    with tarfile.open(tarred, "w:gz") as handle:
        handle.add(good, "good.jsonl")
    report = run(RunOptions(paths=(str(tmp_path),), database_url=f"sqlite:///{tmp_path}/p.db"))
    by_name = {Path(s.path).name: s for s in report.sources}
    assert by_name["good.jsonl"].status == "loaded"
    assert by_name["cut.jsonl.gz"].status == "failed"
    assert "compressed data is damaged" in (by_name["cut.jsonl.gz"].message or "")
    assert "tar archive" in (by_name["lists.tar.gz"].message or "")
    assert report.papers_inserted == 2


def test_bad_text_inside_a_compressed_file_is_named_by_its_offset(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"title": "fine"}\n{"title": "\xff"}\n'))
    with pytest.raises(SourceError, match=r"byte 0xff at offset 29 of the decompressed"):
        records(path)


def test_an_unrecognised_shape_names_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    path.write_text('<?xml version="1.0"?><rss><channel><item>x</item></channel></rss>')
    with pytest.raises(SourceError) as caught:
        extract.identify(path)
    message = str(caught.value)
    assert "not a shape etl reads" in message and "DBLP XML" in message
    assert "--source-format" in message


def test_source_format_reads_an_ambiguous_file_as_named(tmp_path: Path) -> None:
    # OpenReview notes exported without `forum` or `invitation`: nothing says OpenReview
    path = tmp_path / "notes.jsonl"
    note = {"id": "Ab12Cd34", "content": {"title": {"value": "T"}}}
    path.write_text(json.dumps(note) + "\n" + json.dumps(note) + "\n")
    assert extract.identify(path).format == "jsonl"
    assert all(isinstance(r, Reject) for r in records(path))  # no title field it knows
    forced = records(path, source_format="openreview")
    assert [r.title for r in forced if isinstance(r, RawRecord)] == ["T", "T"]
    database = tmp_path / "p.db"
    result = CliRunner().invoke(
        main, ["run", str(path), "--db", str(database), "--source-format", "bibtex", "-q"]
    )
    assert result.exit_code == 3  # the file fails alone: not BibTeX
    result = CliRunner().invoke(
        main, ["run", str(path), "--db", str(database), "--source-format", "nope"]
    )
    assert result.exit_code == 1 and "unknown --source-format 'nope'" in result.output


def test_one_paper_across_sources_has_a_sighting_each(tmp_path: Path) -> None:
    names = (
        "arxiv.jsonl",
        "openalex-page.json",
        "s2-search.json",
        "crossref-works.json",
        "dblp.xml",
        "refs.bib",
        "papers-with-abstracts.json",
        "links-between-papers-and-code.json",
        "openreview-notes.json",
        "openreview-v1.jsonl",
    )
    for name in names:
        shutil.copy(FIXTURES / name, tmp_path / name)
    database = tmp_path / "p.db"
    run(RunOptions(paths=(str(tmp_path),), database_url=f"sqlite:///{database}", workers=1))
    sightings = fetch(
        database,
        "SELECT p.title, COUNT(*) FROM papers p JOIN paper_sources s ON s.paper_pk = p.pk "
        "GROUP BY p.pk ORDER BY p.title",
    )
    counts = dict(sightings)  # type: ignore[arg-type]
    # arXiv, OpenAlex, S2, Crossref, DBLP, BibTeX, PwC papers and PwC links: one paper
    assert counts["Quiet Gradients for Loud Networks"] == 8
    # arXiv (journal-ref ICLR), OpenReview, DBLP's CoRR entry, BibTeX: one paper
    assert counts["Compilers That Dream of Sheep"] == 4
    assert counts["Lanterns for Sparse Rewards"] == 3  # OpenReview v1 and PwC (by its forum)
    prefaces = fetch(database, "SELECT COUNT(*) FROM papers WHERE title = 'Preface'")
    assert prefaces == [(2,)]  # same title, different authors: two papers
    venue = fetch(
        database, "SELECT venue, year FROM papers WHERE title = 'Quiet Gradients for Loud Networks'"
    )
    assert venue == [("NeurIPS", 2019)]  # the proceedings sighting, not the preprint's
    code = fetch(
        database,
        "SELECT code_url FROM papers_with_code WHERE title = 'Compilers That Dream of Sheep'",
    )
    assert code == [("https://github.com/invented/sheep",)]  # from the BibTeX note


def test_a_preprint_and_its_proceedings_version_with_other_abstracts_are_one_paper(
    tmp_path: Path,
) -> None:
    preprint = {
        "id": "2003.00003",
        "title": "Listening to Moths",
        "abstract": "A first version of the abstract, written for the preprint, about moths "
        "that listen to invented bats in an invented forest, with twenty-one words.",
        "authors_parsed": [["Darwin", "Charles", ""], ["Wallace", "Alfred", ""]],
        "versions": [{"version": "v1", "created": "Sun, 1 Mar 2020 10:00:00 GMT"}],
        "categories": "q-bio",
        "submitter": "Charles Darwin",
    }
    later = dict(preprint, id="2003.00003", abstract=preprint["abstract"] + " Revised.")
    other = dict(preprint, id="2003.00004", authors_parsed=[["Mendel", "Gregor", ""]])
    (tmp_path / "a.jsonl").write_text(json.dumps(preprint) + "\n" + json.dumps(later) + "\n")
    proceedings = {
        "DOI": "10.5555/moths",
        "title": ["Listening to Moths"],
        "author": [
            {"given": "Charles", "family": "Darwin"},
            {"given": "A. R.", "family": "Wallace"},
        ],
        "abstract": "<jats:p>The camera-ready abstract, rewritten for the proceedings, about "
        "moths that listen to bats, and longer than twenty words in all.</jats:p>",
        "issued": {"date-parts": [[2021]]},
        "container-title": ["Proceedings of an Invented Conference"],
    }
    (tmp_path / "b.json").write_text(json.dumps([proceedings]))
    (tmp_path / "c.jsonl").write_text(json.dumps(other) + "\n" + json.dumps(other) + "\n")
    database = tmp_path / "p.db"
    run(RunOptions(paths=(str(tmp_path),), database_url=f"sqlite:///{database}", workers=1))
    rows = fetch(
        database,
        "SELECT p.id, COUNT(*) FROM papers p JOIN paper_sources s ON s.paper_pk = p.pk "
        "GROUP BY p.pk ORDER BY COUNT(*) DESC",
    )
    # the preprint's two versions and the proceedings record: one paper; Mendel's (another
    # arXiv id, another first author) stays apart
    assert [count for _, count in rows] == [3, 2]


def test_listed_tasks_and_methods_are_told_apart_in_the_views(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "papers-with-abstracts.json", tmp_path / "p.json")
    database = tmp_path / "p.db"
    run(RunOptions(paths=(str(tmp_path / "p.json"),), database_url=f"sqlite:///{database}"))
    overview = fetch(
        database,
        "SELECT listed_tasks, listed_methods FROM paper_overview "
        "WHERE title = 'Quiet Gradients for Loud Networks'",
    )
    assert overview == [
        ("Image Classification; Invented Task Nobody Lists", "Quiet Gradient; Dropout")
    ]
    listed = fetch(
        database, "SELECT method, role FROM method_index WHERE found_by = 'source' ORDER BY method"
    )
    assert listed == [("Dropout", "listed"), ("Quiet Gradient", "listed")]
    tasks = fetch(
        database,
        "SELECT task, topic IS NOT NULL FROM task_index WHERE found_by = 'source' ORDER BY task",
    )
    assert tasks == [("Image Classification", 1), ("Invented Task Nobody Lists", 0)]
    detail = fetch(database, "SELECT detail FROM listed_terms WHERE name = 'Dropout'")
    assert json.loads(str(detail[0][0]))["introduced_year"] == 2014


@pytest.mark.slow
def test_a_big_compressed_file_streams_in_bounded_memory(tmp_path: Path) -> None:
    """40,000 records (40 MB of JSON) decompressed while read: memory stays small."""
    path = tmp_path / "big.jsonl.gz"
    line = {"id": "", "title": "", "abstract": "word " * 200, "authors_parsed": [["A", "B", ""]]}
    with gzip.open(path, "wt") as handle:
        for number in range(40_000):
            line["id"], line["title"] = f"2101.{number:05d}", f"Title {number}"
            handle.write(json.dumps(line) + "\n")
    # the peak of this process alone (VmHWM): ru_maxrss would keep the forking test process's
    code = (
        "import sys; from pathlib import Path; from etl import extract\n"
        "n = sum(1 for _ in extract.read_records(extract.identify(Path(sys.argv[1]))))\n"
        "status = Path('/proc/self/status').read_text().split('VmHWM:')[1].split()[0]\n"
        "print(n, status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    count, peak_kb = map(int, done.stdout.split())
    assert count == 40_000 and peak_kb < 150_000  # the file alone is 40 MB decompressed


@pytest.mark.parametrize(
    ("kind", "value", "key"),
    [
        ("doi", "https://doi.org/10.5555/ABC%2FD", "doi:10.5555/abc/d"),
        ("doi", "10.48550/arXiv.1905.00001", "arxiv:1905.00001"),  # arXiv's own DOI
        ("arxiv", "arXiv:1905.00001v3", "arxiv:1905.00001"),
        ("arxiv", "https://arxiv.org/pdf/hep-th/9901001v1.pdf", "arxiv:hep-th/9901001"),
        ("openalex", "https://openalex.org/W42", "openalex:W42"),
        ("dblp", "DBLP:conf/nips/X19", "dblp:conf/nips/X19"),
        ("s2corpus", "0042", "s2corpus:42"),
        ("pwc", "quiet-gradients", "pwc:quiet-gradients"),
        ("doi", "not a doi", None),
        ("s2", "abc", None),
    ],
)
def test_source_ids_become_identity_keys(kind: str, value: str, key: str | None) -> None:
    from etl.transform.ids import source_keys

    assert source_keys([(kind, value)]) == ([key] if key else [])


def test_bib_keys_match_first_authors_in_either_order_and_years_one_apart() -> None:
    from etl.transform.ids import bib_keys, content_key

    title = content_key("Listening to Moths")
    one = set(bib_keys(title, ["Wei Zhang", "B"], 2020))
    assert one & set(bib_keys(title, ["Zhang Wei"], 2021))
    assert one & set(bib_keys(title, ["W. Zhang 0001"], 2019))
    assert not one & set(bib_keys(title, ["Wei Zhang"], 2022))  # two years apart
    assert not one & set(bib_keys(title, ["Ada Lovelace"], 2020))
    assert bib_keys(title, ["Anonymous"], 2020) == [] and bib_keys(title, ["A"], None) == []


def test_a_zip_archive_loads_each_member_and_a_rerun_skips_them(tmp_path: Path) -> None:
    archive = tmp_path / "dump.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.write(FIXTURES / "arxiv.jsonl", "arxiv.jsonl")
        handle.writestr("dblp.xml.xz", lzma.compress((FIXTURES / "dblp.xml").read_bytes()))
    options = RunOptions(paths=(str(archive),), database_url=f"sqlite:///{tmp_path}/p.db")
    first = run(options)
    assert sorted((Path(s.path).name, s.status, s.records) for s in first.sources) == [
        ("arxiv.jsonl", "loaded", 2),
        ("dblp.xml.xz", "loaded", 4),
    ]
    stored = fetch(tmp_path / "p.db", "SELECT path, format FROM sources ORDER BY path")
    assert stored == [(f"{archive}!/arxiv.jsonl", "arxiv"), (f"{archive}!/dblp.xml.xz", "dblp")]
    again = run(options)
    assert {s.status for s in again.sources} == {"unchanged"}

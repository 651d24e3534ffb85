"""Extract stage: files in, RawRecord / Reject out (real files under tmp_path)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from etl.errors import SourceError, VenueTableError
from etl.extract import (
    discover,
    discover_all,
    guess_venue_year,
    identify,
    load_venues,
    read_records,
)
from etl.models import RawRecord, Reject
from tests.helpers import write_json


def records(path: Path, **overrides: object) -> list[RawRecord | Reject]:
    return list(read_records(identify(path, **overrides)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("ICML 2025 论文列表", ("ICML", 2025)),
        ("NeurIPS 2024 paper list", ("NeurIPS", 2024)),
        ("Accepted papers — ICLR 2025", ("ICLR", 2025)),
        ("2023 CVPR accepted papers", ("CVPR", 2023)),
        ("000_feea92aa1cd1892b", (None, None)),
    ],
)
def test_venue_and_year_come_from_headers_in_any_language(
    header: str, expected: tuple[object, object]
) -> None:
    assert guess_venue_year(header) == expected


def test_seed_lists_hold_19_abstracts_each_with_venue_and_line(seeds: Path) -> None:
    files, unsupported = discover([str(seeds)])
    assert len(files) == 2 and unsupported == []
    for path in files:
        source = identify(path)
        assert (source.format, source.venue, source.year) == ("text", "ICML", 2025)
        items = records(path)
        assert len(items) == 19
        assert all(isinstance(i, RawRecord) and i.abstract for i in items)
        assert items[0].position == 3  # line 1 header, line 2 blank
        assert len(source.checksum) == 64


def test_multi_line_abstracts_are_joined_and_positions_are_first_lines(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text(
        "NeurIPS 2024 paper list\n\nFirst abstract\ncontinues here.\n\n\nSecond one.\n", "utf-8"
    )
    items = records(path)
    assert [(i.position, i.abstract) for i in items] == [  # type: ignore[union-attr]
        (3, "First abstract continues here."),
        (7, "Second one."),
    ]
    assert items[0].venue == "NeurIPS" and items[0].year == 2024


def test_overrides_beat_the_header(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("ICML 2025 paper list\n\nAn abstract.\n", "utf-8")
    (item,) = records(path, venue="COLT", year=2020)
    assert (item.venue, item.year) == ("COLT", 2020)


def test_json_array_with_varied_field_names(tmp_path: Path) -> None:
    path = tmp_path / "iclr_2025.json"
    data = [
        {
            "Title": "A Paper",
            "abstract": "We propose X.",
            "authors": "Ada Lovelace; Alan Turing",
            "Code URL": "GitHub.com/owner/repo",
            "track": "oral",
            "novel_field": {"kept": True},
        },
        {
            "paper_title": "Only a title",
            "author_list": ["A. One", "B. Two"],
            "pdf": "https://x.org/p.pdf",
        },
    ]
    path.write_text(json.dumps(data), "utf-8")
    first, second = records(path)
    assert isinstance(first, RawRecord) and isinstance(second, RawRecord)
    assert (first.venue, first.year) == ("ICLR", 2025)  # from the file name, canonical
    assert first.title == "A Paper" and first.authors == ("Ada Lovelace", "Alan Turing")
    assert first.links == (("Code URL", "GitHub.com/owner/repo"),)
    assert first.status == "oral"
    assert json.loads(first.extra or "{}") == {"novel_field": {"kept": True}}
    assert second.abstract is None and second.title == "Only a title"
    assert second.authors == ("A. One", "B. Two")


def test_json_object_mapping_ids_to_records(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(
        json.dumps({"https://openreview.net/forum?id=abc": {"title": "T", "abstract": "A"}}),
        "utf-8",
    )
    (item,) = records(path)
    assert isinstance(item, RawRecord)
    assert item.source_id == "https://openreview.net/forum?id=abc"
    assert ("key", "https://openreview.net/forum?id=abc") in item.links


def test_json_lines_reject_a_broken_line_and_keep_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text(
        '{"title": "One", "abstract": "a"}\n{"title": broken\n\n{"abstract": "b"}\n[1, 2]\n',
        "utf-8",
    )
    items = records(path)
    kinds = [(type(i).__name__, i.position) for i in items]
    assert kinds == [("RawRecord", 1), ("Reject", 2), ("RawRecord", 4), ("Reject", 5)]
    broken = items[1]
    assert (
        isinstance(broken, Reject)
        and "invalid JSON" in broken.reason
        and broken.raw == '{"title": broken'
    )


def test_record_without_title_or_abstract_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text('{"authors": ["Nobody"]}\n', "utf-8")
    (item,) = records(path)
    assert isinstance(item, Reject) and "neither a title nor an abstract" in item.reason


def test_huge_abstract_is_rejected_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("ICML 2025 papers\n\n" + "word " * 40_000 + "\n\nA normal abstract.\n", "utf-8")
    big, normal = records(path)
    assert isinstance(big, Reject) and "limit is 100,000" in big.reason
    assert isinstance(normal, RawRecord)


def test_csv_with_authors_joined_by_commas(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text(
        'title,abstract,authors,github\n"T1","Abs, with comma","A One, B Two",https://github.com/o/r\n',
        "utf-8",
    )
    (item,) = records(path)
    assert isinstance(item, RawRecord)
    assert item.position == 2
    assert item.authors == ("A One", "B Two")
    assert item.links == (("github", "https://github.com/o/r"),)


def test_csv_without_title_or_abstract_column_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text("name_of_thing,count\nx,1\n", "utf-8")
    with pytest.raises(
        SourceError,
        match=r"papers.csv:1: CSV needs a title or abstract column; found columns: name_of_thing, count",
    ):
        records(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary file"),
        (
            "caf\u00e9 2025 list\n\nAbstract with caf\u00e9.\n".encode("latin-1"),
            "byte 0xe9 at offset 3",
        ),
    ],
)
def test_unreadable_files_are_named_with_the_reason(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(SourceError, match=message) as caught:
        identify(path)
    assert str(path) in str(caught.value)


def test_only_a_header_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("ICML 2025 paper list\n\n\n", "utf-8")
    with pytest.raises(SourceError, match="no abstracts after the header"):
        records(path)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_byte_order_marks_are_accepted(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "list.txt"
    path.write_bytes("ICLR 2024 论文列表\n\nAn abstract about naïve Bayes.\n".encode(encoding))
    (item,) = records(path)
    assert isinstance(item, RawRecord)
    assert item.abstract == "An abstract about naïve Bayes." and item.venue == "ICLR"


def test_folders_and_globs_expand_and_missing_paths_fail(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x", "utf-8")
    (tmp_path / "b.jsonl").write_text("{}", "utf-8")
    (tmp_path / "notes.bin").write_bytes(b"\x00")
    files, unsupported = discover([str(tmp_path)])
    assert [f.name for f in files] == ["a.txt", "b.jsonl"]
    assert [u.name for u in unsupported] == ["notes.bin"]
    files, _ = discover([str(tmp_path / "*.txt")])
    assert [f.name for f in files] == ["a.txt"]
    with pytest.raises(SourceError, match="no such file or folder"):
        discover([str(tmp_path / "missing.txt")])
    with pytest.raises(SourceError, match="no file matches"):
        discover([str(tmp_path / "*.csv")])


# Real-list shapes (issue 17), with made-up records.


@pytest.mark.parametrize(
    ("file", "venue_field", "expected"),
    [
        ("neurips_export.json", "NeurIPS 2024", ("NeurIPS", 2024, None)),  # record beats name
        ("export.json", "ICLR 2024 oral", ("ICLR", 2024, "oral")),  # the rest is a status
        ("export.json", "icml", ("ICML", None, None)),  # case never splits a venue
        ("iclr2018.json", None, ("ICLR", 2018, None)),  # a name naming a known venue
        ("nips2018.json", None, ("NeurIPS", 2018, None)),  # ... by another spelling
        ("r20k.json", None, (None, None, None)),  # a name naming none gives none
    ],
)
def test_venue_year_and_status_from_the_record_then_a_known_venue_in_the_file_name(
    tmp_path: Path, file: str, venue_field: str | None, expected: tuple[object, ...]
) -> None:
    record: dict[str, object] = {"title": "A Paper", "abstract": "About things."}
    if venue_field:
        record["venue"] = venue_field
    (item,) = records(write_json(tmp_path / file, [record]))
    assert isinstance(item, RawRecord)
    assert (item.venue, item.year, item.status) == expected


def test_user_venue_overrides_beat_the_record_and_a_venues_file_extends_the_table(
    tmp_path: Path,
) -> None:
    path = write_json(tmp_path / "x.json", [{"title": "T", "venue": "NeurIPS 2024"}])
    (item,) = records(path, venue="Mine", year=1999)
    assert isinstance(item, RawRecord) and (item.venue, item.year) == ("Mine", 1999)
    extra = tmp_path / "venues.toml"
    extra.write_text('[[venue]]\nname = "MLSys"\nspellings = ["SysML"]\n', "utf-8")
    table = load_venues(extra)
    assert table.names["sysml"] == "MLSys" and table.names["nips"] == "NeurIPS"
    extra.write_text('[[venue]]\nspellings = ["x"]\n', "utf-8")
    with pytest.raises(VenueTableError, match="venue 1 needs a `name`"):
        load_venues(extra)


def test_author_slots_are_kept_as_written_repeats_included(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "x.json",
        [{"title": "T", "author": "Ann Lee;Bo Chen and Cy Dee;Ann Lee;Bo Chen and Cy Dee"}],
    )
    (item,) = records(path)
    assert isinstance(item, RawRecord)
    assert item.authors == ("Ann Lee", "Bo Chen and Cy Dee", "Ann Lee", "Bo Chen and Cy Dee")


def test_per_author_homepages_are_author_links_and_a_single_homepage_is_the_papers(
    tmp_path: Path,
) -> None:
    path = write_json(
        tmp_path / "x.json",
        [
            {
                "title": "T",
                "author": "Ann Lee;Bo Chen;Cy Dee",
                "homepage": "https://ann.example.org/;;https://github.com/bochen",
            },
            {"title": "U", "author": "Ann Lee;Bo Chen", "homepage": "https://u.example.org"},
            {"title": "V", "author": "Ann Lee;Bo Chen", "homepage": "https://a.org;;https://c.org"},
        ],
    )
    first, second, third = records(path)
    assert isinstance(first, RawRecord) and isinstance(second, RawRecord)
    assert isinstance(third, RawRecord)
    assert first.author_links == (
        ("homepage", ("https://ann.example.org/", "", "https://github.com/bochen")),
    )
    assert first.links == () and "homepage" not in (first.extra or "")
    assert second.links == (("homepage", "https://u.example.org"),)
    assert third.author_links == () and third.links == ()  # not aligned: kept in extra only
    assert json.loads(third.extra or "{}")["homepage"] == "https://a.org;;https://c.org"


def test_fields_naming_a_code_host_are_searched_for_code_and_kept_in_extra(
    tmp_path: Path,
) -> None:
    bibtex = "@inproceedings{x, note = {code: github.com/lab/tool}}"
    (item,) = records(write_json(tmp_path / "x.json", [{"title": "T", "bibtex": bibtex}]))
    assert isinstance(item, RawRecord)
    assert item.code_mentions == (("bibtex", bibtex),)
    assert json.loads(item.extra or "{}")["bibtex"] == bibtex


def test_csv_record_whose_quote_runs_over_a_line_break_is_rejected_with_its_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "papers.csv"
    rows = [f'Title {n},"Abstract {n} about things."' for n in range(1, 21)]
    rows[4] = 'Title 5,"Abstract 5 never closes its quote.'  # swallows the next row
    path.write_text("title,abstract\n" + "\n".join(rows) + "\n", "utf-8")
    items = records(path)
    rejects = [item for item in items if isinstance(item, Reject)]
    assert [(r.position, r.reason.split(" (")[0]) for r in rejects] == [
        (6, "quoting runs over 2 lines")
    ]
    assert "Title 6" in rejects[0].raw  # the swallowed record is shown, not merged silently
    loaded = [item.title for item in items if isinstance(item, RawRecord)]
    assert len(loaded) == 18 and "Title 5" not in loaded and "Title 7" in loaded


def test_csv_whose_records_often_span_lines_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text('title,abstract\nA,"line one\nline two"\nB,"one\ntwo"\n', "utf-8")
    assert [item.title for item in records(path) if isinstance(item, RawRecord)] == ["A", "B"]


def test_folder_discovery_skips_and_lists_links_leaving_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("ICML 2025 papers\n\nA secret abstract.\n", "utf-8")
    folder = tmp_path / "lists"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("ICML 2025 papers\n\nAn abstract.\n", "utf-8")
    (folder / "leak.txt").symlink_to(outside)
    (folder / "inside.txt").symlink_to(folder / "a.txt")
    (folder / "away").symlink_to(tmp_path, target_is_directory=True)
    found = discover_all([str(folder)])
    assert [f.name for f in found.files] == ["a.txt"]  # the inside link is the same file
    assert sorted((p.name, why.split(" (")[0]) for p, why in found.skipped) == [
        ("away", "a link to a folder: not followed"),
        ("leak.txt", "a link leaving the folder"),
    ]
    named = discover_all([str(folder / "leak.txt")])  # named by the user: followed
    assert named.files == [outside.resolve()] and named.skipped == []

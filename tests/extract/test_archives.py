"""Hostile compressed inputs and zip archives: each fails (or is listed) alone, named, and the
rest of the run loads."""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zipfile
from pathlib import Path

import pytest
import zstandard

from etl import extract
from etl.errors import SourceError
from tests.helpers import fetch, load

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

GOOD = b'{"title": "A fine paper on graphs", "abstract": "We study graphs."}\n'


def _jsonl(count: int, prefix: str = "Paper") -> bytes:
    rows = (
        {"title": f"{prefix} number {i} on sparse graphs", "abstract": f"Abstract {i}."}
        for i in range(count)
    )
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _statuses(report) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    return {Path(s.path).name: (s.status, s.message or "") for s in report.sources}


def _patch(data: bytes, signature: bytes, offset: int, value: int) -> bytes:
    """Set one byte at `offset` past every occurrence of a zip header signature."""
    out = bytearray(data)
    at = out.find(signature)
    while at >= 0:
        out[at + offset] |= value
        at = out.find(signature, at + 1)
    return bytes(out)


def test_a_zip_member_with_a_bad_crc_fails_alone_and_named(db_url: str, tmp_path: Path) -> None:
    archive = tmp_path / "dump.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as handle:
        handle.writestr("good.jsonl", GOOD)
        handle.writestr("bad.jsonl", _jsonl(2, "Damaged"))
    data = archive.read_bytes()
    at = data.index(b"Damaged number 1")
    archive.write_bytes(data[:at] + b"X" + data[at + 1 :])  # the stored CRC no longer matches
    report = load(db_url, archive)
    by_name = _statuses(report)
    assert by_name["good.jsonl"][0] == "loaded"
    assert by_name["bad.jsonl"][0] == "failed"
    assert "CRC" in by_name["bad.jsonl"][1]
    assert report.papers_inserted == 1


def test_an_encrypted_zip_member_fails_alone_and_named(db_url: str, tmp_path: Path) -> None:
    archive = tmp_path / "dump.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as handle:
        handle.writestr("enc.jsonl", _jsonl(2, "Secret"))
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(GOOD)
    # Mark the member encrypted (flag bit 0) in its local and central headers.
    data = _patch(archive.read_bytes(), b"PK\x03\x04", 6, 0x1)
    archive.write_bytes(_patch(data, b"PK\x01\x02", 8, 0x1))
    report = load(db_url, archive, plain)
    by_name = _statuses(report)
    assert by_name["plain.jsonl"][0] == "loaded"
    assert by_name["enc.jsonl"][0] == "failed"
    assert "encrypted" in by_name["enc.jsonl"][1]


def test_a_zstd_file_cut_inside_a_frame_fails_as_damaged(db_url: str, tmp_path: Path) -> None:
    whole = zstandard.ZstdCompressor().compress(_jsonl(3000))
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    frames = tmp_path / "frames.jsonl.zst"  # two whole frames, one after the other
    frames.write_bytes(zstandard.ZstdCompressor().compress(GOOD) * 2)
    report = load(db_url, cut, frames)
    by_name = _statuses(report)
    assert by_name["frames.jsonl.zst"][0] == "loaded"
    assert by_name["cut.jsonl.zst"][0] == "failed"
    assert "truncated" in by_name["cut.jsonl.zst"][1]
    assert report.papers_inserted == 1


def test_a_cut_gzip_file_names_the_content_offset_reached(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    whole = gzip.compress(_jsonl(20000), compresslevel=1)
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(SourceError, match="damaged after") as caught:
        extract.fingerprint(path)
    reached = int(re.search(r"after ([\d,]+) bytes", str(caught.value)).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert reached > 100_000


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_zip_members_leading_out_or_named_twice_are_listed(db_url: str, tmp_path: Path) -> None:
    archive = tmp_path / "dump.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("../../escape.jsonl", _jsonl(1, "Escaping"))
        handle.writestr("twice.jsonl", _jsonl(1, "First"))
        handle.writestr("twice.jsonl", _jsonl(1, "Second"))
    found = extract.discover_all([str(archive)])
    skipped = {str(path).split("!/")[1]: why for path, why in found.skipped}
    assert "'..'" in skipped["../../escape.jsonl"]
    assert "2 members have this name" in skipped["twice.jsonl"]
    assert [str(p).split("!/")[1] for p in found.files] == ["twice.jsonl"]
    report = load(db_url, archive)
    assert report.papers_inserted == 1
    assert not (tmp_path.parent.parent / "escape.jsonl").exists()


def test_a_folder_named_with_a_bang_beside_a_file_is_a_folder(db_url: str, tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"not a zip")
    (tmp_path / "x!").mkdir()
    (tmp_path / "x!" / "data.jsonl").write_bytes(GOOD)
    report = load(db_url, tmp_path / "x!")
    assert [(s.status, s.message) for s in report.sources] == [("loaded", None)]
    assert report.papers_inserted == 1


def test_a_utf32_file_with_its_byte_order_mark_is_read_as_utf32(
    db_url: str, tmp_path: Path
) -> None:
    text = "title,abstract\nÉtude des graphes épars,Nous étudions les graphes.\n"
    plain = tmp_path / "u32.csv"
    plain.write_bytes(text.encode("utf-32"))  # little-endian, FF FE 00 00 first
    packed = tmp_path / "u32be.csv.gz"
    packed.write_bytes(gzip.compress(codecs.BOM_UTF32_BE + text.encode("utf-32-be")))
    report = load(db_url, plain, packed)
    assert {s.status for s in report.sources} == {"loaded"}
    titles = fetch(db_url, "SELECT title FROM papers")
    assert titles == [("Étude des graphes épars",)]


def test_an_archive_is_read_once_however_many_members_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding and fingerprinting every member reads the archive's central directory once
    (or twice), not once a member: that made an archive of N members cost N^2."""
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for number in range(300):
            handle.writestr(f"list{number:05}.jsonl", GOOD)
    reads = 0
    real = zipfile.ZipFile._RealGetContents  # type: ignore[attr-defined]

    def counted(self: zipfile.ZipFile) -> None:
        nonlocal reads
        reads += 1
        real(self)

    monkeypatch.setattr(zipfile.ZipFile, "_RealGetContents", counted)
    members = extract.discover_all([str(archive)]).files
    for member in members:
        extract.fingerprint(member)
    assert len(members) == 300
    assert reads <= 2, reads


def test_an_integer_past_64_bits_in_the_first_json_line_is_read_as_in_later_lines(
    db_url: str, tmp_path: Path
) -> None:
    rows = [
        {"paperId": "p1", "corpusId": 2**70, "title": "Counting with big numbers", "abstract": "x"},
        {"paperId": "p2", "corpusId": 2**70, "title": "Graphs with big numbers", "abstract": "y"},
    ]
    path = tmp_path / "s2.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = load(db_url, path)
    assert [(s.status, s.records) for s in report.sources] == [("loaded", 2)]
    assert report.papers_inserted == 2


def test_a_zip_member_is_gone_only_with_its_archive_or_its_entry(tmp_path: Path) -> None:
    archive = tmp_path / "lists.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("list.json", GOOD)
    (tmp_path / "x").write_bytes(b"not a zip")
    (tmp_path / "x!").mkdir()
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(b"PK\x03\x04 cut short")
    member, other = f"{archive}!/list.json", f"{archive}!/other.json"
    in_folder = f"{tmp_path}/x!/data.jsonl"  # a file in the folder `x!`, not a member of `x`
    assert extract.gone_reasons(
        [member, other, f"{damaged}!/a.json", in_folder, str(tmp_path / "gone.json")]
    ) == {
        other: "the archive no longer holds this member",
        in_folder: "the file is gone",
        str(tmp_path / "gone.json"): "the file is gone",
    }  # the damaged archive cannot say it lost a member: kept
    archive.unlink()
    assert extract.gone_reasons([member]) == {member: "the archive is gone"}


def test_a_prune_scope_is_the_file_folder_or_glob_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "d" / "deep").mkdir(parents=True)
    (tmp_path / "d" / "x.json").write_bytes(GOOD)
    (tmp_path / "d" / "lists.zip").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    d = f"{tmp_path}/d"
    known = [
        f"{d}/x.json",
        f"{d}/y.json",
        f"{d}/deep/c.csv",
        f"{d}/deep/more/e.json",
        f"{d}/.hidden.json",
        f"{d}/lists.zip!/m.json",
        f"{tmp_path}/dd/y.json",
    ]

    def covered(*paths: str) -> list[str]:
        test = extract.prune_scope(paths)
        return [path.removeprefix(f"{tmp_path}/") for path in known if test(path)]

    assert covered("d/x.json") == ["d/x.json"]
    assert covered("d/lists.zip") == ["d/lists.zip!/m.json"]
    assert covered("d/deep") == ["d/deep/c.csv", "d/deep/more/e.json"]
    assert covered("d/*.json") == ["d/x.json", "d/y.json"]
    assert covered("d/*") == ["d/x.json", "d/y.json", "d/lists.zip!/m.json"]  # its archive
    assert covered("d/**/*.json") == ["d/x.json", "d/y.json", "d/deep/more/e.json"]
    everything = ["d/x.json", "d/y.json", "d/deep/c.csv", "d/deep/more/e.json"]
    assert covered("d/**") == [*everything, "d/lists.zip!/m.json"]  # nothing hidden
    assert covered(f"{d}/deep/*", "d/y.json") == ["d/y.json", "d/deep/c.csv"]

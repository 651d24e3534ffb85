"""Property-based tests of the readers: arbitrary text never crashes and nothing is lost."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etl.errors import SourceError
from etl.extract import identify, read_records
from etl.models import RawRecord, Reject

line_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x00"
    ),
    min_size=1,
    max_size=80,
).filter(lambda t: t.strip() != "")
paragraphs = st.lists(st.lists(line_text, min_size=1, max_size=3), min_size=1, max_size=8)

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(paragraphs)
def test_every_paragraph_of_a_text_list_becomes_one_record(blocks: list[list[str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "list.txt"
        body = "\n\n".join("\n".join(lines) for lines in blocks)
        path.write_text("ICML 2025 paper list\n\n" + body + "\n", "utf-8")
        items = list(read_records(identify(path)))
    assert len(items) == len(blocks)
    for item, lines in zip(items, blocks, strict=True):
        assert isinstance(item, RawRecord)
        assert item.abstract == " ".join(line.strip() for line in lines)


printable = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)


@SETTINGS
@given(
    st.lists(
        st.one_of(
            st.dictionaries(st.text(max_size=10), st.text(max_size=30), max_size=4), printable
        ),
        min_size=1,
        max_size=10,
    )
)
def test_json_lines_of_anything_yield_a_record_or_a_reject_per_line(values: list[object]) -> None:
    lines = [json.dumps(v) if isinstance(v, dict) else str(v).replace("\n", " ") for v in values]
    lines = [line for line in lines if line.strip()]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.jsonl"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        try:
            items = list(read_records(identify(path)))
        except SourceError:
            assert not lines or all(not line.strip() for line in lines)
            return
    assert len(items) == len(lines)
    assert all(isinstance(i, RawRecord | Reject) for i in items)
    for item in items:
        if isinstance(item, Reject):
            assert item.reason and item.position >= 1


@SETTINGS
@given(st.binary(min_size=1, max_size=200))
def test_arbitrary_bytes_are_read_or_refused_with_a_named_reason(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "blob.txt"
        path.write_bytes(data)
        try:
            items = list(read_records(identify(path)))
        except SourceError as exc:
            assert str(path) in str(exc)
            return
    assert all(isinstance(i, RawRecord | Reject) for i in items)

"""The limits on one record (etl/extract/limits.py): data in, records or rejects out."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.extract import limits
from etl.extract.limits import LimitError, Limits, OverLimit
from etl.models import RawRecord, Reject

SMALL = Limits(depth=10, record_size=2_000, field_size=100)


def records(text: str | bytes, chosen: Limits = SMALL) -> list[tuple[str | None, Any]]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return list(limits.json_records(io.BytesIO(data), chosen))


@pytest.mark.parametrize(
    "deep",
    ["[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000],
)
def test_a_record_nested_100000_deep_is_read_past_and_the_next_one_kept(deep: str) -> None:
    found = records(f'[{{"title": "before"}}, {deep}, {{"title": "after"}}]', limits.DEFAULT)
    assert found[0] == (None, {"title": "before"})
    assert isinstance(found[1][1], OverLimit)
    assert found[1][1].reason == "nested deeper than 100 levels (--max-depth)"
    assert len(found[1][1].raw) <= limits.RAW_KEPT
    assert found[2] == (None, {"title": "after"})


def test_a_document_that_is_only_deep_nesting_gives_one_over_limit_record() -> None:
    n = 100_000
    assert [type(v) for _, v in records("[" * n + "]" * n, limits.DEFAULT)] == [OverLimit]
    members = records('{"a":' * n + "1" + "}" * n, limits.DEFAULT)
    assert [(k, type(v)) for k, v in members] == [("a", OverLimit)]


def test_depth_counts_from_the_document_so_each_shape_allows_the_same_nesting() -> None:
    ten = "[" * 8 + "]" * 8  # inside a record inside the array: 10 levels in all
    assert records(f'[{{"a": {ten}}}]')[0][1] == {"a": json.loads(ten)}
    assert isinstance(records(f'[{{"a": [{ten}]}}]')[0][1], OverLimit)
    by_id = records(f'{{"id1": {{"a": {ten}}}, "id2": [{{"a": 1}}, {{"a": 2}}]}}')
    assert by_id == [("id1", {"a": json.loads(ten)}), ("id2", {"a": 1}), ("id2", {"a": 2})]


def test_a_record_over_the_size_limit_is_rejected_with_its_size() -> None:
    big = json.dumps({"authors": ["x" * 50] * 100})  # about 5,000 characters
    found = records(f'[{{"title": "a"}}, {big}, {{"title": "b"}}]')
    over = found[1][1]
    assert isinstance(over, OverLimit) and "over 2,000 characters" in over.reason
    assert "--max-record-size" in over.reason and "about 5," in over.reason
    assert [v for _, v in found if not isinstance(v, OverLimit)] == [{"title": "a"}, {"title": "b"}]


def test_a_field_over_the_limit_is_named() -> None:
    found = records(json.dumps([{"title": "t", "abstract": "y" * 101}, {"title": "ok"}]))
    assert found[0][1].reason == (
        "field 'abstract' is 101 characters; the limit is 100 (--max-field-size)"
    )
    assert found[1][1] == {"title": "ok"}


def test_one_value_larger_than_a_record_fails_the_file_before_it_is_held() -> None:
    with pytest.raises(LimitError, match="one JSON value runs past 2,000 bytes"):
        records('[{"title": "' + "z" * 200_000 + '"}]')


def test_the_guard_counts_from_the_last_value_not_from_the_start() -> None:
    text = "[" + ", ".join(json.dumps({"title": "t" * 90}) for _ in range(5_000)) + "]"
    assert len(records(text)) == 5_000  # 500,000 characters, each record within 2,000


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.recursive(
            st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.text(max_size=8), inner, max_size=4)
            ),
            max_leaves=20,
        ),
        max_size=6,
    )
)
def test_records_within_the_limits_are_what_json_loads_reads(values: list[Any]) -> None:
    assert [v for _, v in records(json.dumps(values), limits.DEFAULT)] == values


def test_lines_longer_than_a_record_are_read_past_and_numbered() -> None:
    handle = io.StringIO("first\n" + "w" * 5_000 + "\nthird\r\nfourth")
    found = list(limits.lines(handle, SMALL))
    assert [(n, line) for n, line in found if isinstance(line, str)] == [
        (1, "first"),
        (3, "third"),
        (4, "fourth"),
    ]
    number, over = found[1]
    assert number == 2 and isinstance(over, OverLimit)
    assert "line is over 2,000 characters (read 5,000" in over.reason


def test_check_names_the_depth_or_field_past_the_limit() -> None:
    deep: Any = "x"
    for _ in range(11):
        deep = [deep]
    assert limits.check(deep, None, SMALL) == "nested deeper than 10 levels (--max-depth)"
    assert limits.check({"a": deep[0][0]}, None, SMALL) is None  # 10 levels
    assert "field 'b'" in str(limits.check({"b": "q" * 101}, None, SMALL))
    text = json.dumps({"b": "q" * 50})
    assert limits.check(json.loads(text), text, SMALL) is None


def test_nul_becomes_the_replacement_character_in_every_text_field() -> None:
    record = RawRecord(
        source="s.json",
        position=1,
        venue=None,
        year=None,
        title="A\x00B",
        authors=("C\x00",),
        links=(("code\x00", "https://x\x00"),),
        extra='{"k": "v\\u0000"}',
    )
    cleaned = limits.storable(record)
    assert isinstance(cleaned, RawRecord)
    assert cleaned.title == "A\ufffdB" and cleaned.authors == ("C\ufffd",)
    assert cleaned.links == (("code\ufffd", "https://x\ufffd"),)
    assert cleaned.extra == '{"k": "v\ufffd"}'  # the JSON text's escape too
    reject = limits.storable(Reject("s.json", 2, "why", "raw\x00"))
    assert isinstance(reject, Reject) and reject.raw == "raw\ufffd"
    untouched = RawRecord(source="s", position=1, venue=None, year=None, title="t")
    assert limits.storable(untouched) is untouched

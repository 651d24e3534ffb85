"""The transform in two phases: each record read on its own, then the batch finished together.
A paper's bundle never depends on the batch it comes in, nor on its place in it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.generate import generate
from etl.extract import identify, read_records
from etl.models import RawRecord
from etl.transform import load_taxonomy, transform, transform_records
from etl.transform.clean import clean_text
from etl.transform.tagger import batch_rows, load_model, text_features

GOLD = Path(__file__).resolve().parents[1] / "gold"


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[RawRecord]:
    """Generated rich records, the made-up gold abstracts with titles, and records with little
    or no text (a paper with no word the tagger knows, one with no text at all)."""
    folder = tmp_path_factory.mktemp("batches")
    [path] = generate(420, folder / "records.jsonl", seed=3)
    lines = []
    for name in ("seeds.jsonl", "unseen.jsonl", "fresh.jsonl"):
        for line in (GOLD / name).read_text("utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                lines.append({k: record[k] for k in ("id", "title", "abstract") if k in record})
    lines += [
        {"id": "x1", "title": "Ünïcödé İstanbul Σίσυφος", "abstract": "Zzzq qqqz."},
        {"id": "x2", "title": "", "abstract": ""},
        {"id": "x3", "title": "Only a title about graph neural networks"},
    ]
    extra = folder / "extra.jsonl"
    extra.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    found = [r for p in (path, extra) for r in read_records(identify(p))]
    raw = [r for r in found if isinstance(r, RawRecord)]
    assert len(raw) >= 480
    return raw


def in_batches(records: list[RawRecord], size: int, tagger: str = "model") -> list[object]:
    """Every record's bundle, transformed `size` records at a time."""
    taxonomy = load_taxonomy(tagger=tagger)
    return [
        bundle
        for start in range(0, len(records), size)
        for bundle in transform_records(records[start : start + size], taxonomy)
    ]


@pytest.mark.parametrize("tagger", ["model", "rules"])
def test_batches_of_1_7_and_500_give_identical_bundles(
    records: list[RawRecord], tagger: str
) -> None:
    one = in_batches(records, 1, tagger)
    assert in_batches(records, 7, tagger) == one
    assert in_batches(records, 500, tagger) == one
    # the same records in another order: each paper's bundle is its own
    assert in_batches(records[::-1], 500, tagger) == one[::-1]
    taxonomy = load_taxonomy(tagger=tagger)
    assert [transform(r, taxonomy) for r in records[:20]] == one[:20]
    assert any(bundle.topics for bundle in one)  # type: ignore[attr-defined]


def test_a_batch_holding_papers_without_words_scores_each_paper_alone(
    records: list[RawRecord],
) -> None:
    """Papers the tagger finds no feature in (nothing to sum) beside papers it does."""
    empty = dataclasses.replace(records[0], title=None, abstract="", position=999_001)
    unknown = dataclasses.replace(records[0], title="Qzx", abstract="Vvq zzq.", position=999_002)
    taxonomy = load_taxonomy()
    batch = [empty, records[0], unknown, records[1], empty]
    assert transform_records(batch, taxonomy) == [transform(r, taxonomy) for r in batch]
    assert transform_records([], taxonomy) == []


def test_the_batch_finds_each_paper_s_features_as_the_feature_strings_do(
    records: list[RawRecord],
) -> None:
    """The tagger's numeric features (word ids, rows found in arrays) are the rows of the
    vocabulary's feature strings, which the model was trained on."""
    model = load_model()
    assert model is not None
    texts = [
        (clean_text(r.abstract or ""), clean_text(r.title) if r.title else None) for r in records
    ]
    words = [(model.features.ids(a), model.features.ids(t or "")) for a, t in texts]
    rows, counts = batch_rows(model.features, words)
    assert counts.sum() == len(rows)
    starts = np.cumsum(counts) - counts
    for k, (abstract, title) in enumerate(texts):
        features = text_features(title, abstract)
        expected = {model.vocabulary[f] for f in features if f in model.vocabulary}
        got = rows[starts[k] : starts[k] + counts[k]].tolist()
        assert len(got) == len(set(got)) and set(got) == expected
        topic, task = model.scores(text_features(title, abstract))
        batch_topic, batch_task = model.batch_scores(words[k : k + 1])
        assert np.array_equal(batch_topic[0], topic) and np.array_equal(batch_task[0], task)

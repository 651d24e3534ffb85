"""The learned topic and task tagger: the packaged model, how it combines with the rules, and
how a user's own taxonomy falls back to the rules for labels the model never saw."""

from __future__ import annotations

import json
import pickle
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from etl.cli import main
from etl.errors import TaxonomyError
from etl.transform import load_taxonomy
from etl.transform.tagger import load_model, select
from etl.transform.topics import assign_tasks, assign_topics, topics_and_tasks

DETECTOR = (
    "Anchor-Free Object Detection in Real Time",
    "We propose a new one-stage object detector that localizes objects with anchor-free "
    "heads. On MS COCO our detector improves box AP over strong detection baselines while "
    "running in real time.",
)
BEES = (
    "Listening to honeybee colonies",
    "Honeybee colony collapse threatens pollination. We record the sounds of each honeybee "
    "colony in an apiary and learn when a honeybee colony is about to swarm.",
)
OWN_TAXONOMY = """
[[topic]]
slug = "nature"
name = "Nature"

[[topic]]
slug = "object-detection"
name = "Object detection"
parent = "nature"
terms = ["object detection", "detector"]

[[topic]]
slug = "beekeeping"
name = "Beekeeping"
parent = "nature"
terms = ["honeybee colony", "apiary"]
"""


def test_the_package_ships_a_model_with_its_provenance_within_ten_megabytes() -> None:
    model = load_model()
    assert model is not None
    assert model.provenance["trained_by"] == "tools/train_tagger.py"
    assert int(model.provenance["abstracts"]) >= 2000  # type: ignore[call-overload]
    folder = resources.files("etl.data").joinpath("tagger")
    size = sum(folder.joinpath(name).stat().st_size for name in ("model.npz", "model.json"))
    assert size <= 10 * 1024 * 1024
    meta = json.loads(folder.joinpath("model.json").read_text("utf-8"))
    assert set(meta["topic_labels"]) <= load_taxonomy().leaves


def test_the_model_reads_an_obvious_abstract_as_a_reader_would() -> None:
    title, abstract = DETECTOR
    topics, tasks = topics_and_tasks(abstract, load_taxonomy(), title)
    assert topics[0].slug == "object-detection"
    assert tasks[0].name == "Object Detection"
    assert 0.0 < topics[0].score <= 1.0  # a probability, with the rules' terms as evidence
    assert "object detection" in topics[0].evidence


def test_rules_tagger_gives_exactly_the_rules_output() -> None:
    title, abstract = DETECTOR
    rules = load_taxonomy(tagger="rules")
    assert rules.tagger == "rules"
    got = topics_and_tasks(abstract, rules, title)
    assert got == (assign_topics(abstract, rules, title), assign_tasks(abstract, rules, title))


def test_a_leaf_the_model_never_saw_is_ranked_by_the_rules(tmp_path: Path) -> None:
    path = tmp_path / "own.toml"
    path.write_text(OWN_TAXONOMY, "utf-8")
    own = load_taxonomy(path)
    assert own.tagger == "model"
    title, abstract = BEES
    topics, _ = topics_and_tasks(abstract, own, title)
    assert [t.slug for t in topics] == ["beekeeping"]
    # a leaf the model knows still gets the model's reading, and only leaves of this taxonomy
    title, abstract = DETECTOR
    topics, _ = topics_and_tasks(abstract, own, title)
    assert {t.slug for t in topics} <= own.leaves
    assert topics[0].slug == "object-detection"


def test_every_paper_gets_a_topic_and_never_more_than_three() -> None:
    taxonomy = load_taxonomy()
    topics, _ = topics_and_tasks("A short note.", taxonomy, None)
    assert 1 <= len(topics) <= 3


def test_selection_keeps_the_best_then_those_close_to_it() -> None:
    scored = {"a": 0.9, "b": 0.5, "c": 0.2, "d": 0.6, "e": 0.1}
    assert select(scored, 0.3, 0.5) == [("a", 0.9), ("d", 0.6), ("b", 0.5)]
    assert select(scored, 0.3, 0.6) == [("a", 0.9), ("d", 0.6)]
    assert select({"a": 0.2}, 0.3, 0.5) == []
    assert select({"a": 0.2}, 0.3, 0.5, first=0.0) == [("a", 0.2)]
    assert select({}, 0.0, 0.5, first=0.0) == []


def test_an_unknown_tagger_is_refused() -> None:
    with pytest.raises(TaxonomyError, match="unknown tagger"):
        load_taxonomy(tagger="oracle")


def test_the_taxonomy_with_its_model_survives_the_trip_to_a_worker() -> None:
    taxonomy = load_taxonomy()
    copy = pickle.loads(pickle.dumps(taxonomy))
    assert copy == taxonomy
    title, abstract = DETECTOR
    assert topics_and_tasks(abstract, copy, title) == topics_and_tasks(abstract, taxonomy, title)


@pytest.mark.parametrize("tagger", ["model", "rules"])
def test_eval_reports_either_tagger(tagger: str) -> None:
    gold = Path(__file__).parents[1] / "gold" / "fresh.jsonl"
    result = CliRunner().invoke(main, ["eval", str(gold), "--tagger", tagger, "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {row["field"]: row for row in json.loads(result.output)}
    assert rows["topics"]["gold"] > 0 and rows["topics"]["predicted"] > 0

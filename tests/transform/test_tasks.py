"""Tasks: the taxonomy's [[task]] tables, the tasks a paper addresses, and their rows and views
on both backends, through real loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.errors import TaxonomyError
from etl.transform.topics import MAX_TASKS, assign_tasks, build_taxonomy, load_taxonomy
from tests.helpers import fetch, load

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

TAXONOMY = """
[[topic]]
slug = "vision"
name = "Vision"

[[topic]]
slug = "captions"
name = "Captioning"
parent = "vision"
terms = ["caption"]

[[topic]]
slug = "detection"
name = "Detection"
parent = "vision"
terms = ["detector"]

[[task]]
name = "Image Captioning"
topic = "captions"

[[task]]
name = "Object Detection"
topic = "detection"
terms = ["object detector"]

[[task]]
name = "Pedestrian Detection"
topic = "detection"
"""

PAPERS = [
    {
        "title": "Kestrel: captions for every image",
        "abstract": "We propose Kestrel for image captioning. It needs no object detector.",
        "github": "https://github.com/made-up/kestrel",
    },
    {
        "title": "Heron",
        "abstract": "We present Heron, a pedestrian detection model that also improves "
        "object detection on crowded streets.",
    },
    {
        "title": "Plover",
        "abstract": "We propose Plover for object detection in aerial images.",
        "github": "https://github.com/made-up/plover",
    },
]


@pytest.fixture
def taxonomy_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(TAXONOMY, "utf-8")
    return path


@pytest.fixture
def papers_file(tmp_path: Path) -> Path:
    path = tmp_path / "conf2030.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), "utf-8")
    return path


def test_a_task_is_named_where_it_counts_and_not_where_it_is_negated(taxonomy_file: Path) -> None:
    taxonomy = load_taxonomy(taxonomy_file)
    hits = assign_tasks(PAPERS[0]["abstract"], taxonomy, title=PAPERS[0]["title"])
    assert [(h.name, h.evidence) for h in hits] == [("Image Captioning", ("Image Captioning",))]
    hits = assign_tasks(PAPERS[1]["abstract"], taxonomy)
    assert [h.name for h in hits] == ["Pedestrian Detection", "Object Detection"]
    # "pedestrian detection" is one task, not also "detection" of something
    assert (
        assign_tasks("Pedestrian detection at night.", taxonomy)[0].name == "Pedestrian Detection"
    )
    assert assign_tasks("Detection of birds.", taxonomy) == ()
    # plural and case variants of a name, and its terms, name the task
    assert [h.name for h in assign_tasks("Better object detectors.", taxonomy)] == [
        "Object Detection"
    ]


def test_the_longest_task_name_wins() -> None:
    taxonomy = build_taxonomy(
        [{"slug": "det", "name": "Detection", "terms": ["detector"]}],
        tasks=[
            {"name": "Object Detection", "topic": "det"},
            {"name": "Small Object Detection", "topic": "det"},
        ],
    )
    hits = assign_tasks("We propose Wren for small object detection.", taxonomy)
    assert [(h.name, h.score) for h in hits] == [("Small Object Detection", 3.0)]
    hits = assign_tasks("We propose Wren for object detection.", taxonomy)
    assert [h.name for h in hits] == ["Object Detection"]


def test_what_does_a_task_names_the_task() -> None:
    taxonomy = build_taxonomy(
        [{"slug": "det", "name": "Detection"}],
        tasks=[
            {"name": "Pedestrian Detection", "topic": "det"},
            {"name": "Detection", "topic": "det"},
            {"name": "Image Classification", "topic": "det"},
        ],
    )
    hits = assign_tasks("Pedestrian detectors fail at night.", taxonomy)
    assert [(h.name, h.evidence) for h in hits] == [
        ("Pedestrian Detection", ("Pedestrian detector",))
    ]
    assert [h.name for h in assign_tasks("We attack image classifiers.", taxonomy)] == [
        "Image Classification"
    ]
    # a name of one word is not varied: "detector" alone names no task
    assert assign_tasks("Our detector is fast.", taxonomy) == ()


def test_results_on_a_standard_dataset_are_weaker_evidence_of_its_task() -> None:
    taxonomy = build_taxonomy(
        [{"slug": "nlp", "name": "NLP"}],
        tasks=[
            {"name": "Question Answering", "topic": "nlp", "datasets": ["SQuAD"]},
            {"name": "Natural Language Inference", "topic": "nlp", "datasets": ["MNLI"]},
            {"name": "Text Summarization", "topic": "nlp"},
        ],
    )
    text = "We propose Wren, a sparse attention. Results on SQuAD and MNLI show gains."
    hits = assign_tasks(text, taxonomy)
    assert [(h.name, h.evidence) for h in hits] == [
        ("Question Answering", ("SQuAD",)),
        ("Natural Language Inference", ("MNLI",)),
    ]
    # a task the paper names outweighs one it is only tested on
    hits = assign_tasks("We propose Wren for text summarization. Results on SQuAD.", taxonomy)
    assert [h.name for h in hits] == ["Text Summarization"]


def test_a_task_only_given_as_an_example_is_not_addressed(taxonomy_file: Path) -> None:
    taxonomy = load_taxonomy(taxonomy_file)
    text = "Backbones help many tasks, such as image captioning."
    assert assign_tasks(text, taxonomy) == ()
    # what the paper evaluates on, it addresses
    text = "Experiments on image captioning show gains."
    assert [h.name for h in assign_tasks(text, taxonomy)] == ["Image Captioning"]


def test_the_packaged_tasks_sit_under_taxonomy_topics_and_are_attributed() -> None:
    taxonomy = load_taxonomy()
    slugs = {t.slug for t in taxonomy.topics}
    assert len(taxonomy.tasks) > 500
    assert all(t.topic in slugs for t in taxonomy.tasks)
    names = {t.name for t in taxonomy.tasks}
    assert {"Object Detection", "Machine Translation", "Named Entity Recognition"} <= names
    # generic words, dataset names and things rather than tasks were left out
    assert not names & {"Segmentation", "Retrieval", "GSM8K", "Large Language Model"}
    header = (Path(__file__).parents[2] / "etl" / "data" / "tasks.toml").read_text("utf-8")
    assert "Papers with Code" in header and "CC BY-SA 4.0" in header
    by_name = {t.name: t for t in taxonomy.tasks}
    assert by_name["Named Entity Recognition"].topic == "information-extraction"
    assert "NER" in by_name["Named Entity Recognition"].terms


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ("[[task]]\ntopic = 'detection'\n", "task #1 needs a name"),
        ("[[task]]\nname = 'X'\ntopic = 'nowhere'\n", "unknown topic 'nowhere'"),
        (
            "[[task]]\nname = 'X'\ntopic = 'detection'\n[[task]]\nname = 'x'\ntopic = 'detection'\n",
            "'x' is empty or defined twice",
        ),
        ("[[task]]\nname = 'X'\ntopic = 'detection'\nterms = 'y'\n", "terms must be a list"),
        ("[[task]]\nname = 'X'\ntopic = 'detection'\ndatasets = 'y'\n", "datasets must be a list"),
    ],
)
def test_bad_task_tables_are_reported(tmp_path: Path, tasks: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(TAXONOMY.split("[[task]]")[0] + tasks, "utf-8")
    with pytest.raises(TaxonomyError, match=message) as error:
        load_taxonomy(path)
    assert str(path) in str(error.value)


def test_a_taxonomy_without_tasks_finds_none() -> None:
    taxonomy = build_taxonomy([{"slug": "a", "name": "A", "terms": ["object detection"]}])
    assert assign_tasks("We propose a method for object detection.", taxonomy) == ()


def test_tasks_and_paper_tasks_are_loaded_with_their_views(
    db_url: str, taxonomy_file: Path, papers_file: Path
) -> None:
    load(db_url, papers_file, taxonomy=str(taxonomy_file))
    assert fetch(db_url, "SELECT name, topic_slug, terms FROM tasks ORDER BY name") == [
        ("Image Captioning", "captions", "[]"),
        ("Object Detection", "detection", '["object detector"]'),
        ("Pedestrian Detection", "detection", "[]"),
    ]
    rows = fetch(
        db_url,
        "SELECT p.title, pt.task_name, pt.evidence FROM paper_tasks AS pt "
        "JOIN papers AS p ON p.pk = pt.paper_pk ORDER BY p.title, pt.task_name",
    )
    assert rows == [
        ("Heron", "Object Detection", "Object Detection"),
        ("Heron", "Pedestrian Detection", "Pedestrian Detection"),
        ("Kestrel: captions for every image", "Image Captioning", "Image Captioning"),
        ("Plover", "Object Detection", "Object Detection"),
    ]
    index = fetch(
        db_url,
        "SELECT task, topic, papers, papers_with_code, share_with_code FROM task_index "
        "ORDER BY task",
    )
    assert [(t, topic, n, c, float(share)) for t, topic, n, c, share in index] == [  # type: ignore[arg-type]
        ("Image Captioning", "Captioning", 1, 1, 1.0),
        ("Object Detection", "Detection", 2, 1, 0.5),
        ("Pedestrian Detection", "Detection", 1, 0, 0.0),
    ]
    overview = fetch(db_url, "SELECT title, tasks FROM paper_overview ORDER BY title")
    assert overview == [
        ("Heron", "Object Detection; Pedestrian Detection"),  # equal scores: by name
        ("Kestrel: captions for every image", "Image Captioning"),
        ("Plover", "Object Detection"),
    ]


def test_a_changed_paper_gets_its_new_tasks(
    db_url: str, taxonomy_file: Path, papers_file: Path
) -> None:
    load(db_url, papers_file, taxonomy=str(taxonomy_file))
    changed = [{**PAPERS[2], "abstract": "We propose Plover for image captioning."}]
    papers_file.write_text("".join(json.dumps(p) + "\n" for p in changed), "utf-8")
    load(db_url, papers_file, taxonomy=str(taxonomy_file))
    assert fetch(db_url, "SELECT task, papers FROM task_index ORDER BY task") == [
        ("Image Captioning", 1)
    ]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.none() | st.text(max_size=80))
def test_assign_tasks_is_well_formed_on_arbitrary_text(text: str, title: str | None) -> None:
    hits = assign_tasks(text, load_taxonomy(), title=title)
    assert len(hits) <= MAX_TASKS
    assert len({h.name for h in hits}) == len(hits)
    assert all(h.score > 0 and h.evidence for h in hits)

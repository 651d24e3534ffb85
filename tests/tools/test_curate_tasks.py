"""tools/curate_tasks.py: a task vocabulary curated from a noisy task list (made-up rows)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from etl.transform.topics import load_taxonomy
from tools import curate_tasks

CSV = """task,domain,datasets
Object Detection,cv,300
object-detection,cv,2
Object Detections,cv,1
Visual Question Answering (VQA),cv,100
Segmentation,cv,45
Summarization,nlp,12
Text Summarization,nlp,98
Reinforcement Learning,other,40
Denoising Widgets,other,1
Zero-Shot Object Detection,cv,9
Translation deu-afr,nlp,5
2D Semantic Segmentation task 3 (25 classes),cv,3
3D Object Tracking,cv,4
GSM8K,nlp,20
Large Language Model,nlp,30
Language Modelling,nlp,50
Quantum Widget Polishing,other,7
"""


def test_the_curated_file_is_a_taxonomy_file_with_the_rules_applied(tmp_path: Path) -> None:
    source = tmp_path / "tasks.csv"
    source.write_text(CSV, "utf-8")
    datasets = tmp_path / "datasets.txt"
    datasets.write_text("GSM8K\nCOCO\n", "utf-8")
    out = tmp_path / "tasks.toml"
    assert curate_tasks.main([str(source), "--datasets", str(datasets), "-o", str(out)]) == 0
    tasks = {t["name"]: t for t in tomllib.loads(out.read_text("utf-8"))["task"]}
    assert set(tasks) == {
        "Object Detection",  # its hyphen, case and plural variants merged into it
        "Visual Question Answering",  # the acronym became a term
        "Text Summarization",  # "Summarization" is one of its terms, not a task of its own
        "3D Object Tracking",  # "3D" is not a stray digit
        "Language Modelling",
        "Zero-Shot Object Detection",  # a setting of a task is a task (matched as the longer)
    }
    assert tasks["Object Detection"]["topic"] == "object-detection"
    assert tasks["Object Detection"].get("terms", []) == []  # variants of the name add nothing
    assert tasks["Visual Question Answering"]["terms"] == ["VQA"]
    assert tasks["Visual Question Answering"]["topic"] == "vision-language"
    assert tasks["Language Modelling"]["terms"] == ["language modeling"]
    assert [t.casefold() for t in tasks["Text Summarization"]["terms"]] == ["summarization"]
    assert "Reinforcement Learning" not in tasks  # a broad way of learning: a topic
    text = out.read_text("utf-8")
    assert "Papers with Code" in text and "CC BY-SA 4.0" in text
    # the packaged topics plus these tasks load as one taxonomy file
    topics = (Path(curate_tasks.__file__).parent.parent / "etl/data/taxonomy.toml").read_text()
    both = tmp_path / "both.toml"
    both.write_text(topics + "\n" + text, "utf-8")
    assert len(load_taxonomy(both).tasks) == 6


def test_names_of_one_task_merge_and_longer_names_get_its_short_forms(tmp_path: Path) -> None:
    source = tmp_path / "tasks.csv"
    source.write_text(
        "task,domain,datasets\n"
        "Speech Recognition,audio,50\n"
        "Automatic Speech Recognition (ASR),audio,60\n"
        "Noisy Automatic Speech Recognition,audio,2\n"
        "Vision and Language Navigation,cv,9\n"
        "Vision-Language Navigation,cv,3\n"
        "Image Text Matching,cv,4\n"
        "Image Matching,cv,8\n",
        "utf-8",
    )
    out = tmp_path / "tasks.toml"
    assert curate_tasks.main([str(source), "-o", str(out)]) == 0
    tasks = {t["name"]: t for t in tomllib.loads(out.read_text("utf-8"))["task"]}
    # a leading "Automatic" and an "and" between words do not make another task ...
    assert tasks["Automatic Speech Recognition"]["terms"] == ["Speech Recognition", "ASR"]
    assert tasks["Vision and Language Navigation"]["terms"] == ["Vision-Language Navigation"]
    # ... but another word does
    assert {"Image Text Matching", "Image Matching"} <= set(tasks)
    # a name holding a task's name is also written with the task's acronym
    assert tasks["Noisy Automatic Speech Recognition"]["terms"] == ["Noisy ASR"]


def test_standard_datasets_are_written_with_their_task(tmp_path: Path) -> None:
    source = tmp_path / "tasks.csv"
    source.write_text("task,domain,datasets\nQuestion Answering,nlp,90\n", "utf-8")
    out = tmp_path / "tasks.toml"
    assert curate_tasks.main([str(source), "-o", str(out)]) == 0
    (task,) = tomllib.loads(out.read_text("utf-8"))["task"]
    assert task["datasets"] == curate_tasks.DATASETS["Question Answering"]
    assert "SQuAD" in task["datasets"]


def test_tasks_readers_named_join_the_vocabulary_under_their_papers_topic(tmp_path: Path) -> None:
    source = tmp_path / "tasks.csv"
    source.write_text(CSV, "utf-8")
    gold = tmp_path / "gold.jsonl"
    lines = [
        # an archive name the filters dropped (no topic of its own): kept once a reader uses it
        {"id": "1", "topics": ["robot-manipulation"], "tasks": ["Quantum Widget Polishing"]},
        {"id": "2", "topics": ["robot-manipulation", "new:soft"], "tasks": ["Object Detection"]},
        # a reader's own name counts once used twice, a single word or broad way never
        {"id": "3", "topics": ["clustering"], "tasks": ["new:Widget Sorting", "new:Sorting"]},
        {"id": "4", "topics": ["clustering"], "tasks": ["new:Widget Sorting", "new:Sorting"]},
        {
            "id": "5",
            "topics": ["deep-rl"],
            "tasks": ["new:Once Only Task", "Reinforcement Learning"],
        },
    ]
    gold.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    out = tmp_path / "tasks.toml"
    assert curate_tasks.main([str(source), "--attested", str(gold), "-o", str(out)]) == 0
    tasks = {t["name"]: t for t in tomllib.loads(out.read_text("utf-8"))["task"]}
    assert tasks["Quantum Widget Polishing"]["topic"] == "robot-manipulation"
    assert tasks["Widget Sorting"]["topic"] == "clustering"
    assert tasks["Object Detection"]["topic"] == "object-detection"  # already there: unchanged
    for absent in ("Sorting", "Once Only Task", "Reinforcement Learning"):
        assert absent not in tasks

"""Train the topic and task tagger (`etl/transform/tagger.py`) on abstracts readers labelled.

    pip install ".[train]"
    python tools/train_tagger.py --lists DIR [--gold FILE ...] [-o etl/data/tagger] [--seed 0]

DIR is a local copy of the public paper lists the gold files are keyed to (a git directory or
a folder; see `tools/real_gold.py`). The gold files hold annotations and keys, never text; the
texts are read from DIR, checked against each record's digest, and never written anywhere.
Held-out and final sets (`real-test*`, `real-final*`) are refused: they measure the model.

What it does (deterministic for a seed):

1. each abstract is cleaned and read as the transform reads it: its text features and the
   rules' evidence for every topic and task of the packaged taxonomy;
2. cross-validation by list (a venue-year is never split across folds, so every score is on
   lists the heads never saw): linear heads (one-vs-rest linear SVMs over L2-normalised
   word and word-pair presence) for topics and for tasks readers named at least
   MIN_TASK_DOCS times, and each task's prior (how often the rules find it where readers
   name it) from the other folds;
3. re-rankers (logistic regressions) fitted on those out-of-fold scores, then the selection
   thresholds chosen for micro-F1 on them; the cross-validated F1 is printed;
4. the heads refitted on every abstract, their weights stored as int8 with a scale per label,
   and everything written to `model.npz` and `model.json` (with the provenance).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.svm import LinearSVC

from etl.evaluate import TaskNames, _task_name, expansion_key
from etl.transform.clean import clean_text
from etl.transform.tagger import (
    Evidence,
    Head,
    probabilities,
    select,
    task_rows,
    text_features,
    topic_probabilities,
    topic_rows,
)
from etl.transform.topics import Taxonomy, load_taxonomy, rule_evidences

HERE = Path(__file__).resolve().parent
DEFAULT_GOLD = [
    "tests/gold/real-corpus.jsonl",
    "tests/gold/real-dev-a.jsonl",
    "tests/gold/real-dev-b.jsonl",
]
RESERVED = ("real-test", "real-final")
MIN_FEATURE_DOCS = 2
MIN_TASK_DOCS = 4
FOLDS = 5
SVM_C = 0.5


def _real_gold() -> Any:
    """tools/real_gold.py, imported by path (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("real_gold", HERE / "real_gold.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class Doc:
    """One labelled abstract, read as the transform reads it."""

    id: str
    group: str
    features: set[str]
    topic_evidence: dict[str, Evidence]
    task_evidence: dict[str, Evidence]
    topics: list[str]  # gold slugs ("new:" ones included: they count as misses)
    tasks: list[str]  # gold task keys, one per task
    task_labels: list[str]  # gold tasks as vocabulary names (those the vocabulary has)


def read_docs(golds: Sequence[str], lists: str, taxonomy: Taxonomy) -> list[Doc]:
    """Every record of the gold files, with its text brought back from the lists."""
    real_gold = _real_gold()
    source = real_gold.Lists(lists)
    names = TaskNames.of(taxonomy)
    docs = []
    for gold in golds:
        if any(mark in Path(gold).name for mark in RESERVED):
            raise SystemExit(
                f"error: {gold} is a held-out set: it measures the model, never trains it"
            )
        for line in real_gold.read_gold(gold):
            record = real_gold.with_text(source, line)
            title = clean_text(record["title"]) if record.get("title") else None
            abstract = clean_text(record["abstract"])
            topic_ev, task_ev = rule_evidences(title, abstract, taxonomy)
            keys = list(dict.fromkeys(expansion_key(_task_name(t)) for t in line.get("tasks", [])))
            labels = [names.task_of[k] for k in keys if k in names.task_of]
            docs.append(
                Doc(
                    id=line["id"],
                    group=line["source"]["file"],
                    features=text_features(title, abstract),
                    topic_evidence=topic_ev,
                    task_evidence=task_ev,
                    topics=list(line.get("topics", [])),
                    tasks=[names.task_of.get(k, k) for k in keys],
                    task_labels=list(dict.fromkeys(labels)),
                )
            )
    return docs


def design(docs: Sequence[Doc], vocabulary: dict[str, int]) -> sparse.csr_matrix:
    """L2-normalised presence of each document's known features."""
    indptr, indices, values = [0], [], []
    for doc in docs:
        rows = sorted({vocabulary[f] for f in doc.features if f in vocabulary})
        indices.extend(rows)
        values.extend([1.0 / math.sqrt(len(rows))] * len(rows) if rows else [])
        indptr.append(len(indices))
    return sparse.csr_matrix((values, indices, indptr), shape=(len(docs), len(vocabulary)))


def fit_head(x: sparse.csr_matrix, targets: list[list[str]], labels: list[str], seed: int):
    """One linear SVM per label: (weights features x labels, biases)."""
    weights = np.zeros((x.shape[1], len(labels)), dtype=np.float32)
    biases = np.zeros(len(labels), dtype=np.float32)
    for j, label in enumerate(labels):
        y = np.array([label in t for t in targets])
        if y.all() or not y.any():
            biases[j] = 1.0 if y.all() else -1.0
            continue
        svm = LinearSVC(C=SVM_C, class_weight="balanced", random_state=seed, max_iter=5000)
        svm.fit(x, y)
        weights[:, j] = svm.coef_[0]
        biases[j] = svm.intercept_[0]
    return weights, biases


def priors(docs: Sequence[Doc]) -> dict[str, float]:
    """Per task, the log-odds (against all tasks) that a rules' candidate is a reader's task."""
    found, named = Counter(), Counter()
    for doc in docs:
        for task in doc.task_evidence:
            found[task] += 1
            named[task] += task in doc.task_labels
    base = (sum(named.values()) + 1) / (sum(found.values()) + 2)
    weight = 2.0

    def logit(p: float) -> float:
        return math.log(p / (1 - p))

    return {
        task: logit((named[task] + weight * base) / (found[task] + weight)) - logit(base)
        for task in found
    }


def quantized(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 weights and the per-label scale that restores them."""
    scale = np.abs(weights).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    return np.round(weights / scale).astype(np.int8), scale.astype(np.float32)


def head_model(vocabulary, topic_head, task_head, topic_labels, task_labels) -> dict[str, Any]:
    """The arrays of a model (float weights quantized as shipped)."""
    tw, ts = quantized(topic_head[0])
    kw, ks = quantized(task_head[0])
    return {
        "topic_weights": tw,
        "topic_scale": ts,
        "topic_bias": topic_head[1],
        "task_weights": kw,
        "task_scale": ks,
        "task_bias": task_head[1],
    }


def f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def score(docs, topic_ps, task_ps, th) -> tuple[float, float]:
    """Micro-F1 of topics and tasks for probabilities and thresholds (as `etl eval` counts)."""
    counts = {"topics": [0, 0, 0], "tasks": [0, 0, 0]}
    for doc, tp_, kp in zip(docs, topic_ps, task_ps, strict=True):
        got = {s for s, _ in select(tp_, th["topic_least"], th["topic_ratio"], first=0.0)}
        want = {s.removeprefix("new:") for s in doc.topics}
        c = counts["topics"]
        c[0] += len(got & want)
        c[1] += len(got - want)
        c[2] += len(want - got)
        got = {n for n, _ in select(kp, th["task_least"], th["task_ratio"])}
        want = set(doc.tasks)
        c = counts["tasks"]
        c[0] += len(got & want)
        c[1] += len(got - want)
        c[2] += len(want - got)
    return f1(*counts["topics"]), f1(*counts["tasks"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lists", required=True)
    parser.add_argument("--gold", action="append")
    parser.add_argument("-o", "--output", default="etl/data/tagger")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    golds = args.gold or DEFAULT_GOLD
    taxonomy = load_taxonomy()
    leaves = sorted(taxonomy.leaves)
    task_topic = {t.name: t.topic for t in taxonomy.tasks}
    docs = read_docs(golds, args.lists, taxonomy)
    print(f"{len(docs)} abstracts from {len({d.group for d in docs})} lists", file=sys.stderr)
    covered = sum(len(d.task_labels) for d in docs)
    print(
        f"gold tasks in the vocabulary: {covered} of {sum(len(d.tasks) for d in docs)}",
        file=sys.stderr,
    )

    print("the rules alone: topics F1 {:.3f}, tasks F1 {:.3f}".format(*rules_f1(docs)))
    groups = [d.group for d in docs]
    folds = list(GroupKFold(n_splits=FOLDS).split(docs, groups=groups))
    oof_topic = [None] * len(docs)
    oof_task = [None] * len(docs)
    oof_task_head: list[Head] = [labels_only([])] * len(docs)
    oof_prior: list[dict[str, float]] = [{}] * len(docs)
    for number, (train, test) in enumerate(folds, 1):
        train_docs = [docs[i] for i in train]
        vocabulary = vocabulary_of(train_docs)
        x_train = design(train_docs, vocabulary)
        x_test = design([docs[i] for i in test], vocabulary)
        topic_w, topic_b = fit_head(
            x_train, [[s for s in d.topics] for d in train_docs], leaves, args.seed
        )
        task_labels = frequent_tasks(train_docs)
        task_w, task_b = fit_head(
            x_train, [d.task_labels for d in train_docs], task_labels, args.seed
        )
        topic_scores = np.asarray(x_test @ topic_w + topic_b)
        task_scores = np.asarray(x_test @ task_w + task_b)
        prior = priors(train_docs)
        fold_head = labels_only(task_labels)
        for row, i in enumerate(test):
            oof_topic[i] = topic_scores[row]
            oof_task[i] = task_scores[row]
            oof_task_head[i] = fold_head
            oof_prior[i] = prior
        print(f"fold {number}: {len(train)} train, {len(test)} test", file=sys.stderr)

    topic_head = labels_only(leaves)
    topic_features = [
        topic_rows(topic_head, oof_topic[i], d.topic_evidence) for i, d in enumerate(docs)
    ]
    topic_rerank, topic_rules_only = fit_topic_rerankers(docs, topic_features)
    rerankers = SimpleNamespace(topic_rerank=topic_rerank, topic_rules_only=topic_rules_only)
    topic_ps = [topic_probabilities(rerankers, rows, taxonomy.leaves) for rows in topic_features]
    candidates = [
        task_rows(
            oof_task_head[i], oof_task[i], doc.task_evidence, oof_prior[i], task_topic, topic_ps[i]
        )
        for i, doc in enumerate(docs)
    ]
    task_rerank = fit_logistic(
        [row for rows in candidates for row in rows.values()],
        [
            int(task in doc.task_labels)
            for doc, rows in zip(docs, candidates, strict=True)
            for task in rows
        ],
    )
    task_ps = [probabilities(task_rerank, rows) for rows in candidates]
    best, thresholds = None, None
    grid = [x / 20 for x in range(1, 19)]
    for ratio, least in product(grid, grid):
        th = {"topic_ratio": ratio, "topic_least": least, "task_least": 0.5, "task_ratio": 0.5}
        value = score(docs, topic_ps, task_ps, th)[0]
        if best is None or value > best:
            best, thresholds = value, th
    best_task = None
    for ratio, least in product(grid, grid):
        th = {**thresholds, "task_least": least, "task_ratio": ratio}
        value = score(docs, topic_ps, task_ps, th)[1]
        if best_task is None or value > best_task:
            best_task, thresholds = value, th
    topics_f1, tasks_f1 = score(docs, topic_ps, task_ps, thresholds)
    print(f"cross-validated (by list): topics F1 {topics_f1:.3f}, tasks F1 {tasks_f1:.3f}")
    print(f"thresholds: {thresholds}")

    vocabulary = vocabulary_of(docs)
    x = design(docs, vocabulary)
    topic_head = fit_head(x, [d.topics for d in docs], leaves, args.seed)
    task_labels = frequent_tasks(docs)
    task_head = fit_head(x, [d.task_labels for d in docs], task_labels, args.seed)
    arrays = head_model(vocabulary, topic_head, task_head, leaves, task_labels)
    digest = hashlib.sha256()
    for gold in golds:
        digest.update(Path(gold).read_bytes())
    info = {
        "vocabulary": sorted(vocabulary, key=vocabulary.__getitem__),
        "topic_labels": leaves,
        "task_labels": task_labels,
        "topic_rerank": topic_rerank,
        "topic_rules_only": topic_rules_only,
        "task_rerank": task_rerank,
        "task_prior": {k: round(v, 4) for k, v in sorted(priors(docs).items())},
        "thresholds": thresholds,
        "provenance": {
            "trained_by": "tools/train_tagger.py",
            "seed": args.seed,
            "gold": [Path(g).name for g in golds],
            "gold_sha256": digest.hexdigest(),
            "abstracts": len(docs),
            "lists": len({d.group for d in docs}),
            "texts": "titles and abstracts of the public papercopilot/paperlists collection, "
            "read locally and not shipped; labels by this project's readers",
            "licence": "model weights: MIT, like the package; task names from the Papers "
            "with Code archive (CC BY-SA 4.0), as etl/data/tasks.toml",
            "cross_validated_f1": {"topics": round(topics_f1, 3), "tasks": round(tasks_f1, 3)},
        },
    }
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "model.npz", **arrays)
    (out / "model.json").write_text(
        json.dumps(info, ensure_ascii=False, sort_keys=True) + "\n", "utf-8"
    )
    size = sum(p.stat().st_size for p in out.iterdir() if p.suffix in {".npz", ".json"})
    print(f"model written to {out} ({size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


def rules_f1(docs: Sequence[Doc]) -> tuple[float, float]:
    """Micro-F1 of the rules' own selection on the same abstracts (the baseline)."""
    topics, tasks = [0, 0, 0], [0, 0, 0]
    for doc in docs:
        for counts, evidence, want in (
            (topics, doc.topic_evidence, {s.removeprefix("new:") for s in doc.topics}),
            (tasks, doc.task_evidence, set(doc.tasks)),
        ):
            got = {key for key, e in evidence.items() if e.kept}
            counts[0] += len(got & want)
            counts[1] += len(got - want)
            counts[2] += len(want - got)
    return f1(*topics), f1(*tasks)


def vocabulary_of(docs: Sequence[Doc]) -> dict[str, int]:
    """Features seen in at least MIN_FEATURE_DOCS abstracts, in a fixed order."""
    counts = Counter(f for d in docs for f in d.features)
    kept = sorted(f for f, n in counts.items() if n >= MIN_FEATURE_DOCS)
    return {f: i for i, f in enumerate(kept)}


def frequent_tasks(docs: Sequence[Doc]) -> list[str]:
    """Tasks readers named in at least MIN_TASK_DOCS abstracts (the task head's labels)."""
    counts = Counter(t for d in docs for t in d.task_labels)
    return sorted(t for t, n in counts.items() if n >= MIN_TASK_DOCS)


def fit_logistic(rows: list[list[float]], targets: list[int]) -> list[float]:
    """A logistic regression's [bias, *coefficients]."""
    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit(np.asarray(rows), np.asarray(targets))
    return [round(float(model.intercept_[0]), 6), *(round(float(c), 6) for c in model.coef_[0])]


def fit_topic_rerankers(docs, features) -> tuple[list[float], list[float]]:
    """The topic re-ranker (model score and rules) and its rules-only half (fitted on the
    leaves the rules found, with the rules' features alone)."""
    rows, targets, rule_rows, rule_targets = [], [], [], []
    for doc, found in zip(docs, features, strict=True):
        want = {s.removeprefix("new:") for s in doc.topics}
        labels = [int(label in want) for label in found.labels]
        rows.append(found.matrix)
        targets.extend(labels)
        for j, label in enumerate(found.labels):
            if label in doc.topic_evidence:
                rule_rows.append(found.matrix[j, 4:].tolist())
                rule_targets.append(labels[j])
    return fit_logistic(np.vstack(rows), targets), fit_logistic(rule_rows, rule_targets)


def labels_only(labels: Sequence[str]) -> Head:
    """A head that only names its labels (cross-validation keeps the scores apart)."""
    empty = np.zeros(len(labels), dtype=np.float32)
    return Head(tuple(labels), empty, empty)


if __name__ == "__main__":
    raise SystemExit(main())

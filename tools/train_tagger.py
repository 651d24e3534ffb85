"""Train the topic and task tagger (`etl/transform/tagger.py`) on abstracts readers labelled.

    pip install ".[train]"
    python tools/train_tagger.py --lists DIR [--gold FILE ...] [-o etl/data/tagger] [--seed 0]
        [--cache FILE] [--set NAME=VALUE ...] [--cv-only]

DIR is a local copy of the public paper lists the gold files are keyed to (a git directory or
a folder; see `tools/real_gold.py`). The gold files hold annotations and keys, never text; the
texts are read from DIR, checked against each record's digest, and never written anywhere
but `--cache FILE`: a local pickle of each abstract's features and the rules' evidence (words
and word pairs of the texts: keep it out of the repository), read back when the gold files,
taxonomy and code are unchanged, so that trying `--set` values with `--cv-only` takes seconds
for the re-rankers and a few minutes for the heads instead of reading every text again.
Held-out and final sets (`real-test*`, `real-heldout*`, `real-final*`) are refused: they
measure the model.

What it does (deterministic for a seed):

1. each abstract is cleaned and read as the transform reads it: its text features and the
   rules' evidence for every topic and task of the packaged taxonomy;
2. cross-validation by list (a venue-year is never split across folds, so every score is on
   lists the heads never saw): linear heads (one-vs-rest linear SVMs over word and word-pair
   presence, optionally weighted by inverse document frequency, over the square root of the
   abstract's feature count) for topics and for tasks readers named at least `min_task_docs`
   times, and each task's prior (how often the rules find it where readers
   name it) from the other folds;
3. re-rankers (logistic regressions) fitted on those out-of-fold scores, then the selection
   thresholds chosen for micro-F1 on them; the cross-validated F1 is printed;
4. the heads refitted on every abstract, their weights (the idf folded in, so the tagger
   still reads presence alone) stored as int8 with a scale per label, and everything written
   to `model.npz` and `model.json` (with the provenance).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import pickle
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
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
RESERVED = ("real-test", "real-final", "real-heldout")
FOLDS = 5


@dataclass(frozen=True)
class Settings:
    """What training can vary (`--set NAME=VALUE`); the defaults are the shipped model's."""

    topic_c: float = 0.5  # the topic heads' SVM C
    task_c: float = 0.5  # the task heads' SVM C
    balanced: bool = True  # class weights inversely proportional to each label's frequency
    idf: bool = False  # each feature weighted by its inverse document frequency (`--set idf=true`)
    min_task_docs: int = 4  # a task gets a head when readers named it this often
    min_feature_docs: int = 2  # a feature is kept when this many abstracts have it
    rerank_c: float = 1.0  # the re-rankers' logistic C
    logistic: bool = False  # logistic regression heads instead of linear SVMs
    centroid: float = 0.0  # weight of each label's mean abstract added to its head

    @classmethod
    def parsed(cls, pairs: Sequence[str]) -> Settings:
        """Settings from NAME=VALUE pairs (each value read as its default's type)."""
        values: dict[str, Any] = {}
        defaults = cls()
        for pair in pairs:
            name, _, text = pair.partition("=")
            if not hasattr(defaults, name):
                raise SystemExit(f"error: --set {pair}: no setting {name!r}")
            kind = type(getattr(defaults, name))
            values[name] = text.lower() in {"1", "true", "yes"} if kind is bool else kind(text)
        return cls(**values)


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


def design(
    docs: Sequence[Doc], vocabulary: dict[str, int], idf: np.ndarray | None = None
) -> sparse.csr_matrix:
    """Each document's known features, present (or weighted by `idf`), over the square root of
    how many it has: what the tagger computes at run time from presence alone, the idf being
    folded into the stored weights (`stored_weights`)."""
    indptr, indices, values = [0], [], []
    for doc in docs:
        rows = sorted({vocabulary[f] for f in doc.features if f in vocabulary})
        indices.extend(rows)
        norm = 1.0 / math.sqrt(len(rows)) if rows else 0.0
        values.extend([norm * idf[r] for r in rows] if idf is not None else [norm] * len(rows))
        indptr.append(len(indices))
    return sparse.csr_matrix((values, indices, indptr), shape=(len(docs), len(vocabulary)))


def idf_of(docs: Sequence[Doc], vocabulary: dict[str, int]) -> np.ndarray:
    """Each feature's smoothed inverse document frequency."""
    counts = np.zeros(len(vocabulary))
    for doc in docs:
        for f in doc.features:
            if f in vocabulary:
                counts[vocabulary[f]] += 1
    return np.log((len(docs) + 1) / (counts + 1)) + 1.0


def fit_head(
    x: sparse.csr_matrix,
    targets: list[list[str]],
    labels: list[str],
    seed: int,
    c: float,
    settings: Settings,
):
    """One linear model per label (an SVM, or a logistic regression), plus `centroid` times the
    unit-length mean of the label's abstracts (a nearest-centroid vote folded into the same
    linear weights): (weights features x labels, biases)."""
    weights = np.zeros((x.shape[1], len(labels)), dtype=np.float32)
    biases = np.zeros(len(labels), dtype=np.float32)
    weight = "balanced" if settings.balanced else None
    for j, label in enumerate(labels):
        y = np.array([label in t for t in targets])
        if y.all() or not y.any():
            biases[j] = 1.0 if y.all() else -1.0
            continue
        if settings.logistic:
            model: Any = LogisticRegression(
                C=c, class_weight=weight, solver="liblinear", random_state=seed
            )
        else:
            model = LinearSVC(C=c, class_weight=weight, random_state=seed, max_iter=5000)
        model.fit(x, y)
        weights[:, j] = model.coef_[0]
        biases[j] = model.intercept_[0]
        if settings.centroid:
            mean = np.asarray(x[y].mean(axis=0)).ravel()
            weights[:, j] += settings.centroid * mean / (np.linalg.norm(mean) or 1.0)
    return weights, biases


@dataclass
class Heads:
    """Both heads fitted on some abstracts: what scores others."""

    vocabulary: dict[str, int]
    idf: np.ndarray | None
    topic: tuple[np.ndarray, np.ndarray]
    task_labels: list[str]
    task: tuple[np.ndarray, np.ndarray]

    def scores(self, docs: Sequence[Doc]) -> tuple[np.ndarray, np.ndarray]:
        x = design(docs, self.vocabulary, self.idf)
        return (
            np.asarray(x @ self.topic[0] + self.topic[1]),
            np.asarray(x @ self.task[0] + self.task[1]),
        )


def fit_heads(docs: Sequence[Doc], leaves: list[str], settings: Settings, seed: int) -> Heads:
    """The topic and task heads on `docs`."""
    vocabulary = vocabulary_of(docs, settings.min_feature_docs)
    idf = idf_of(docs, vocabulary) if settings.idf else None
    x = design(docs, vocabulary, idf)
    topic = fit_head(x, [d.topics for d in docs], leaves, seed, settings.topic_c, settings)
    task_labels = frequent_tasks(docs, settings.min_task_docs)
    task = fit_head(x, [d.task_labels for d in docs], task_labels, seed, settings.task_c, settings)
    return Heads(vocabulary, idf, topic, task_labels, task)


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


def stored_weights(heads: Heads, weights: np.ndarray) -> np.ndarray:
    """A head's weights as the tagger applies them to feature presence (the idf folded in)."""
    return weights if heads.idf is None else weights * heads.idf[:, None].astype(np.float32)


def head_model(heads: Heads) -> dict[str, Any]:
    """The arrays of a model (float weights quantized as shipped)."""
    tw, ts = quantized(stored_weights(heads, heads.topic[0]))
    kw, ks = quantized(stored_weights(heads, heads.task[0]))
    return {
        "topic_weights": tw,
        "topic_scale": ts,
        "topic_bias": heads.topic[1],
        "task_weights": kw,
        "task_scale": ks,
        "task_bias": heads.task[1],
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


@dataclass
class OutOfFold:
    """Every abstract's head scores from the fold that did not train on it."""

    topic: list[np.ndarray]
    task: list[np.ndarray]
    task_head: list[Head]
    prior: list[dict[str, float]]


def out_of_fold(docs: Sequence[Doc], leaves: list[str], settings: Settings, seed: int) -> OutOfFold:
    """Cross-validation by list: a venue-year is never split across folds."""
    folds = list(GroupKFold(n_splits=FOLDS).split(docs, groups=[d.group for d in docs]))
    oof = OutOfFold([None] * len(docs), [None] * len(docs), [], [{}] * len(docs))  # type: ignore[list-item]
    oof.task_head = [labels_only([])] * len(docs)
    for number, (train, test) in enumerate(folds, 1):
        train_docs = [docs[i] for i in train]
        heads = fit_heads(train_docs, leaves, settings, seed)
        topic_scores, task_scores = heads.scores([docs[i] for i in test])
        prior = priors(train_docs)
        fold_head = labels_only(heads.task_labels)
        for row, i in enumerate(test):
            oof.topic[i] = topic_scores[row]
            oof.task[i] = task_scores[row]
            oof.task_head[i] = fold_head
            oof.prior[i] = prior
        print(f"fold {number}: {len(train)} train, {len(test)} test", file=sys.stderr)
    return oof


@dataclass
class Ranked:
    """The re-rankers fitted on out-of-fold scores, the thresholds, and the F1 they give."""

    topic_rerank: list[float]
    topic_rules_only: list[float]
    task_rerank: list[float]
    thresholds: dict[str, float]
    topics_f1: float
    tasks_f1: float


def rerank(docs: Sequence[Doc], oof: OutOfFold, taxonomy: Taxonomy, settings: Settings) -> Ranked:
    """Re-rankers and thresholds fitted on the out-of-fold scores, and the F1 they reach."""
    leaves = sorted(taxonomy.leaves)
    task_topic = {t.name: t.topic for t in taxonomy.tasks}
    topic_head = labels_only(leaves)
    topic_features = [
        topic_rows(topic_head, oof.topic[i], d.topic_evidence) for i, d in enumerate(docs)
    ]
    topic_rerank, topic_rules_only = fit_topic_rerankers(docs, topic_features, settings.rerank_c)
    rerankers = SimpleNamespace(topic_rerank=topic_rerank, topic_rules_only=topic_rules_only)
    topic_ps = [topic_probabilities(rerankers, rows, taxonomy.leaves) for rows in topic_features]
    candidates = [
        task_rows(
            oof.task_head[i], oof.task[i], doc.task_evidence, oof.prior[i], task_topic, topic_ps[i]
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
        settings.rerank_c,
    )
    task_ps = [probabilities(task_rerank, rows) for rows in candidates]
    topic_least, topic_ratio = best_thresholds(
        topic_ps, [{s.removeprefix("new:") for s in d.topics} for d in docs], first=0.0
    )
    task_least, task_ratio = best_thresholds(task_ps, [set(d.tasks) for d in docs], first=None)
    thresholds = {
        "topic_ratio": topic_ratio,
        "topic_least": topic_least,
        "task_least": task_least,
        "task_ratio": task_ratio,
    }
    topics_f1, tasks_f1 = score(docs, topic_ps, task_ps, thresholds)
    return Ranked(topic_rerank, topic_rules_only, task_rerank, thresholds, topics_f1, tasks_f1)


def best_thresholds(
    scored: Sequence[dict[str, float]], wanted: Sequence[set[str]], first: float | None
) -> tuple[float, float]:
    """The (least, ratio) of `select` with the best micro-F1 (the first best on a grid), each
    abstract's few best labels ranked once."""
    orders = [select(p, 0.0, 0.0, first=-1.0) for p in scored]
    grid = [x / 20 for x in range(1, 19)]
    best, chosen = -1.0, (0.5, 0.5)
    for ratio, least in product(grid, grid):
        tp = fp = fn = 0
        for order, want in zip(orders, wanted, strict=True):
            got = set()
            if order and order[0][1] >= (least if first is None else first):
                floor = max(least, ratio * order[0][1])
                got = {order[0][0], *(label for label, p in order[1:] if p >= floor)}
            hits = len(got & want)
            tp, fp, fn = tp + hits, fp + len(got) - hits, fn + len(want) - hits
        if f1(tp, fp, fn) > best:
            best, chosen = f1(tp, fp, fn), (least, ratio)
    return chosen


def load_docs(golds: Sequence[str], lists: str, taxonomy: Taxonomy, cache: str | None) -> list[Doc]:
    """The labelled abstracts, read from the lists, or from `cache` when it was written from the
    same gold files, taxonomy and code (a local file of texts' features: never commit it)."""
    digest = hashlib.sha256()
    for path in [*golds, *sorted(str(p) for p in (HERE.parent / "etl").rglob("*.py"))]:
        digest.update(Path(path).read_bytes())
    digest.update(repr(sorted(taxonomy.leaves)).encode())
    digest.update(repr(sorted((t.name, t.topic) for t in taxonomy.tasks)).encode())
    key = digest.hexdigest()
    if cache and Path(cache).is_file():
        with open(cache, "rb") as file:
            stored = pickle.load(file)
        if stored["key"] == key:
            return [Doc(**fields) for fields in stored["docs"]]
    docs = read_docs(golds, lists, taxonomy)
    if cache:
        with open(cache, "wb") as file:
            # plain fields: the same file serves the script and an import of it
            pickle.dump({"key": key, "docs": [vars(d) for d in docs]}, file)
    return docs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lists", required=True)
    parser.add_argument("--gold", action="append")
    parser.add_argument("-o", "--output", default="etl/data/tagger")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cache", help="keep the abstracts' features and the rules' evidence in this local file"
    )
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--cv-only", action="store_true", help="cross-validate, write nothing")
    args = parser.parse_args(argv)
    settings = Settings.parsed(args.set)
    golds = args.gold or DEFAULT_GOLD
    taxonomy = load_taxonomy()
    leaves = sorted(taxonomy.leaves)
    docs = load_docs(golds, args.lists, taxonomy, args.cache)
    print(f"{len(docs)} abstracts from {len({d.group for d in docs})} lists", file=sys.stderr)
    covered = sum(len(d.task_labels) for d in docs)
    print(
        f"gold tasks in the vocabulary: {covered} of {sum(len(d.tasks) for d in docs)}",
        file=sys.stderr,
    )
    print("the rules alone: topics F1 {:.3f}, tasks F1 {:.3f}".format(*rules_f1(docs)))
    print(f"settings: {settings}")
    ranked = rerank(docs, out_of_fold(docs, leaves, settings, args.seed), taxonomy, settings)
    print(
        f"cross-validated (by list): topics F1 {ranked.topics_f1:.3f}, "
        f"tasks F1 {ranked.tasks_f1:.3f}"
    )
    print(f"thresholds: {ranked.thresholds}")
    if args.cv_only:
        return 0

    heads = fit_heads(docs, leaves, settings, args.seed)
    arrays = head_model(heads)
    digest = hashlib.sha256()
    for gold in golds:
        digest.update(Path(gold).read_bytes())
    vocabulary = heads.vocabulary
    info = {
        "vocabulary": sorted(vocabulary, key=vocabulary.__getitem__),
        "topic_labels": leaves,
        "task_labels": heads.task_labels,
        "topic_rerank": ranked.topic_rerank,
        "topic_rules_only": ranked.topic_rules_only,
        "task_rerank": ranked.task_rerank,
        "task_prior": {k: round(v, 4) for k, v in sorted(priors(docs).items())},
        "thresholds": ranked.thresholds,
        "provenance": {
            "trained_by": "tools/train_tagger.py",
            "seed": args.seed,
            "settings": asdict(settings),
            "gold": [Path(g).name for g in golds],
            "gold_sha256": digest.hexdigest(),
            "abstracts": len(docs),
            "lists": len({d.group for d in docs}),
            "texts": "titles and abstracts of the public papercopilot/paperlists collection, "
            "read locally and not shipped; labels by this project's readers",
            "licence": "model weights: MIT, like the package; task names from the Papers "
            "with Code archive (CC BY-SA 4.0), as etl/data/tasks.toml",
            "cross_validated_f1": {
                "topics": round(ranked.topics_f1, 3),
                "tasks": round(ranked.tasks_f1, 3),
            },
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


def vocabulary_of(docs: Sequence[Doc], least: int) -> dict[str, int]:
    """Features seen in at least `least` abstracts, in a fixed order."""
    counts = Counter(f for d in docs for f in d.features)
    kept = sorted(f for f, n in counts.items() if n >= least)
    return {f: i for i, f in enumerate(kept)}


def frequent_tasks(docs: Sequence[Doc], least: int) -> list[str]:
    """Tasks readers named in at least `least` abstracts (the task head's labels)."""
    counts = Counter(t for d in docs for t in d.task_labels)
    return sorted(t for t, n in counts.items() if n >= least)


def fit_logistic(rows, targets: list[int], c: float) -> list[float]:
    """A logistic regression's [bias, *coefficients]."""
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(np.asarray(rows), np.asarray(targets))
    return [round(float(model.intercept_[0]), 6), *(round(float(c), 6) for c in model.coef_[0])]


def fit_topic_rerankers(docs, features, c: float) -> tuple[list[float], list[float]]:
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
    return fit_logistic(np.vstack(rows), targets, c), fit_logistic(rule_rows, rule_targets, c)


def labels_only(labels: Sequence[str]) -> Head:
    """A head that only names its labels (cross-validation keeps the scores apart)."""
    empty = np.zeros(len(labels), dtype=np.float32)
    return Head(tuple(labels), empty, empty)


if __name__ == "__main__":
    raise SystemExit(main())

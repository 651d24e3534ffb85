"""Topics and tasks ranked by a model learned from labelled abstracts, over the rules' evidence.

The rules (`etl.transform.topics`) find terms and weigh them by where they stand. Readers
assign topics and tasks that the terms alone do not rank well, so a model trained on
abstracts that readers labelled (`tools/train_tagger.py`, the corpus in `tests/gold/`) ranks
them instead, in two steps:

1. linear models over the words and word pairs of the title and abstract give each topic
   (and each task readers named often enough) a score;
2. a small logistic re-ranker turns that score and the rules' evidence for the same label
   (its score, rank, whether the rules kept it; for tasks also how often a task the rules
   find is one readers name, and the paper's topic) into a probability.

A paper gets its most probable topic, and up to two more that are probable enough; the same
for tasks, which may be none. Labels the model was not trained on (a user's own taxonomy)
are ranked by the re-ranker's rules-only half, so they compete with the learned ones.

The model is plain arrays in `etl/data/tagger/` (NumPy `.npz` and JSON), read once per process.
"""

from __future__ import annotations

import heapq
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from io import BytesIO
from itertools import filterfalse, islice, repeat
from operator import add, mul
from typing import NamedTuple

# NumPy's BLAS would start threads of its own; a signal the kernel gave one of them would
# reach the run in the middle of a write that holds signals (etl.signals). The tagger's
# products are too small to gain from threads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from etl.models import TaskHit, TopicHit
from etl.transform.terms import Occurrence, TermIndex

__all__ = [
    "TaggerModel",
    "load_model",
    "probabilities",
    "rule_evidence",
    "tag",
    "task_rows",
    "text_features",
    "topic_probabilities",
    "topic_rows",
]

MAX_LABELS = 3
# the model's best tasks are candidates beside those the rules find
MODEL_CANDIDATES = 5
TOKEN_RE = re.compile(r"[a-z][a-z0-9]*(?:['-][a-z0-9]+)*")
STOP = frozenset(
    """a an the of and or in on for to with by from as at is are was were be been being this
    that these those it its we our us their they them which who whom whose what when where how
    than then there here such can could may might will would should must do does did done has
    have had not no nor but also into onto over under between among about via using use used
    based both each either more most less least very much many other some any all only own
    same so too just while whereas thus hence however therefore moreover furthermore yet""".split()
)


def text_features(title: str | None, abstract: str) -> set[str]:
    """The words and neighbouring word pairs of the abstract, and of the title marked apart
    (a word in the title says more about the paper than the same word in the abstract). Never
    the venue: a paper's topics are its content, the same in every list that names it."""
    # built by C-level maps, not a Python loop per word: this runs once per record
    features: set[str] = set()
    for prefix, text in (("", abstract), ("T:", title or "")):
        words = list(filterfalse(STOP.__contains__, TOKEN_RE.findall(text.lower())))
        marked = list(map(prefix.__add__, words)) if prefix else words
        features.update(marked)
        features.update(map(add, map(add, marked, repeat(" ")), islice(words, 1, None)))
    return features


class Evidence(NamedTuple):  # a tuple: made for every label the rules find in every record
    """What the rules found for one label: score, rank among the labels found, whether the
    rules' own selection keeps it, and the terms that matched."""

    score: float
    rank: int
    kept: bool
    strong: bool
    terms: tuple[str, ...]


def rule_evidence(
    found: Sequence[Occurrence],
    index: TermIndex,
    keep_ratio: float,
    least_factor: float = 0.0,
) -> dict[str, Evidence]:
    """Each label the rules found, with its evidence (the rules' ranking of `found`)."""
    from etl.transform.topics import ranked  # the rules' one ranking

    strong = {o.key for o in found if o.factor >= least_factor}
    order = ranked(list(found), index)
    if not order:
        return {}
    kept_order = [entry for entry in order if entry[1] in strong]
    best = kept_order[0][0] if kept_order else 0.0
    kept = {key for score, key, _ in kept_order[:MAX_LABELS] if best and score >= keep_ratio * best}
    return {
        key: Evidence(score, rank, key in kept, key in strong, terms)
        for rank, (score, key, terms) in enumerate(order, 1)
    }


RULE_FEATURES = 7


def rule_row(evidence: Evidence | None, best: float) -> list[float]:
    """The rules' half of a label's features (all zero when the rules did not find it)."""
    if evidence is None:
        return [0.0] * RULE_FEATURES
    return [
        1.0,
        math.log1p(evidence.score),
        evidence.score / best if best else 0.0,
        float(evidence.rank == 1),
        float(evidence.rank <= 3),
        float(evidence.kept),
        float(evidence.strong),
    ]


@dataclass(frozen=True, eq=False)  # arrays: compared by identity
class Head:
    """One linear model's labels: a column per label of the model's weights, the scale that
    turns its int8 weights into floats, and its biases."""

    labels: tuple[str, ...]
    scale: np.ndarray  # float32 per label: int8 -> weight
    bias: np.ndarray  # float32 per label

    @cached_property
    def column(self) -> dict[str, int]:
        """Each label's column."""
        return {label: i for i, label in enumerate(self.labels)}

    def scores(self, summed: np.ndarray, count: int) -> np.ndarray:
        """Each label's score from its column sums over a text's `count` features (presence,
        L2-normalised)."""
        if not count:
            return np.array(self.bias, dtype=np.float32)
        scores: np.ndarray = summed * self.scale / math.sqrt(count) + self.bias
        return scores


@dataclass(frozen=True, eq=False)  # arrays: compared by identity
class TaggerModel:
    """A trained tagger: the feature vocabulary, a head for topics and one for tasks, the
    re-rankers' coefficients and the selection thresholds."""

    vocabulary: dict[str, int]
    weights: np.ndarray  # int8, features x (topic labels, then task labels)
    topics: Head
    tasks: Head
    topic_rerank: tuple[float, ...]  # [bias, *learned row, *rule row]
    topic_rules_only: tuple[float, ...]  # [bias, *rule row]
    task_rerank: tuple[float, ...]  # [bias, known, *learned row, *rule row, prior, topic p]
    task_prior: dict[str, float]  # task -> log-odds that a rules' candidate is a reader's task
    thresholds: dict[str, float]  # topic_least, topic_ratio, task_least, task_ratio
    provenance: dict[str, object]

    def scores(self, features: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every topic's and every task's score for a text's features (one pass over the
        weights for both heads; features the model never saw are dropped)."""
        # distinct features have distinct rows; the order of an integer sum does not matter
        found = set(map(self.vocabulary.get, features))
        found.discard(None)
        rows = np.fromiter(found, dtype=np.intp, count=len(found))
        summed = self.weights[rows].sum(axis=0, dtype=np.int32).astype(np.float32)
        split = len(self.topics.labels)
        return (
            self.topics.scores(summed[:split], len(rows)),
            self.tasks.scores(summed[split:], len(rows)),
        )


def _sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, value))))


def _dot(coefficients: Sequence[float], row: Sequence[float]) -> float:
    if len(coefficients) != len(row) + 1:
        raise ValueError(f"{len(row)} features for {len(coefficients) - 1} coefficients")
    products: float = sum(map(mul, islice(coefficients, 1, None), row))
    return coefficients[0] + products


LEARNED_FEATURES = 4


def learned_matrix(scores: np.ndarray) -> np.ndarray:
    """The model's half of each label's features: its score, whether it ranks first, in the
    first three, and its distance to the best score."""
    return _learned(scores)[0]


def _learned(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`learned_matrix` and the labels' order, best first (ties: the first label)."""
    order = np.argsort(-scores, kind="stable")
    matrix = np.zeros((len(scores), LEARNED_FEATURES))
    matrix[:, 0] = scores
    matrix[order[:1], 1] = 1.0
    matrix[order[:3], 2] = 1.0
    if len(scores):
        matrix[:, 3] = scores - scores.max()  # in the scores' float32, as they are
    return matrix, order


@dataclass(frozen=True)
class TopicRows:
    """A paper's topic features: a row per label of the model, and the rules' row for each
    leaf the rules found that the model does not know (a user's own leaf)."""

    labels: tuple[str, ...]
    matrix: np.ndarray
    rules_only: dict[str, list[float]]


def topic_rows(head: Head, scores: np.ndarray, evidence: dict[str, Evidence]) -> TopicRows:
    """The topic re-ranker's features for one paper."""
    best_rule = max((e.score for e in evidence.values()), default=0.0)
    matrix = np.zeros((len(head.labels), LEARNED_FEATURES + RULE_FEATURES))
    matrix[:, :LEARNED_FEATURES] = _learned(scores)[0]
    rules_only = {}
    columns, rows = [], []
    for leaf, found in evidence.items():
        column = head.column.get(leaf)
        if column is None:
            rules_only[leaf] = rule_row(found, best_rule)
        else:
            columns.append(column)
            rows.append(rule_row(found, best_rule))
    if rows:  # one assignment for all the rules' rows
        matrix[columns, LEARNED_FEATURES:] = rows
    return TopicRows(head.labels, matrix, rules_only)


def task_rows(
    head: Head,
    scores: np.ndarray,
    evidence: dict[str, Evidence],
    prior: dict[str, float],
    task_topic: dict[str, str],
    topic_p: dict[str, float],
) -> dict[str, list[float]]:
    """Each candidate task's re-ranker features: the tasks the rules found and the model's
    best few (a task this taxonomy does not hold is left out)."""
    learned, order = _learned(scores)
    best_rule = max((e.score for e in evidence.values()), default=0.0)
    candidates = dict.fromkeys(evidence)
    candidates.update(dict.fromkeys(map(head.labels.__getitem__, order[:MODEL_CANDIDATES])))
    rows = {}
    for task in candidates:
        topic = task_topic.get(task)
        if topic is None:
            continue
        column = head.column.get(task)
        model = [0.0] * 5 if column is None else [1.0, *learned[column].tolist()]
        rows[task] = [
            *model,
            *rule_row(evidence.get(task), best_rule),
            prior.get(task, 0.0),
            topic_p.get(topic, 0.0),
        ]
    return rows


def topic_probabilities(
    model: TaggerModel, rows: TopicRows, leaves: frozenset[str]
) -> dict[str, float]:
    """Each leaf's probability of being one of the paper's topics (leaves of the taxonomy
    only: a label the model knows that a user's taxonomy lacks is left out)."""
    weights = np.asarray(model.topic_rerank)
    # np.clip's Python-level checks cost more than the two ufuncs it stands for
    linear = np.minimum(np.maximum(rows.matrix @ weights[1:] + weights[0], -30.0), 30.0)
    values = 1.0 / (1.0 + np.exp(-linear))
    if leaves.issuperset(rows.labels):  # the packaged taxonomy holds every label
        result = dict(zip(rows.labels, values.tolist(), strict=True))
    else:
        result = {
            label: p
            for label, p in zip(rows.labels, values.tolist(), strict=True)
            if label in leaves
        }
    for leaf, row in rows.rules_only.items():
        result[leaf] = _sigmoid(_dot(model.topic_rules_only, row))
    return result


def probabilities(coefficients: Sequence[float], rows: dict[str, list[float]]) -> dict[str, float]:
    """Each label's probability by a logistic re-ranker."""
    return {label: _sigmoid(_dot(coefficients, row)) for label, row in rows.items()}


def select(
    scored: dict[str, float], least: float, ratio: float, first: float | None = None
) -> list[tuple[str, float]]:
    """The most probable labels: the best if it reaches `first` (default: `least`), then up
    to MAX_LABELS - 1 more that reach `least` and `ratio` times the best."""
    if len(scored) > MAX_LABELS:
        # only labels at least as probable as the third most probable can be among the first
        # three: the rest are never given to the keyed selection (a Python call per label)
        third = sorted(scored.values(), reverse=True)[MAX_LABELS - 1]
        scored = {label: p for label, p in scored.items() if p >= third}
    order = heapq.nsmallest(MAX_LABELS, scored.items(), key=lambda item: (-item[1], item[0]))
    if not order or order[0][1] < (least if first is None else first):
        return []
    floor = max(least, ratio * order[0][1])
    return [order[0], *[item for item in order[1:] if item[1] >= floor]]


def tag(
    model: TaggerModel,
    features: set[str],
    topic_evidence: dict[str, Evidence],
    task_evidence: dict[str, Evidence],
    leaves: frozenset[str],
    task_topic: dict[str, str],
) -> tuple[tuple[TopicHit, ...], tuple[TaskHit, ...]]:
    """A paper's topics and tasks, most probable first."""
    thresholds = model.thresholds
    topic_scores, task_scores = model.scores(features)
    topic_p = topic_probabilities(
        model, topic_rows(model.topics, topic_scores, topic_evidence), leaves
    )
    # a paper always gets a topic when anything points to one
    topics = select(topic_p, thresholds["topic_least"], thresholds["topic_ratio"], first=0.0)
    candidates = task_rows(
        model.tasks, task_scores, task_evidence, model.task_prior, task_topic, topic_p
    )
    task_p = probabilities(model.task_rerank, candidates)
    tasks = select(task_p, thresholds["task_least"], thresholds["task_ratio"])
    return (
        tuple(TopicHit(s, round(p, 3), _terms(topic_evidence.get(s))) for s, p in topics),
        tuple(TaskHit(n, round(p, 3), _terms(task_evidence.get(n))) for n, p in tasks),
    )


def _terms(evidence: Evidence | None) -> tuple[str, ...]:
    return evidence.terms if evidence else ()


def read_model(arrays: bytes, meta: str) -> TaggerModel:
    """A model from its two files' contents (see `tools/train_tagger.py` for the format)."""
    data = np.load(BytesIO(arrays))
    info = json.loads(meta)

    def head(name: str) -> Head:
        return Head(
            tuple(info[f"{name}_labels"]),
            data[f"{name}_scale"].astype(np.float32),
            data[f"{name}_bias"].astype(np.float32),
        )

    return TaggerModel(
        vocabulary={feature: row for row, feature in enumerate(info["vocabulary"])},
        weights=np.hstack([data["topic_weights"], data["task_weights"]]),
        topics=head("topic"),
        tasks=head("task"),
        topic_rerank=tuple(info["topic_rerank"]),
        topic_rules_only=tuple(info["topic_rules_only"]),
        task_rerank=tuple(info["task_rerank"]),
        task_prior=dict(info["task_prior"]),
        thresholds=dict(info["thresholds"]),
        provenance=dict(info["provenance"]),
    )


@cache
def load_model() -> TaggerModel | None:
    """The packaged model, read once per process; None when the package ships none."""
    folder = resources.files("etl.data").joinpath("tagger")
    arrays, meta = folder.joinpath("model.npz"), folder.joinpath("model.json")
    if not (arrays.is_file() and meta.is_file()):
        return None
    return read_model(arrays.read_bytes(), meta.read_text("utf-8"))

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
from dataclasses import dataclass, field
from functools import cache
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
    "tag_batch",
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


# A word's id where the vocabulary holds no feature of it, and where it is a stop word (left
# out before neighbouring words are paired).
UNKNOWN = -1
SKIPPED = -2
# Kinds of features, the first number of a feature's code: a word of the abstract, of the
# title, a pair of the abstract's words, a pair starting with a title word.
WORD, TITLE_WORD, PAIR, TITLE_PAIR = range(4)


@dataclass(frozen=True, eq=False)  # arrays: compared by identity
class FeatureIndex:
    """The vocabulary as numbers: each of its words an id, each feature a code made of its
    kind and its words' ids (sorted, with the feature's row), so that a batch's features are
    found by one search in an array instead of a dict lookup per feature string."""

    word_ids: dict[str, int]  # every word of a feature; stop words -> SKIPPED
    codes: np.ndarray  # int64, sorted: (kind * words + first id) * words + second id (or 0)
    rows: np.ndarray  # int64: each code's row of the weights
    words: int  # ids run from 0 to words - 1

    def ids(self, text: str) -> list[int]:
        """The ids of a text's words, in order (UNKNOWN: in no feature; SKIPPED: a stop word)."""
        return list(map(self.word_ids.get, TOKEN_RE.findall(text.lower()), repeat(UNKNOWN)))


def feature_index(vocabulary: dict[str, int]) -> FeatureIndex:
    """The numeric form of a vocabulary of `text_features` strings."""
    word_ids: dict[str, int] = {}
    parsed = []
    for feature, row in vocabulary.items():
        title = feature.startswith("T:")
        first, _, second = feature[2 if title else 0 :].partition(" ")
        ids = [word_ids.setdefault(word, len(word_ids)) for word in (first, second) if word]
        parsed.append((title, ids, row))
    words = max(len(word_ids), 1)
    codes = np.empty(len(parsed), dtype=np.int64)
    rows = np.empty(len(parsed), dtype=np.int64)
    for k, (title, ids, row) in enumerate(parsed):
        kind = (TITLE_PAIR if title else PAIR) if len(ids) == 2 else (TITLE_WORD if title else WORD)
        codes[k] = (kind * words + ids[0]) * words + (ids[1] if len(ids) == 2 else 0)
        rows[k] = row
    order = np.argsort(codes, kind="stable")
    word_ids.update(dict.fromkeys(STOP, SKIPPED))
    return FeatureIndex(word_ids, codes[order], rows[order], words)


def batch_rows(
    index: FeatureIndex, texts: Sequence[tuple[list[int], list[int]]]
) -> tuple[np.ndarray, np.ndarray]:
    """Each paper's distinct feature rows, from its (abstract, title) word ids: the rows in
    one array, paper after paper, each paper's rows sorted, and each paper's count. What
    `text_features` gives as strings, found for the whole batch at once."""
    n = len(texts)
    flat: list[int] = []
    lengths: list[int] = []
    for abstract_ids, title_ids in texts:
        for text_ids in (abstract_ids, title_ids):
            flat.extend(text_ids)
            flat.append(UNKNOWN)  # no pair runs across two texts
            lengths.append(len(text_ids) + 1)
    ids = np.array(flat, dtype=np.int64)
    title = np.repeat(np.tile(np.array([0, 1], dtype=np.int64), n), lengths)
    paper = np.repeat(np.repeat(np.arange(n, dtype=np.int64), 2), lengths)
    kept = ids != SKIPPED
    ids, title, paper = ids[kept], title[kept], paper[kept]
    words = index.words
    known = ids >= 0
    first, second = ids[:-1], ids[1:]
    paired = known[:-1] & known[1:]
    codes = np.concatenate(
        [
            ((WORD + title[known]) * words + ids[known]) * words,
            ((PAIR + title[:-1][paired]) * words + first[paired]) * words + second[paired],
        ]
    )
    # (code, paper) keys sorted: each paper's features distinct, and the codes in order for
    # the search (a search of sorted keys starts where the last one ended)
    keys = codes * n + np.concatenate([paper[known], paper[:-1][paired]])
    keys.sort()
    if len(keys):
        keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    codes = keys // n
    at = np.searchsorted(index.codes, codes)
    at[at == len(index.codes)] = 0
    found = index.codes[at] == codes
    owners = (keys - codes * n)[found]
    # paper by paper (a stable sort keeps each paper's rows in code order)
    order = np.argsort(owners, kind="stable")
    return index.rows[at[found]][order], np.bincount(owners, minlength=n)


# Papers whose rows are gathered at once: NumPy's segment sums (`reduceat`) walk int8 rows
# slowly, so each group's rows are padded to its longest paper and summed as a 3-D block.
SUM_GROUP = 100


def summed_rows(weights: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each paper's sum of its rows of `weights` (int32; `weights` ends with a row of zeros,
    the padding): integer sums, the same in any order and any grouping."""
    n = len(counts)
    summed = np.zeros((n, weights.shape[1]), dtype=np.int32)
    ends = np.cumsum(counts)
    starts = ends - counts
    padding = len(weights) - 1
    for first in range(0, n, SUM_GROUP):
        last = min(first + SUM_GROUP, n)
        held = counts[first:last]
        width = int(held.max()) if len(held) else 0
        if not width:
            continue
        lo, hi = int(starts[first]), int(ends[last - 1])
        block = np.full((last - first, width), padding, dtype=np.intp)
        paper = np.repeat(np.arange(last - first), held)
        block[paper, np.arange(lo, hi) - np.repeat(starts[first:last], held)] = rows[lo:hi]
        summed[first:last] = weights[block].sum(axis=1, dtype=np.int32)
    return summed


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
    # each label's column: a field, not a cached property (compiled, a cached property would
    # be rebuilt at every read)
    column: dict[str, int] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "column", {label: i for i, label in enumerate(self.labels)})

    def scores(self, summed: np.ndarray, count: int) -> np.ndarray:
        """Each label's score from its column sums over a text's `count` features (presence,
        L2-normalised)."""
        if not count:
            return np.array(self.bias, dtype=np.float32)
        scores: np.ndarray = summed * self.scale / math.sqrt(count) + self.bias
        return scores

    def batch_scores(self, summed: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """`scores` for a batch: a row per paper, each the same float32 values `scores`
        gives (the same operations, element by element)."""
        root = np.sqrt(np.maximum(counts, 1).astype(np.float64)).astype(np.float32)
        scores: np.ndarray = summed * self.scale / root[:, None] + self.bias
        scores[counts == 0] = self.bias
        return scores


@dataclass(frozen=True, eq=False)  # arrays: compared by identity
class TaggerModel:
    """A trained tagger: the feature vocabulary, a head for topics and one for tasks, the
    re-rankers' coefficients and the selection thresholds."""

    vocabulary: dict[str, int]
    weights: np.ndarray  # int8, features x (topic labels, then task labels), then a zero row
    topics: Head
    tasks: Head
    topic_rerank: tuple[float, ...]  # [bias, *learned row, *rule row]
    topic_rules_only: tuple[float, ...]  # [bias, *rule row]
    task_rerank: tuple[float, ...]  # [bias, known, *learned row, *rule row, prior, topic p]
    task_prior: dict[str, float]  # task -> log-odds that a rules' candidate is a reader's task
    thresholds: dict[str, float]  # topic_least, topic_ratio, task_least, task_ratio
    provenance: dict[str, object]
    features: FeatureIndex  # the vocabulary as numbers

    def batch_scores(
        self, texts: Sequence[tuple[list[int], list[int]]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every topic's and every task's score for each paper of a batch, from its (abstract,
        title) word ids (`FeatureIndex.ids`): a row per paper for each head. One product of
        the batch's features (sparse: the rows each paper holds) and the weights; its sums
        are of integers, exact in any order, so a paper's scores never depend on its batch."""
        rows, counts = batch_rows(self.features, texts)
        values = summed_rows(self.weights, rows, counts).astype(np.float32)
        split = len(self.topics.labels)
        return (
            self.topics.batch_scores(values[:, :split], counts),
            self.tasks.batch_scores(values[:, split:], counts),
        )

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
    matrix, order = learned_batch(scores[None])
    return matrix[0], order[0]


def learned_batch(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_learned` of each paper of a batch (a row of `scores` per paper): papers x labels x
    LEARNED_FEATURES, and each paper's order of its labels."""
    papers, labels = scores.shape
    order = np.argsort(-scores, axis=1, kind="stable")
    matrix = np.zeros((papers, labels, LEARNED_FEATURES))
    matrix[:, :, 0] = scores
    if labels:
        rows = np.arange(papers)[:, None]
        matrix[rows, order[:, :1], 1] = 1.0
        matrix[rows, order[:, :3], 2] = 1.0
        # in the scores' float32, as they are
        matrix[:, :, 3] = scores - scores.max(axis=1, keepdims=True)
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
    matrix, rules_only = topic_batch(head, scores[None], [evidence])
    return TopicRows(head.labels, matrix[0], rules_only[0])


def topic_batch(
    head: Head, scores: np.ndarray, evidences: Sequence[dict[str, Evidence]]
) -> tuple[np.ndarray, list[dict[str, list[float]]]]:
    """The topic re-ranker's features for each paper of a batch: papers x labels x features,
    and each paper's rows of the leaves the model does not know."""
    matrix = np.zeros((len(evidences), len(head.labels), LEARNED_FEATURES + RULE_FEATURES))
    matrix[:, :, :LEARNED_FEATURES] = learned_batch(scores)[0]
    every_rules_only = []
    papers, columns, rows = [], [], []
    for paper, evidence in enumerate(evidences):
        best_rule = max((e.score for e in evidence.values()), default=0.0)
        rules_only = {}
        for leaf, found in evidence.items():
            column = head.column.get(leaf)
            if column is None:
                rules_only[leaf] = rule_row(found, best_rule)
            else:
                papers.append(paper)
                columns.append(column)
                rows.append(rule_row(found, best_rule))
        every_rules_only.append(rules_only)
    if rows:  # one assignment for all the rules' rows
        matrix[papers, columns, LEARNED_FEATURES:] = rows
    return matrix, every_rules_only


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
    return _task_rows(head, learned, order, evidence, prior, task_topic, topic_p)


def _task_rows(
    head: Head,
    learned: np.ndarray,
    order: np.ndarray,
    evidence: dict[str, Evidence],
    prior: dict[str, float],
    task_topic: dict[str, str],
    topic_p: dict[str, float],
) -> dict[str, list[float]]:
    """`task_rows`, given the paper's `_learned` matrix and order of the task labels."""
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
    return topic_probabilities_batch(
        model, rows.labels, rows.matrix[None], [rows.rules_only], leaves
    )[0]


def topic_probabilities_batch(
    model: TaggerModel,
    labels: tuple[str, ...],
    matrix: np.ndarray,
    rules_only: Sequence[dict[str, list[float]]],
    leaves: frozenset[str],
) -> list[dict[str, float]]:
    """`topic_probabilities` of each paper of a batch (`topic_batch`'s matrix and rows)."""
    weights = np.asarray(model.topic_rerank)
    # Each paper's labels x features slice is one BLAS product of the same shape whatever
    # the batch (a stacked product); a product of all the batch's rows at once would group
    # them differently and may move a sum's last bit.
    linear = matrix @ weights[1:] + weights[0]
    # np.clip's Python-level checks cost more than the two ufuncs it stands for
    linear = np.minimum(np.maximum(linear, -30.0), 30.0)
    values = 1.0 / (1.0 + np.exp(-linear))
    every = leaves.issuperset(labels)  # the packaged taxonomy holds every label
    found = []
    for paper, own in enumerate(rules_only):
        pairs = zip(labels, values[paper].tolist(), strict=True)
        result = dict(pairs) if every else {label: p for label, p in pairs if label in leaves}
        for leaf, row in own.items():
            result[leaf] = _sigmoid(_dot(model.topic_rules_only, row))
        found.append(result)
    return found


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


Labels = tuple[tuple[TopicHit, ...], tuple[TaskHit, ...]]


class PaperReading(NamedTuple):
    """What the tagger reads of one paper, found in the transform's first phase (per record):
    its words as ids and the rules' evidence."""

    words: tuple[list[int], list[int]]  # the abstract's and the title's (`FeatureIndex.ids`)
    topic_evidence: dict[str, Evidence]
    task_evidence: dict[str, Evidence]


def tag_batch(
    model: TaggerModel,
    papers: Sequence[PaperReading],
    leaves: frozenset[str],
    task_topic: dict[str, str],
) -> list[Labels]:
    """Each paper's topics and tasks: the learned scores of the whole batch at once, then
    each paper's re-ranking and selection. A paper's labels never depend on its batch."""
    topic_scores, task_scores = model.batch_scores([paper.words for paper in papers])
    return scored_batch(
        model,
        topic_scores,
        task_scores,
        [paper.topic_evidence for paper in papers],
        [paper.task_evidence for paper in papers],
        leaves,
        task_topic,
    )


def tag(
    model: TaggerModel,
    features: set[str],
    topic_evidence: dict[str, Evidence],
    task_evidence: dict[str, Evidence],
    leaves: frozenset[str],
    task_topic: dict[str, str],
) -> Labels:
    """A paper's topics and tasks, most probable first, from its `text_features`."""
    topic_scores, task_scores = model.scores(features)
    return scored_batch(
        model,
        topic_scores[None],
        task_scores[None],
        [topic_evidence],
        [task_evidence],
        leaves,
        task_topic,
    )[0]


def scored_batch(
    model: TaggerModel,
    topic_scores: np.ndarray,
    task_scores: np.ndarray,
    topic_evidences: Sequence[dict[str, Evidence]],
    task_evidences: Sequence[dict[str, Evidence]],
    leaves: frozenset[str],
    task_topic: dict[str, str],
) -> list[Labels]:
    """Each paper's topics and tasks from its learned scores (a row per paper) and the
    rules' evidence: the re-rankers' features and products for the batch, then each
    paper's selection."""
    thresholds = model.thresholds
    matrix, rules_only = topic_batch(model.topics, topic_scores, topic_evidences)
    every_topic_p = topic_probabilities_batch(
        model, model.topics.labels, matrix, rules_only, leaves
    )
    task_learned, task_order = learned_batch(task_scores)
    labels = []
    for paper, topic_p in enumerate(every_topic_p):
        topic_evidence, task_evidence = topic_evidences[paper], task_evidences[paper]
        # a paper always gets a topic when anything points to one
        topics = select(topic_p, thresholds["topic_least"], thresholds["topic_ratio"], first=0.0)
        candidates = _task_rows(
            model.tasks,
            task_learned[paper],
            task_order[paper],
            task_evidence,
            model.task_prior,
            task_topic,
            topic_p,
        )
        task_p = probabilities(model.task_rerank, candidates)
        tasks = select(task_p, thresholds["task_least"], thresholds["task_ratio"])
        labels.append(
            (
                tuple(TopicHit(s, round(p, 3), _terms(topic_evidence.get(s))) for s, p in topics),
                tuple(TaskHit(n, round(p, 3), _terms(task_evidence.get(n))) for n, p in tasks),
            )
        )
    return labels


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

    vocabulary = {feature: row for row, feature in enumerate(info["vocabulary"])}
    return TaggerModel(
        vocabulary=vocabulary,
        # a last row of zeros: the padding of `summed_rows`
        weights=np.vstack(
            [
                np.hstack([data["topic_weights"], data["task_weights"]]),
                np.zeros((1, len(info["topic_labels"]) + len(info["task_labels"])), np.int8),
            ]
        ),
        topics=head("topic"),
        tasks=head("task"),
        topic_rerank=tuple(info["topic_rerank"]),
        topic_rules_only=tuple(info["topic_rules_only"]),
        task_rerank=tuple(info["task_rerank"]),
        task_prior=dict(info["task_prior"]),
        thresholds=dict(info["thresholds"]),
        provenance=dict(info["provenance"]),
        features=feature_index(vocabulary),
    )


@cache
def load_model() -> TaggerModel | None:
    """The packaged model, read once per process; None when the package ships none."""
    folder = resources.files("etl.data").joinpath("tagger")
    arrays, meta = folder.joinpath("model.npz"), folder.joinpath("model.json")
    if not (arrays.is_file() and meta.is_file()):
        return None
    return read_model(arrays.read_bytes(), meta.read_text("utf-8"))

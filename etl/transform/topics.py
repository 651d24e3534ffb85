"""Topics and tasks from a taxonomy: a hierarchy of areas and topics, each with the terms that
signal it, and the tasks papers address, each under a topic."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from etl.errors import TaxonomyError
from etl.models import Task, TaskHit, Topic, TopicHit
from etl.transform.terms import (
    Occurrence,
    TermIndex,
    build_index,
    is_acronym_term,
    occurrences,
    pieces,
    plural_forms,
    term_matches,
)
from etl.wordlists import line_of, term_problem

if TYPE_CHECKING:  # the tagger (and NumPy) load only when topics are assigned
    from etl.transform.tagger import Evidence, PaperReading, TaggerModel

__all__ = [
    "Taxonomy",
    "assign_tasks",
    "assign_topics",
    "build_taxonomy",
    "is_acronym_term",
    "load_taxonomy",
    "matched_terms",
    "plural_forms",
]

MAX_TOPICS = 3
# A topic is kept when its score reaches this share of the best topic's score.
KEEP_RATIO = 0.4
MAX_TASKS = 3
# A task is kept when its score reaches this share of the best task's score ...
TASK_KEEP_RATIO = 0.5
# ... and when its best mention counts at least this much (not only negated or an example).
TASK_LEAST_FACTOR = 0.5
# Each further occurrence of a matched term adds this share of its weight (up to 3 times).
REPEAT_BONUS = 0.25
# An acronym term (ICL, LLM) counts once however often it recurs, and half when the topic has
# other evidence too (usually its own long form: the two are one piece of evidence).
ACRONYM_WITH_OTHERS = 0.5
PACKAGED = ("taxonomy.toml", "tasks.toml")
# Results on a task's standard dataset are weaker evidence than the task's name.
DATASET_WEIGHT = 0.5
# A task's last word, and the words for what does it (see `_with_doers`).
DOERS = {
    "detection": ("detector",),
    "classification": ("classifier",),
    "recognition": ("recognizer", "recogniser"),
    "estimation": ("estimator",),
    "tracking": ("tracker",),
    "generation": ("generator",),
    "prediction": ("predictor",),
    "summarization": ("summarizer", "summariser"),
    "retrieval": ("retriever",),
    "parsing": ("parser",),
    "tagging": ("tagger",),
    "captioning": ("captioner",),
    "segmentation": ("segmenter",),
}


@dataclass(frozen=True)
class Taxonomy:
    """Topics and tasks with their terms in word tries; built once per run, shared by workers."""

    topics: tuple[Topic, ...]
    index: TermIndex
    leaves: frozenset[str]
    tasks: tuple[Task, ...]
    task_index: TermIndex
    # "model": the packaged learned tagger ranks topics and tasks over the rules' evidence
    # (loaded in the process that first needs it, not where the taxonomy is read); "rules"
    tagger: str = "rules"
    # each task's topic slug: a field made once, not a cached property (compiled, a cached
    # property would be rebuilt at every read)
    task_topic: dict[str, str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "task_topic", {task.name: task.topic for task in self.tasks})

    def __reduce__(self) -> tuple[type[Taxonomy], tuple[object, ...]]:
        """Pickled as its fields (for the workers), rebuilt by the constructor: compiled
        (mypyc), a frozen class has no `__dict__` for pickle to fill."""
        fields = (self.topics, self.index, self.leaves, self.tasks, self.task_index)
        return (Taxonomy, (*fields, self.tagger))


TAGGERS = ("model", "rules")


def load_taxonomy(path: str | Path | None = None, tagger: str = "model") -> Taxonomy:
    """Read a taxonomy TOML file (the packaged default when no path is given) and check it.

    A file holds `[[topic]]` tables and, optionally, `[[task]]` tables; the packaged default is
    two files, the topics and the tasks curated for them. `tagger` "model" ranks topics and
    tasks with the packaged learned tagger (when the package ships one), "rules" with the
    term rules alone.
    """
    if tagger not in TAGGERS:
        raise TaxonomyError(f"unknown tagger {tagger!r}: choose one of {', '.join(TAGGERS)}")
    taxonomy = _read_taxonomy(path)
    return replace(taxonomy, tagger=tagger)


def _read_taxonomy(path: str | Path | None) -> Taxonomy:
    """The taxonomy of a file, or the packaged one, with its rules only."""
    if path is None:
        return _packaged()
    where = str(path)
    try:
        text = Path(path).read_text("utf-8")
    except OSError as exc:
        raise TaxonomyError(f"{where}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TaxonomyError(f"{where}: not UTF-8 text: {exc.reason}") from exc
    return _built([_parse(text, where)], where, text)


@cache
def _packaged() -> Taxonomy:
    """The packaged taxonomy, read once per process (its thousands of tasks take a while)."""
    documents = [
        _parse(resources.files("etl.data").joinpath(name).read_text("utf-8"), name)
        for name in PACKAGED
    ]
    return _built(documents, "default taxonomy")


def _built(documents: list[dict[str, Any]], where: str, text: str = "") -> Taxonomy:
    """One taxonomy from the [[topic]] and [[task]] tables of its documents (`text`: the
    file's, to name the line of a bad term)."""
    topics = [entry for document in documents for entry in document.get("topic", [])]
    tasks = [entry for document in documents for entry in document.get("task", [])]
    return build_taxonomy(topics or None, where, tasks, text)


def _parse(text: str, where: str) -> dict[str, Any]:
    """A TOML document, or a TaxonomyError naming the file."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TaxonomyError(f"{where}: not valid TOML: {exc}") from exc


def build_taxonomy(
    entries: object, where: str = "taxonomy", tasks: object = (), text: str = ""
) -> Taxonomy:
    """Validate `[[topic]]` and `[[task]]` entries and index their terms."""
    if not isinstance(entries, list) or not entries:
        raise TaxonomyError(f"{where}: no [[topic]] entries")
    topics: list[Topic] = []
    excluded: list[str] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not entry.get("slug") or not entry.get("name"):
            raise TaxonomyError(f"{where}: topic #{number} needs a slug and a name")
        slug = entry["slug"]
        terms = _terms(entry, f"{where}: topic {slug!r}", text=text)
        parent = entry.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise TaxonomyError(f"{where}: topic {slug!r}: parent must be a slug")
        topics.append(Topic(str(slug), str(entry["name"]), parent, terms))
        excluded.extend(_terms(entry, f"{where}: topic {slug!r}", "not", text))
    slugs = [t.slug for t in topics]
    if len(set(slugs)) != len(slugs):
        duplicate = next(s for s in slugs if slugs.count(s) > 1)
        raise TaxonomyError(f"{where}: topic {duplicate!r} is defined twice")
    for topic in topics:
        if topic.parent is not None and topic.parent not in slugs:
            message = f"topic {topic.slug!r} has unknown parent {topic.parent!r}"
            raise TaxonomyError(f"{where}: {message}")
    task_list = _tasks(tasks, set(slugs), where, text)
    return Taxonomy(
        tuple(topics),
        build_index([*((t.slug, t.terms) for t in topics), ("", excluded)]),
        frozenset(t.slug for t in topics if t.parent is not None),
        task_list,
        _task_index(task_list),
    )


def _task_index(tasks: tuple[Task, ...]) -> TermIndex:
    """Tasks' names (with their doers) and datasets in one index; a dataset weighs
    DATASET_WEIGHT whatever its length."""
    index = build_index((t.name, (*_with_doers((t.name, *t.terms)), *t.datasets)) for t in tasks)
    for task in tasks:
        for dataset in task.datasets:
            index.weights[dataset] = DATASET_WEIGHT
    return index


def _with_doers(names: tuple[str, ...]) -> tuple[str, ...]:
    """A task's names, and each with its last word as the thing that does the task: papers
    about "object detectors" or "image classifiers" address object detection or image
    classification. Names of one word are not varied ("detector" alone names no task)."""
    varied = list(names)
    for name in names:
        *first, last = name.split(" ")
        doers = DOERS.get(last.casefold(), ()) if first else ()
        varied.extend(" ".join([*first, doer]) for doer in doers)
    return tuple(dict.fromkeys(varied))


def _terms(
    entry: dict[str, Any], where: str, field: str = "terms", text: str = ""
) -> tuple[str, ...]:
    """An entry's `terms` (or `not`: phrases that contain a term but do not signal it),
    checked to be a list of strings each of which can match something worth matching."""
    terms = entry.get(field, [])
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise TaxonomyError(f"{where}: {field} must be a list of strings")
    for term in terms:
        reason = term_problem(term)
        if reason is not None:
            path, _, what = where.partition(": ")
            raise TaxonomyError(f"{path}{line_of(text, term)}: {what}: term {reason}")
    return tuple(terms)


def _tasks(entries: object, slugs: set[str], where: str, text: str = "") -> tuple[Task, ...]:
    """Validate `[[task]]` entries: a name, a known topic slug, optional terms."""
    if not isinstance(entries, (list, tuple)):
        raise TaxonomyError(f"{where}: [[task]] entries must be tables")
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise TaxonomyError(f"{where}: task #{number} needs a name")
        name = entry["name"].strip()
        if not name or name.casefold() in seen:
            raise TaxonomyError(f"{where}: task {name!r} is empty or defined twice")
        seen.add(name.casefold())
        topic = entry.get("topic")
        if topic not in slugs:
            raise TaxonomyError(f"{where}: task {name!r} has unknown topic {topic!r}")
        here = f"{where}: task {name!r}"
        terms = _terms(entry, here, text=text)
        tasks.append(Task(name, str(topic), terms, _terms(entry, here, "datasets", text)))
    return tuple(tasks)


def matched_terms(text: str, taxonomy: Taxonomy) -> dict[str, list[str]]:
    """Terms found in a text, by topic, in reading order: whole words, hyphens and spaces
    alike, plurals accepted; a match inside a longer match counts only for the longer term."""
    found: dict[str, list[str]] = {}
    for _end, ending in term_matches(text, taxonomy.index).values():
        for slug, term in ending:
            terms = found.setdefault(slug, [])
            if term not in terms:
                terms.append(term)
    return found


def ranked(found: list[Occurrence], index: TermIndex) -> list[tuple[float, str, tuple[str, ...]]]:
    """Keys by score, best first: (score, key, evidence terms); ties go to the key with more
    distinct terms, then to the one read first."""
    by_key: dict[str, dict[str, list[float]]] = {}
    first: dict[str, int] = {}
    for occurrence in found:
        key = occurrence.key
        terms = by_key.get(key)
        if terms is None:
            terms = by_key[key] = {}
            first[key] = occurrence.order
        factors = terms.get(occurrence.term)
        if factors is None:
            terms[occurrence.term] = [occurrence.factor]
        else:
            factors.append(occurrence.factor)
    acronyms, weights = index.acronyms, index.weights
    scored = []
    for key, terms in by_key.items():
        plain = not acronyms.issuperset(terms)
        shares = []
        for term, factors in terms.items():
            if len(factors) > 1:
                factors.sort(reverse=True)
            if term in acronyms:
                share = factors[0] * (ACRONYM_WITH_OTHERS if plain else 1.0)
            else:
                share = factors[0] + REPEAT_BONUS * sum(factors[1:4])
            shares.append(weights[term] * share)
        score = sum(shares)
        scored.append((-score, -len(terms), first[key], key, tuple(terms)))
    scored.sort()
    return [(-negated, key, terms) for negated, _, _, key, terms in scored]


def assign_topics(text: str, taxonomy: Taxonomy, title: str | None = None) -> tuple[TopicHit, ...]:
    """The best leaf topics of a paper (an area when no leaf matches), scored by its terms,
    each weighed by where it stands (see `etl.transform.terms`).

    Topics within KEEP_RATIO of the best score are kept, at most MAX_TOPICS of them. Any
    evidence, however weak, gives at least one topic.
    """
    found = occurrences(pieces(title, text), taxonomy.index)
    if not found:
        return ()
    leaves = taxonomy.leaves
    in_leaves = [o for o in found if o.key in leaves]
    order = ranked(in_leaves or found, taxonomy.index)
    least = KEEP_RATIO * order[0][0]
    return tuple(
        TopicHit(slug, round(score, 2), evidence)
        for score, slug, evidence in order[:MAX_TOPICS]
        if score >= least
    )


def assign_tasks(text: str, taxonomy: Taxonomy, title: str | None = None) -> tuple[TaskHit, ...]:
    """The tasks a paper addresses: named where they count (not only negated or as an
    example), within TASK_KEEP_RATIO of the best, at most MAX_TASKS."""
    if not taxonomy.tasks:
        return ()
    found = occurrences(pieces(title, text), taxonomy.task_index)
    if not found:
        return ()
    strong = {o.key for o in found if o.factor >= TASK_LEAST_FACTOR}
    order = ranked([o for o in found if o.key in strong], taxonomy.task_index)
    if not order:
        return ()
    least = TASK_KEEP_RATIO * order[0][0]
    return tuple(
        TaskHit(name, round(score, 2), evidence)
        for score, name, evidence in order[:MAX_TASKS]
        if score >= least
    )


def _model() -> TaggerModel | None:
    """The packaged tagger (None when the package ships none), read once per process."""
    from etl.transform.tagger import load_model

    return load_model()


def rule_evidences(
    title: str | None, text: str, taxonomy: Taxonomy
) -> tuple[dict[str, Evidence], dict[str, Evidence]]:
    """What the rules find for each leaf topic and each task of a paper (the text is read once
    for both): the tagger's evidence beside its learned scores."""
    from etl.transform.tagger import rule_evidence

    parts = pieces(title, text)
    leaves = taxonomy.leaves
    topic_found = [o for o in occurrences(parts, taxonomy.index) if o.key in leaves]
    topics = rule_evidence(topic_found, taxonomy.index, KEEP_RATIO)
    if not taxonomy.tasks:
        return topics, {}
    task_found = occurrences(parts, taxonomy.task_index)
    return topics, rule_evidence(
        task_found, taxonomy.task_index, TASK_KEEP_RATIO, TASK_LEAST_FACTOR
    )


class LabelReading(NamedTuple):
    """What the transform's first phase reads of a paper for its topics and tasks: the
    labels themselves when the rules alone assign them, else what the tagger reads."""

    rules: tuple[tuple[TopicHit, ...], tuple[TaskHit, ...]] | None
    tagger: PaperReading | None


def read_labels(text: str, taxonomy: Taxonomy, title: str | None = None) -> LabelReading:
    """A paper's topics and tasks by the rules, or what the tagger will need of it."""
    model = _model() if taxonomy.tagger == "model" else None
    if model is None:
        rules = assign_topics(text, taxonomy, title), assign_tasks(text, taxonomy, title)
        return LabelReading(rules, None)
    from etl.transform.tagger import PaperReading

    topic_evidence, task_evidence = rule_evidences(title, text, taxonomy)
    features = model.features
    words = (features.ids(text), features.ids(title or ""))
    return LabelReading(None, PaperReading(words, topic_evidence, task_evidence))


def label_batch(
    readings: Sequence[LabelReading], taxonomy: Taxonomy
) -> list[tuple[tuple[TopicHit, ...], tuple[TaskHit, ...]]]:
    """Each paper's topics and tasks (the transform's second phase, once per batch)."""
    tagged = [reading.tagger for reading in readings if reading.tagger is not None]
    if not tagged:
        return [reading.rules or ((), ()) for reading in readings]
    from etl.transform.tagger import load_model, tag_batch

    model = load_model()
    assert model is not None  # the readings were made with it
    labels = iter(tag_batch(model, tagged, taxonomy.leaves, taxonomy.task_topic))
    return [reading.rules or next(labels) for reading in readings]


def topics_and_tasks(
    text: str, taxonomy: Taxonomy, title: str | None = None
) -> tuple[tuple[TopicHit, ...], tuple[TaskHit, ...]]:
    """A paper's topics and tasks: by the taxonomy's tagger when it has one, else by its rules
    (a batch of one)."""
    return label_batch([read_labels(text, taxonomy, title)], taxonomy)[0]

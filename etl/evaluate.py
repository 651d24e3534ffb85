"""Extraction quality against hand-made gold annotations: precision, recall and F1 per field.

The gold format and the judgement rules are documented in `tests/gold/README.md`. Each gold
record's abstract (with its venue and year) goes through the real transform; what it finds is
compared with the annotation, and counts are summed over records (micro-averaged).

Matching rules, per record:

- introduced / mentioned: a predicted artifact of that role matches a gold one when any of its
  keys (`method_key` of the name or an alias) equals a key of the gold name or aliases; each
  gold artifact is matched at most once;
- acronyms: same acronym (exact) and the same expansion, ignoring case, hyphens versus spaces
  and a plural ending;
- code links: predicted links of kind `code`, compared with the gold URLs after light
  normalisation (https, no trailing slash or `.git`);
- topics: topic slugs (a gold `new:slug` matches the leaf `slug` once the taxonomy has it);
- tasks: task names, ignoring case, hyphens versus spaces and a plural last word; a predicted
  task also matches a gold name that is one of its terms (another name of the same task).

Run `python -m etl.evaluate GOLD_FILE --misses` to see every miss per record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from etl.errors import SourceError
from etl.models import (
    Acronym,
    Link,
    MethodMention,
    PaperBundle,
    RawRecord,
    TaskHit,
    TopicHit,
)
from etl.read import Rows
from etl.transform import Taxonomy, load_taxonomy, transform
from etl.transform.methods import method_key

FIELDS = ("introduced", "mentioned", "acronyms", "code_links", "topics", "tasks")
ACRONYM_SUFFIX_RE = re.compile(r"\s*\([^()]*\)\s*$")
# ... or with the setting the archive measured them in: "6D Pose Estimation using RGB"
SETTING_SUFFIX_RE = re.compile(r"\s+(?:using|on)\s+\S.*$")
COLUMNS = ("field", "gold", "predicted", "tp", "fp", "fn", "precision", "recall", "f1")


class GoldFileError(SourceError):
    """A gold file that is missing or does not follow the documented format."""


@dataclass(frozen=True)
class GoldRecord:
    """One annotated abstract: its text and, per field, the items a careful reader found."""

    id: str
    line: int
    venue: str | None
    year: int | None
    title: str | None
    abstract: str
    items: dict[str, tuple[Any, ...]]
    annotated: frozenset[str] = frozenset(FIELDS)  # the fields the line has (others: empty)


@dataclass(frozen=True)
class FieldResult:
    """What the transform got right and wrong for one field of one record."""

    record: str
    field: str
    tp: tuple[str, ...]
    fp: tuple[str, ...]
    fn: tuple[str, ...]


def evaluate(gold_path: str, taxonomy_path: str | None = None, tagger: str = "model") -> Rows:
    """Precision, recall and F1 per field over every record of a gold file (micro-averaged)."""
    return summarize(evaluate_details(gold_path, taxonomy_path, tagger))


def evaluate_details(
    gold_path: str, taxonomy_path: str | None = None, tagger: str = "model"
) -> list[FieldResult]:
    """Per record and field, the matched, spurious (fp) and missed (fn) items; topics and
    tasks by the learned tagger ("model") or the term rules alone ("rules")."""
    taxonomy = load_taxonomy(taxonomy_path, tagger)
    tasks = TaskNames.of(taxonomy)
    # a field a line does not annotate (tasks in older files; methods in a corpus where only
    # some lines carry them) is not scored for that line
    return [
        result
        for gold in read_gold(gold_path)
        for result in score_record(gold, taxonomy, tasks)
        if result.field in gold.annotated
    ]


def summarize(results: Sequence[FieldResult]) -> Rows:
    """One row per field: counts summed over records, then precision, recall and F1."""
    rows = []
    scored = {r.field for r in results}
    for field in (f for f in FIELDS if f in scored):
        tp = sum(len(r.tp) for r in results if r.field == field)
        fp = sum(len(r.fp) for r in results if r.field == field)
        fn = sum(len(r.fn) for r in results if r.field == field)
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append(
            (
                field,
                tp + fn,
                tp + fp,
                tp,
                fp,
                fn,
                round(precision, 3),
                round(recall, 3),
                round(f1, 3),
            )
        )
    return Rows(COLUMNS, tuple(rows))


@dataclass(frozen=True)
class TaskNames:
    """The names a task of the vocabulary answers to, compared as `expansion_key`s."""

    keys: dict[str, frozenset[str]]  # task name -> the keys of its name and its terms
    task_of: dict[str, str]  # key -> the task it names

    @classmethod
    def of(cls, taxonomy: Taxonomy) -> TaskNames:
        keys = {
            task.name: frozenset(expansion_key(n) for n in (task.name, *task.terms))
            for task in taxonomy.tasks
        }
        return cls(keys, {key: name for name, named in keys.items() for key in named})


def score_record(
    gold: GoldRecord, taxonomy: Taxonomy, tasks: TaskNames | None = None
) -> list[FieldResult]:
    """Run the transform on one gold abstract and compare each field (`tasks`: the
    taxonomy's task names, when the caller scores many records)."""
    record = RawRecord(
        source="gold",
        position=gold.line,
        venue=gold.venue,
        year=gold.year,
        title=gold.title,
        abstract=gold.abstract,
    )
    bundle = transform(record, taxonomy)
    names = tasks or TaskNames.of(taxonomy)
    return [_compare(gold.id, field, gold.items[field], bundle, names) for field in FIELDS]


def _compare(
    record_id: str,
    field: str,
    gold: tuple[Any, ...],
    bundle: PaperBundle,
    tasks: TaskNames,
) -> FieldResult:
    """Match predicted items of one field against the gold items, one to one."""
    if field in ("introduced", "mentioned"):
        predicted = [
            (m.name, set(m.keys) or {method_key(m.name)}) for m in bundle.methods if m.role == field
        ]
        wanted = [(g["name"], {method_key(n) for n in (g["name"], *g["aliases"])}) for g in gold]
        return _match(record_id, field, predicted, wanted, lambda p, g: bool(p & g))
    if field == "acronyms":
        predicted_acr = [
            (f"{a.acronym} = {a.expansion}", (a.acronym, expansion_key(a.expansion)))
            for a in bundle.acronyms
        ]
        wanted_acr = [
            (f"{g['acronym']} = {g['expansion']}", (g["acronym"], expansion_key(g["expansion"])))
            for g in gold
        ]
        return _match(record_id, field, predicted_acr, wanted_acr, lambda p, g: p == g)
    if field == "code_links":
        predicted_url = [
            (link.url, url_key(link.url)) for link in bundle.links if link.kind == "code"
        ]
        wanted_url = [(url, url_key(url)) for url in gold]
        return _match(record_id, field, predicted_url, wanted_url, lambda p, g: p == g)
    if field == "tasks":
        predicted_task = [
            (hit.name, tasks.keys.get(hit.name, frozenset({expansion_key(hit.name)})))
            for hit in bundle.tasks
        ]
        # names copied from the archive may end with their acronym: "Speech Recognition (ASR)"
        wanted_task = [(name, expansion_key(_task_name(name))) for name in gold]
        wanted_task = _one_per_task(wanted_task, tasks)
        return _match(record_id, field, predicted_task, wanted_task, lambda p, g: g in p)
    predicted_topic = [(hit.slug, hit.slug) for hit in bundle.topics]
    # a gold "new:slug" names a leaf the taxonomy lacked when it was annotated
    wanted_topic = [(slug, slug.removeprefix("new:")) for slug in gold]
    return _match(record_id, field, predicted_topic, wanted_topic, lambda p, g: p == g)


def agreement(first_path: str, second_path: str) -> Rows:
    """How far a second reading agrees with a first: the second scored as if it were the
    extractor's output, with `etl eval`'s matching, on the records and fields both annotate."""
    taxonomy = load_taxonomy(tagger="rules")
    tasks = TaskNames.of(taxonomy)
    first = {gold.id: gold for gold in read_gold(first_path)}
    results = []
    for second in read_gold(second_path):
        gold = first.get(second.id)
        if gold is None:
            continue
        reading = _as_bundle(second)
        for field in FIELDS:
            if field in gold.annotated and field in second.annotated:
                results.append(_compare(gold.id, field, gold.items[field], reading, tasks))
    return summarize(results)


def _as_bundle(reading: GoldRecord) -> Any:
    """A reader's annotation in the shape of the transform's output, for `_compare`."""
    methods = [
        MethodMention(item["name"], item.get("kind") or "", role, item["name"], item["aliases"])
        for role in ("introduced", "mentioned")
        for item in reading.items[role]
    ]
    return SimpleNamespace(
        methods=methods,
        acronyms=[Acronym(a["acronym"], a["expansion"]) for a in reading.items["acronyms"]],
        links=[Link(url, "", "code", "reader") for url in reading.items["code_links"]],
        topics=[TopicHit(s.removeprefix("new:"), 1.0, ()) for s in reading.items["topics"]],
        tasks=[
            TaskHit(_task_name(n.removeprefix("new:")), 1.0, ()) for n in reading.items["tasks"]
        ],
    )


def _task_name(name: str) -> str:
    """A gold task name without the acronym or setting the archive appended to it."""
    return SETTING_SUFFIX_RE.sub("", ACRONYM_SUFFIX_RE.sub("", name))


def _one_per_task(wanted: list[tuple[str, str]], tasks: TaskNames) -> list[tuple[str, str]]:
    """Gold task names, one per task of the vocabulary: two archive names that the vocabulary
    holds as one task ("Speech Recognition", "Automatic Speech Recognition") are one task."""
    seen: set[str] = set()
    kept = []
    for label, key in wanted:
        task = tasks.task_of.get(key, key)
        if task not in seen:
            seen.add(task)
            kept.append((label, key))
    return kept


def _match(
    record_id: str,
    field: str,
    predicted: Sequence[tuple[str, Any]],
    gold: Sequence[tuple[str, Any]],
    same: Callable[[Any, Any], bool],
) -> FieldResult:
    """Greedy one-to-one matching in order of appearance."""
    unmatched = list(gold)
    tp: list[str] = []
    fp: list[str] = []
    for label, value in predicted:
        hit = next((g for g in unmatched if same(value, g[1])), None)
        if hit is None:
            fp.append(label)
        else:
            unmatched.remove(hit)
            tp.append(label)
    return FieldResult(
        record_id, field, tuple(tp), tuple(fp), tuple(label for label, _ in unmatched)
    )


def expansion_key(expansion: str) -> str:
    """An expansion compared without case, hyphen/space differences or a plural ending."""
    words = re.sub(r"[\s\-‐‑–]+", " ", expansion.casefold()).strip().split(" ")
    last = words[-1]
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith("s") and not last.endswith("ss") and len(last) > 3:
        last = last[:-1]
    return " ".join([*words[:-1], last])


def url_key(url: str) -> str:
    """A URL compared without scheme differences, a trailing slash or a `.git` suffix."""
    key = re.sub(r"(?i)^(?:https?://)?(?:www\.)?", "", url.strip())
    key = re.sub(r"(?i)(?:\.git)?/*$", "", key)
    host, _, path = key.partition("/")
    return f"{host.lower()}/{path}"


def read_gold(path: str) -> Iterator[GoldRecord]:
    """Gold records of a JSON Lines file, checked line by line with clear messages."""
    try:
        handle = Path(path).open(encoding="utf-8")  # noqa: SIM115 - closed by the `with` below
    except OSError as exc:
        raise GoldFileError(path, f"cannot read the gold file: {exc.strerror or exc}") from exc
    count = 0
    with handle:
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                count += 1
                yield _gold_record(path, number, line)
        except UnicodeDecodeError as exc:
            raise GoldFileError(path, f"not UTF-8 text: {exc.reason}") from exc
    if count == 0:
        raise GoldFileError(path, "no gold records (expected one JSON object per line)")


def _gold_record(path: str, line: int, text: str) -> GoldRecord:
    """One line of a gold file, validated."""

    def fail(message: str) -> GoldFileError:
        return GoldFileError(path, message, line=line)

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON: {exc.msg} (column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise fail("expected a JSON object")
    abstract = data.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        raise fail("`abstract` must be a non-empty string")
    year = data.get("year")
    if year is not None and (not isinstance(year, int) or isinstance(year, bool)):
        raise fail("`year` must be an integer")
    venue = data.get("venue")
    if venue is not None and not isinstance(venue, str):
        raise fail("`venue` must be a string")
    title = data.get("title")
    if title is not None and not isinstance(title, str):
        raise fail("`title` must be a string")
    items: dict[str, tuple[Any, ...]] = {}
    for field in FIELDS:
        value = data.get(field, [])
        if not isinstance(value, list):
            raise fail(f"`{field}` must be a list")
        items[field] = tuple(_gold_item(field, item, fail) for item in value)
    return GoldRecord(
        str(data.get("id", f"line {line}")),
        line,
        venue,
        year,
        title or None,
        abstract,
        items,
        frozenset(field for field in FIELDS if field in data),
    )


def _gold_item(field: str, item: Any, fail: Callable[[str], GoldFileError]) -> Any:
    """One annotated item, checked against the shape its field needs."""
    if field in ("introduced", "mentioned"):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            raise fail(f"`{field}` items must be objects with a non-empty `name`")
        aliases = item.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise fail(f"`{field}` item {item['name']!r}: `aliases` must be a list of strings")
        return {"name": item["name"], "kind": item.get("kind"), "aliases": tuple(aliases)}
    if field == "acronyms":
        if not (
            isinstance(item, dict)
            and isinstance(item.get("acronym"), str)
            and isinstance(item.get("expansion"), str)
        ):
            raise fail("`acronyms` items must be objects with `acronym` and `expansion` strings")
        return {"acronym": item["acronym"], "expansion": item["expansion"]}
    if not isinstance(item, str) or not item:
        raise fail(f"`{field}` items must be non-empty strings")
    return item


def misses(results: Sequence[FieldResult]) -> Iterator[str]:
    """Readable lines for every record and field with a spurious or missed item."""
    for result in results:
        if result.fp or result.fn:
            yield (
                f"{result.record:<10} {result.field:<11} fp={list(result.fp)} fn={list(result.fn)}"
            )


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m etl.evaluate GOLD [--taxonomy FILE] [--tagger model|rules] [--misses]`: the
    table, and the misses."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m etl.evaluate", description=main.__doc__)
    parser.add_argument("gold")
    parser.add_argument("--taxonomy")
    parser.add_argument("--tagger", choices=("model", "rules"), default="model")
    parser.add_argument("--misses", action="store_true", help="print per-record fp/fn")
    args = parser.parse_args(argv)
    results = evaluate_details(args.gold, args.taxonomy, args.tagger)
    if args.misses:
        for line in misses(results):
            print(line)
    table = summarize(results)
    print("  ".join(f"{c:>9}" for c in table.columns))
    for row in table.rows:
        print("  ".join(f"{v!s:>9}" for v in row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Curate the packaged task vocabulary (`etl/data/tasks.toml`) from the Papers with Code archive.

    python tools/curate_tasks.py TASKS_CSV [--datasets DATASETS_TXT] -o etl/data/tasks.toml

TASKS_CSV has the columns `task, domain, datasets` (a task name, the archive's domain and how
many datasets the archive tied to the task); DATASETS_TXT lists dataset names, one a line.
The archive is noisy, so a task is kept only when it reads as a task:

- names are cleaned: a trailing acronym in parentheses becomes a term (`Visual Question
  Answering (VQA)` -> name `Visual Question Answering`, term `VQA`); names with other
  parentheses, slashes, underscores or digits (other than `2D`, `3D`, ...) are dropped;
- names of language pairs (`Translation deu-afr`) are dropped;
- case, hyphen and plural variants merge into one task (`object-detection`, `Object
  Detection`), and so do names that differ by a leading "Automatic", an "and" between words
  or a pair of SAME_TASK (`Speech Recognition`, `Automatic Speech Recognition`); the task
  is named as the variant with the most datasets, the others become its terms;
- a single word is kept only when the archive ties several datasets to it and it is not a
  generic word (`Segmentation`, `Retrieval`); a name of several words is kept (the archive's
  dataset counts are too sparse to judge them: `Sentiment Analysis` has none);
- a name that is a dataset or benchmark (`GSM8K`) or a thing rather than something done
  (`Large Language Model`, `Knowledge Graphs`), a broad way of learning (`Transfer Learning`:
  the topics name those) or a short name merged into a longer one (`Summarization`) is
  dropped;
- a few frequent tasks get the other names papers use for them (`EXTRA_TERMS`: `SLAM`,
  `grasping`, `bandit`), and the benchmark datasets that are their standard test
  (`DATASETS`: SQuAD for question answering);
- each task goes under the taxonomy topic its name matches best, else the area of its domain;
  a task that neither places is dropped.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from etl.transform.topics import Taxonomy, assign_topics, load_taxonomy

MIN_DATASETS_ONE_WORD = 5
MIN_OWN_USES = 2  # a task name of the readers' own is added once used this often
ACRONYM_RE = re.compile(r"^(.*\S)\s*\(([A-Z][A-Za-z0-9-]{1,9})\)$")
BAD_CHARS_RE = re.compile(r"[()/_+*,:;&@#<>\[\]\"']")
ACRONYM_WORD_RE = re.compile(r"\b[A-Z]{2,}\b")
DIMENSION_RE = re.compile(r"^[1-9]D$", re.IGNORECASE)
LANGUAGE_PAIR_RE = re.compile(r"\b[a-z]{2,3}-[a-z]{2,3}\b")  # "Translation deu-afr"
GENERIC = {
    # broad ways of learning: the topics name them, papers do not address them as tasks
    "reinforcement learning",
    "contrastive learning",
    "self supervised learning",
    "transfer learning",
    "representation learning",
    "deep learning",
    "machine learning",
    "unsupervised learning",
    "supervised learning",
    "graph representation learning",
    # methods and properties, not something a paper sets out to do
    "bayesian inference",
    "zero shot generalization",
    "cross modal alignment",
    "multi class classification",
    # merged into a longer name (see EXTRA_TERMS)
    "summarization",
    "pos tagging",
    "segmentation",
    "retrieval",
    "denoising",
    "translation",
    "clustering",
    "reconstruction",
    "prediction",
    "math",
    "memorization",
    "misinformation",
    "hallucination",
    "attribute",
    "form",
    "descriptive",
    "diagnostic",
    "anatomy",
    "ethics",
    "negation",
    "rhythm",
    "astronomy",
    "epidemiology",
    "econometrics",
    "geophysics",
    "multiple-choice",
    "starcraft",
    "caricature",
    "classification",
    "detection",
    "recognition",
    "generation",
    "regression",
    "ranking",
    "decision making",
    "management",
    "video",
    "image",
    "audio",
    "text",
    "language",
    "music",
    "speech",
    "robotics",
    "optimization",
    "tracking",
    "inference",
    "reasoning",
    "planning",
    "quantization",
    "compression",
    "sentence",
    "attention",
    "navigation",
    "ai",
    "physics",
    "chemistry",
    "biology",
    "medical",
    "marketing",
    "sports",
    "art",
    "games",
    "mathematics",
    "experimental design",
    "miscellaneous",
    "general knowledge",
    "general classification",
    "benchmarking",
    "model selection",
    "object",
    "scene",
    "style",
    "counting",
    "calibration",
}
# A name ending in one of these names a thing, not something papers do (`Large Language
# Model`, `Knowledge Graphs`, `Time Series`, `Point Clouds`).
THING_HEADS = {
    "model",
    "knowledge",
    "graph",
    "series",
    "tomography",
    "interval",
    "network",
    "data",
    "dataset",
    "benchmark",
    "corpus",
    "embedding",
    "annotation",
    "cloud",
    "efficiency",
    "mining",
    "augmentation",
    "distillation",
    "expression",
    "bound",
    "lingual",
}
# Other names papers use for frequent tasks (added to the task's terms when it is kept).
EXTRA_TERMS = {
    "Multi-Armed Bandits": ["bandit", "multi-armed bandit", "contextual bandit", "bandit problem"],
    "Robot Manipulation": [
        "robotic manipulation",
        "robot manipulation",
        "manipulation task",
        "manipulation skill",
        "object manipulation",
        "non-prehensile manipulation",
        "dexterous manipulation",
    ],
    "Robotic Grasping": ["grasping", "grasp synthesis", "grasp detection", "robot grasping"],
    "Simultaneous Localization and Mapping": ["SLAM"],
    "Image-to-Image Translation": ["image translation", "domain mapping"],
    "Click-Through Rate Prediction": ["CTR prediction", "click-through rate prediction"],
    "Hate Speech Detection": ["hate speech"],
    "Fact Checking": ["fact-checking", "fact verification", "claim verification"],
    "Spoken Language Understanding": ["SLU", "speech understanding"],
    "Open-Domain Dialog": ["open-domain dialogue", "open-domain conversation"],
    "Image Editing": ["attribute editing", "image attribute editing"],
    "Surface Normal Estimation": ["normal estimation"],
    "6D Pose Estimation": ["6D object pose estimation", "6D pose", "6D object pose"],
    "Model Predictive Control": ["MPC", "model predictive contouring control"],
    "Change Point Detection": ["change-point detection", "changepoint detection"],
    "Image Generation": ["image synthesis"],
    "Speech Separation": ["speech separation", "speaker separation"],
    "Music Source Separation": ["music separation"],
    "Text Style Transfer": ["formality transfer"],
    "Morphological Analysis": ["morphological segmentation", "morphological analysis"],
    "Dialogue State Tracking": ["DST"],
    "Depression Detection": ["depression"],
    "Text Summarization": ["summarization"],
    "Part-Of-Speech Tagging": ["POS tagging", "POS induction", "part-of-speech induction"],
    "Recommendation Systems": ["recommender system", "recommendation system", "recommendation"],
    "Adversarial Defense": ["adversarial defense", "robustness against adversarial attack"],
    "Conversation Disentanglement": ["dialogue disentanglement", "conversation disentangling"],
    "Cross-Lingual Abstractive Summarization": ["cross-lingual summarization"],
    "Backdoor Defense": ["backdoor removal", "backdoor mitigation", "defense against backdoor"],
}
# Archive names of one task, written two ways (compared by `task_key`).
SAME_TASK = {"text to speech synthesis": "speech synthesis", "text summarization": "summarization"}
# Frequent tasks whose names match no topic and whose domain is "other".
PLACES = {"Adversarial Defense": "adversarial-robustness", "Open Set Learning": "anomaly-detection"}
# Widely used benchmark datasets, by the task they are the standard test of: a paper that
# reports results on SQuAD works on question answering even when it never says so.
DATASETS = {
    "Image Classification": [
        "ImageNet",
        "ImageNet-1k",
        "CIFAR-10",
        "CIFAR-100",
        "CIFAR10",
        "CIFAR100",
        "MNIST",
        "Fashion-MNIST",
        "SVHN",
        "Tiny-ImageNet",
    ],
    "Object Detection": ["PASCAL VOC", "MS COCO", "Objects365", "LVIS"],
    "Semantic Segmentation": ["Cityscapes", "ADE20K", "PASCAL-Context"],
    "3D Semantic Segmentation": ["S3DIS", "SemanticKITTI", "ScanNet"],
    "Question Answering": ["SQuAD", "SQuAD 2.0", "TriviaQA", "NewsQA", "Natural Questions"],
    "Multi-hop Question Answering": ["HotpotQA", "2WikiMultiHopQA", "MuSiQue"],
    "Natural Language Inference": ["MNLI", "MultiNLI", "SNLI", "ANLI"],
    "Natural Language Understanding": ["GLUE", "SuperGLUE"],
    "Machine Translation": ["WMT14", "WMT16", "IWSLT", "FLORES-200"],
    "Text Summarization": ["CNN/DailyMail", "CNN/DM", "XSum"],
    "Sentiment Analysis": ["SST-2", "SST-5", "IMDb reviews"],
    "Named Entity Recognition": ["CoNLL-2003", "OntoNotes 5.0"],
    "Relation Extraction": ["TACRED", "FewRel", "DocRED"],
    "Language Modelling": ["WikiText-103", "WikiText-2", "One Billion Word"],
    "Speech Recognition": ["LibriSpeech", "Switchboard", "Common Voice", "TIMIT"],
    "Speech Separation": ["WSJ0-2mix", "WSJ0-3mix", "Libri2Mix", "WHAM!"],
    "Music Source Separation": ["MUSDB18", "MUSDB18-HQ"],
    "Speaker Verification": ["VoxCeleb1", "VoxCeleb2"],
    "Audio Classification": ["ESC-50", "AudioSet"],
    "Recommendation Systems": ["MovieLens", "MovieLens-1M", "Amazon-Book", "Yelp2018"],
    "Node Classification": ["Cora", "CiteSeer", "ogbn-arxiv", "ogbn-products"],
    "Graph Classification": ["TUDataset", "ogbg-molhiv"],
    "Action Recognition": ["Kinetics-400", "UCF101", "HMDB51", "Something-Something V2"],
    "3D Human Pose Estimation": ["Human3.6M", "MPI-INF-3DHP"],
    "Monocular Depth Estimation": ["NYU Depth V2", "NYUv2"],
    "Video Object Segmentation": ["DAVIS 2017", "YouTube-VOS"],
    "Multi-Object Tracking": ["MOT17", "MOT20"],
    "Visual Object Tracking": ["LaSOT", "GOT-10k", "TrackingNet"],
    "Visual Question Answering": ["VQAv2", "VQA v2", "GQA", "OK-VQA"],
    "Referring Expression Comprehension": ["RefCOCO", "RefCOCO+", "RefCOCOg"],
    "Image Captioning": ["NoCaps", "COCO Captions"],
    "Math Word Problem Solving": ["GSM8K", "SVAMP", "MAWPS"],
    "Code Generation": ["HumanEval", "MBPP", "APPS"],
    "Text-To-SQL": ["Spider", "WikiSQL", "BIRD-SQL"],
    "Passage Retrieval": ["MS MARCO"],
    "Person Re-Identification": ["Market-1501", "DukeMTMC-reID", "MSMT17"],
    "Face Recognition": ["LFW", "MegaFace", "IJB-C"],
    "Optical Flow Estimation": ["FlyingChairs", "MPI Sintel"],
    "Time Series Forecasting": ["ETTh1", "ETTm1"],
    "Molecular Property Prediction": ["QM9", "MoleculeNet"],
    "Offline RL": ["D4RL"],
}
DOMAIN_AREAS = {"cv": "cv", "nlp": "nlp", "audio": "speech"}
SPELLINGS = (("modelling", "modeling"), ("behaviour", "behavior"), ("optimisation", "optimization"))


@dataclass
class Candidate:
    """A task name with its variants, merged by `key`."""

    name: str
    domain: str
    datasets: int
    terms: list[str] = field(default_factory=list)


def key(name: str) -> str:
    """A name compared without case, hyphens or a plural last word."""
    words = name.casefold().replace("-", " ").split()
    last = words[-1]
    if last.endswith("ies") and len(last) > 4 and last not in ("series", "species"):
        last = last[:-3] + "y"
    elif (
        last.endswith("s")
        and not last.endswith(("ss", "is", "us", "series", "species"))
        and len(last) > 3
    ):
        last = last[:-1]
    for british, american in SPELLINGS:
        words = [american if w == british else w for w in words]
    return " ".join([*words[:-1], last])


def task_key(name: str) -> str:
    """Names of one task compared: `key`, and "Automatic" before a name, "and" between
    words ("Vision and Language Navigation" is "Vision-Language Navigation") and the
    pairs of SAME_TASK ignored."""
    words = [w for w in key(name).split() if w != "and"]
    if len(words) > 1 and words[0] == "automatic":
        words = words[1:]
    joined = " ".join(words)
    for variant, same in SAME_TASK.items():
        joined = joined.replace(variant, same)
    return joined


def clean(name: str) -> tuple[str, list[str]] | None:
    """A usable name and its acronym terms, or None for a name that is not a task name."""
    name = " ".join(name.split())
    terms = []
    match = ACRONYM_RE.match(name)
    if match:
        name, acronym = match.group(1), match.group(2)
        if len(acronym) >= 3 and acronym.isupper():
            terms.append(acronym)
    if BAD_CHARS_RE.search(name) or LANGUAGE_PAIR_RE.search(name):
        return None
    if len(name) < 4 or len(name.split()) > 6:
        return None
    if any(c.isdigit() for w in name.split() if not DIMENSION_RE.match(w) for c in w):
        return None
    if name.islower() or (name.isupper() and len(name.split()) > 1):
        name = " ".join(w if DIMENSION_RE.match(w) else w.capitalize() for w in name.split())
        name = name.replace("-", " ") if "-" in name and " " not in name else name
        name = re.sub(r"(?<=-)(\w)", lambda m: m.group(1).upper(), name)
    return name, terms


def merged(rows: Iterable[dict[str, str]]) -> dict[str, Candidate]:
    """Rows merged by `task_key`: the name with the most datasets wins (a generic word never
    does: "Summarization" is a term of "Text Summarization"), the others become terms."""
    found: dict[str, Candidate] = {}
    for row in rows:
        cleaned = clean(row["task"])
        if cleaned is None:
            continue
        name, terms = cleaned
        datasets = int(row.get("datasets") or 0)
        candidate = found.get(task_key(name))
        if candidate is None:
            found[task_key(name)] = Candidate(name, row.get("domain") or "", datasets, terms)
            continue
        if key(name) not in GENERIC and (
            datasets > candidate.datasets or key(candidate.name) in GENERIC
        ):
            candidate.terms.append(candidate.name)
            candidate.name, candidate.domain = name, row.get("domain") or candidate.domain
        elif name != candidate.name:
            candidate.terms.append(name)
        candidate.datasets += datasets
        candidate.terms.extend(t for t in terms if t not in candidate.terms)
    return found


def kept(candidates: dict[str, Candidate], datasets: set[str]) -> dict[str, Candidate]:
    """Candidates that read as tasks (see the module's notes)."""
    chosen = {}
    for c in candidates.values():
        k = key(c.name)
        one_word = len(k.split()) == 1
        named_data = one_word and c.name.casefold() in datasets  # GSM8K, not Text-To-SQL
        if k in GENERIC or k.split()[-1] in THING_HEADS or named_data:
            continue
        if one_word and c.datasets < MIN_DATASETS_ONE_WORD:
            continue
        chosen[k] = c
    return chosen


def spelling_terms(candidate: Candidate) -> list[str]:
    """Terms in the other spelling (`modelling`/`modeling`), then the merged variants."""
    terms = [t for t in candidate.terms if key(t) != key(candidate.name) or t.isupper()]
    terms += [t for t in EXTRA_TERMS.get(candidate.name, []) if key(t) != key(candidate.name)]
    lowered = candidate.name.casefold()
    for british, american in SPELLINGS:
        for a, b in ((british, american), (american, british)):
            if a in lowered:
                terms.append(lowered.replace(a, b))
    unique: dict[str, str] = {}
    for term in terms:  # one of each, whatever the case; acronyms as written
        unique.setdefault(term if term.isupper() else term.casefold(), term)
    return list(unique.values())


def with_short_forms(candidates: Sequence[Candidate]) -> None:
    """A name holding another task's name gets that task's short forms in its place
    ("Unsupervised Part-Of-Speech Tagging" also as "Unsupervised POS tagging")."""
    short: list[tuple[str, re.Pattern[str], list[str]]] = []
    for candidate in candidates:
        forms = [t for t in spelling_terms(candidate) if ACRONYM_WORD_RE.search(t)]
        if forms and len(candidate.name.split()) > 1:
            long = candidate.name
            pattern = re.compile(rf"(?<![\w-]){re.escape(long)}(?![\w-])", re.IGNORECASE)
            short.append((long, pattern, forms))
    for candidate in candidates:
        for long, pattern, forms in short:
            if long != candidate.name and pattern.search(candidate.name):
                candidate.terms.extend(pattern.sub(form, candidate.name) for form in forms)


def topic_of(candidate: Candidate, taxonomy: Taxonomy) -> str | None:
    """The leaf topic the task's name matches best, else its domain's area."""
    if candidate.name in PLACES:
        return PLACES[candidate.name]
    hits = assign_topics(candidate.name, taxonomy)
    leaves = [h.slug for h in hits if h.slug in taxonomy.leaves]
    if leaves:
        return leaves[0]
    return DOMAIN_AREAS.get(candidate.domain)


def attested(golds: Sequence[str], leaves: frozenset[str]) -> dict[str, tuple[str, Counter[str]]]:
    """Task names readers gave in gold files, by `task_key`: the name as written and the leaf
    topics of the papers they gave it to. An archive name counts once used; a name of our own
    (`new:Name`) once used MIN_OWN_USES times."""
    names: dict[str, tuple[str, Counter[str]]] = {}
    uses: Counter[str] = Counter()
    for gold in golds:
        for line in Path(gold).read_text("utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            topics = [t for t in record.get("topics", []) if t in leaves]
            for task in record.get("tasks", []):
                own = task.startswith("new:")
                cleaned = clean(task.removeprefix("new:"))
                if cleaned is None:
                    continue
                k = task_key(cleaned[0])
                uses[k] += 1 if own else MIN_OWN_USES
                names.setdefault(k, (cleaned[0], Counter()))[1].update(topics)
    return {k: v for k, v in names.items() if uses[k] >= MIN_OWN_USES}


def with_attested(
    placed: list[tuple[Candidate, str]],
    candidates: dict[str, Candidate],
    named: dict[str, tuple[str, Counter[str]]],
) -> int:
    """Adds the tasks readers named that the curated list lacks, each under the topic
    readers gave its papers most often; the number added."""
    present = {task_key(c.name) for c, _ in placed}
    present |= {task_key(t) for c, _ in placed for t in c.terms}
    added = 0
    for k, (name, topics) in sorted(named.items()):
        # readers' names pass the archive's filters but its dataset counts: a single word or
        # a broad way of learning is still no task the rules should look for
        if k in present or not topics or len(k.split()) == 1 or k in GENERIC:
            continue
        candidate = candidates.get(k) or Candidate(name, "", 0)
        placed.append((candidate, topics.most_common(1)[0][0]))
        present.add(k)
        added += 1
    return added


def render(tasks: Sequence[tuple[Candidate, str]]) -> str:
    """The TOML file, with its attribution."""
    lines = [
        "# Tasks that papers address, each under a topic slug of taxonomy.toml.",
        "#",
        "# Derived from the task names of the Papers with Code archive (paperswithcode.com,",
        "# closed in July 2025; its data was published under the CC BY-SA 4.0 licence:",
        "# https://creativecommons.org/licenses/by-sa/4.0/). This file, a curated selection",
        "# of those names, is shared under the same licence. Tasks named by this project's",
        "# readers in its gold annotations are added (`--attested`): archive names, and a few",
        "# names of the readers' own used at least twice. Written by tools/curate_tasks.py;",
        "# edit that script's rules rather than this file.",
        "#",
        "# Format: [[task]] tables with `name` (as the archive spelled it), `topic` (a slug of",
        "# the taxonomy) and optional `terms` (other names of the task: merged variants,",
        "# acronyms, other spellings), matched like topic terms, and optional `datasets`",
        "# (benchmarks that are the standard test of the task: results on them are weaker",
        "# evidence of the task than its name). A taxonomy file given to `etl run --taxonomy`",
        "# may hold its own [[task]] tables in the same format.",
        "",
    ]
    for candidate, topic in tasks:
        lines.append("[[task]]")
        lines.append(f"name = {quoted(candidate.name)}")
        lines.append(f"topic = {quoted(topic)}")
        terms = spelling_terms(candidate)
        if terms:
            lines.append("terms = [" + ", ".join(quoted(t) for t in terms) + "]")
        datasets = DATASETS.get(candidate.name)
        if datasets:
            lines.append("datasets = [" + ", ".join(quoted(d) for d in datasets) + "]")
        lines.append("")
    return "\n".join(lines)


def quoted(value: str) -> str:
    """A TOML basic string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: read the archive's task list, write the curated TOML."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks_csv")
    parser.add_argument("--datasets", help="dataset names, one a line: tasks named so are dropped")
    parser.add_argument(
        "--attested",
        action="append",
        default=[],
        metavar="GOLD",
        help="a gold file: tasks its readers named are kept (repeatable)",
    )
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    with open(args.tasks_csv, encoding="utf-8", newline="") as handle:
        candidates = merged(csv.DictReader(handle))
    datasets: set[str] = set()
    if args.datasets:
        text = Path(args.datasets).read_text("utf-8")
        datasets = {line.strip().casefold() for line in text.splitlines() if line.strip()}
    taxonomy = load_taxonomy(Path(__file__).parent.parent / "etl" / "data" / "taxonomy.toml")
    placed = [
        (c, topic)
        for c in sorted(kept(candidates, datasets).values(), key=lambda c: (-c.datasets, c.name))
        if (topic := topic_of(c, taxonomy))
    ]
    added = with_attested(placed, candidates, attested(args.attested, taxonomy.leaves))
    with_short_forms([c for c, _ in placed])
    unknown = set(DATASETS) - {c.name for c, _ in placed}
    if unknown:  # a typo in DATASETS, or a task list other than the archive's
        print(f"note: DATASETS names tasks not kept: {', '.join(sorted(unknown))}")
    Path(args.output).write_text(render(placed), "utf-8")
    print(f"{len(placed)} tasks written to {args.output} ({added} named by readers)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

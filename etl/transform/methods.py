"""Named artifacts (methods, models, benchmarks, datasets ...) a paper introduces or mentions."""

from __future__ import annotations

import re
import unicodedata

from etl.models import Acronym, MethodMention

# A name as authors write one: mixed case (TimeFuse, CommVQ), capitals (MAPLE), or with digits
# and hyphens (GPT-4, PDI-CP, LLaMA-3.1). Plain capitalised words (Large, Time) are not names.
NAME = r"(?:[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*)"
NAME_RE = re.compile(rf"(?<![\w-]){NAME}(?![\w-])")
INTRO_VERBS = (
    r"(?:we|this\s+(?:paper|work)|here\s+we)\s+(?:also\s+|further\s+|then\s+|first\s+)?"
    r"(?:propose|introduce|present|develop|design|build|construct|release|curate|create|"
    r"contribute|offer|establish|formulate|devise)s?d?"
)
INTRO_PATTERNS = [
    re.compile(rf"(?i:{INTRO_VERBS})\b[^.;:]{{0,80}}?(?<![\w-])({NAME})(?=[\s,.;:)]|$)"),
    re.compile(rf"(?i:\b(?:called|named|dubbed|termed|coined|namely|denoted(?:\s+as|\s+by)?))"
               rf"\s+[\"“']?({NAME})"),
    re.compile(rf"(?<![\w-])({NAME}),\s+(?i:a|an)\s+(?i:novel|new|simple|general|unified|"
               r"scalable|efficient|principled|lightweight|flexible|first|plug-and-play)"),
    re.compile(rf"\b(?i:our|the\s+proposed)\s+(?:method|model|framework|approach|algorithm|"
               rf"benchmark|dataset|system|architecture)?,?\s*({NAME})(?![\w-])"),
]
KIND_WORDS = {
    "benchmark": "benchmark", "benchmarks": "benchmark", "dataset": "dataset",
    "datasets": "dataset", "corpus": "dataset", "suite": "benchmark", "loss": "loss",
    "objective": "loss", "optimizer": "optimizer", "optimiser": "optimizer", "metric": "metric",
    "score": "metric", "measure": "metric", "model": "model", "models": "model",
    "llm": "model", "transformer": "architecture", "architecture": "architecture",
    "network": "architecture", "framework": "framework", "toolkit": "framework",
    "library": "framework", "algorithm": "algorithm", "method": "method", "approach": "method",
    "technique": "method", "attack": "method", "agent": "model", "environment": "benchmark",
}
KNOWN_KINDS = {
    "adam": "optimizer", "adamw": "optimizer", "sgd": "optimizer", "signsgd": "optimizer",
    "rmsprop": "optimizer", "adagrad": "optimizer", "lion": "optimizer", "muon": "optimizer",
    "imagenet": "dataset", "cifar-10": "dataset", "cifar-100": "dataset", "mnist": "dataset",
    "coco": "dataset", "gsm8k": "benchmark", "mmlu": "benchmark", "humaneval": "benchmark",
}
# Field-wide acronyms, units and words that look like names but are not named artifacts.
GENERIC = {
    "ai", "ml", "dl", "rl", "nlp", "cv", "llm", "llms", "vlm", "vlms", "mllm", "mllms", "lm",
    "lms", "gnn", "gnns", "cnn", "cnns", "rnn", "rnns", "dnn", "dnns", "mlp", "mlps", "gan",
    "gans", "vae", "vaes", "sota", "gpu", "gpus", "cpu", "cpus", "tpu", "tpus", "api", "apis",
    "iid", "i.i.d", "ood", "kl", "pde", "pdes", "ode", "odes", "sde", "sdes", "nn", "nns",
    "gb", "mb", "kb", "tb", "ms", "fps", "flops", "ii", "iii", "iv", "vi", "vii", "viii", "ix",
    "xi", "us", "eu", "uk", "usa", "ceo", "phd", "url", "http", "https", "www", "github",
    "arxiv", "pdf", "ir", "qa", "os", "io", "ui", "id", "ids", "so", "rgb", "3d", "2d", "1d",
    "4d", "ar", "vr", "iot", "hpc", "sql", "kv", "ci", "roc", "auc", "mse", "mae", "rmse",
    "ssim", "psnr", "bleu", "f1", "top-1", "top-5", "e.g", "i.e", "et", "al", "vs", "etc",
}


def is_name(token: str) -> bool:
    """A token shaped like a proper name of an artifact rather than an ordinary word."""
    if len(token) < 2 or token.lower() in GENERIC or token.isdigit():
        return False
    if re.fullmatch(r"[\d.,%x×-]+[A-Za-z]{0,2}", token):  # numbers and units: 8B, 60%, 3x
        return False
    letters = [c for c in token if c.isalpha()]
    if not letters:
        return False
    uppers = sum(c.isupper() for c in letters)
    if uppers >= 2:
        return True
    if uppers == 1 and not token[0].isupper():  # word with an inner capital: wav2Vec
        return True
    return bool(re.search(r"\d", token)) and token[0].isupper() and len(letters) >= 2


def method_key(name: str) -> str:
    """Key under which spellings of one artifact merge: case, hyphens, spaces and plurals."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = re.sub(r"[\s\-_./]+", "", text)
    return text[:-1] if len(text) > 3 and text.endswith("s") and not text.endswith("ss") else text


def find_methods(text: str, emphasized: list[str], acronyms: tuple[Acronym, ...]) -> tuple[MethodMention, ...]:
    """Introduced and mentioned artifacts of a cleaned text, one mention per artifact."""
    expansions = {a.acronym: a.expansion for a in acronyms}
    introduced = _introduced_names(text, emphasized, expansions)
    mentions: dict[str, MethodMention] = {}
    for name in introduced:
        aliases = (expansions[name],) if name in expansions else ()
        mentions[method_key(name)] = _mention(name, "introduced", text, aliases)
    concept_acronyms = {a for a, e in expansions.items() if not _is_titled(e)}
    for match in NAME_RE.finditer(text):
        token = match.group(0).rstrip(".")
        key = method_key(token)
        if key in mentions or not is_name(token) or token in concept_acronyms:
            continue
        if _is_sentence_word(text, match.start(), token):
            continue
        aliases = (expansions[token],) if token in expansions else ()
        mentions[key] = _mention(token, "mentioned", text, aliases)
    return tuple(mentions.values())


def _mention(name: str, role: str, text: str, aliases: tuple[str, ...]) -> MethodMention:
    """A mention with the keys its spellings merge on."""
    keys = tuple(dict.fromkeys(method_key(n) for n in (name, *aliases)))
    return MethodMention(name, _kind(name, text), role, name, aliases, keys)


def _introduced_names(text: str, emphasized: list[str], expansions: dict[str, str]) -> list[str]:
    """Names the paper presents as its own: cue phrases and emphasised names."""
    names: list[str] = []
    for pattern in INTRO_PATTERNS:
        for match in pattern.finditer(text):
            token = match.group(1).rstrip(".")
            if is_name(token) and token not in names:
                names.append(token)
    for span in emphasized:
        if is_name(span) and " " not in span and span not in names:
            names.append(span)
    return [n for n in names if n.lower() not in GENERIC]


def _kind(name: str, text: str) -> str:
    """The kind of an artifact, from a known name or the noun written after it."""
    known = KNOWN_KINDS.get(name.lower())
    if known:
        return known
    after = re.search(rf"(?<![\w-]){re.escape(name)}\s+(?:\w+\s+)?([A-Za-z]+)", text)
    if after:
        kind = KIND_WORDS.get(after.group(1).lower())
        if kind:
            return kind
    return "method"


def _is_titled(expansion: str) -> bool:
    """An expansion written as a proper name (`Rotary Position Embedding`), not a concept."""
    words = [w for w in re.split(r"[\s-]+", expansion) if w and w[0].isalpha()]
    return bool(words) and sum(w[0].isupper() for w in words) >= max(1, len(words) - 1)


def _is_sentence_word(text: str, start: int, token: str) -> bool:
    """A capitalised ordinary word at the start of a sentence (never true for mixed-case names)."""
    if sum(c.isupper() for c in token) > 1 or any(c.isdigit() for c in token):
        return False
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?:"

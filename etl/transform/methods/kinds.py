"""The kind of an artifact (dataset, benchmark, model, method ...): from a noun beside it, the
list it stands in, or the shape of its name."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from etl.transform.acronyms import singular_word
from etl.transform.methods.tokens import NUM, PUNCT, STRONG, TITLE, Text
from etl.transform.methods.vocabulary import (
    CLASS_NOUN_EXTRAS,
    COORDINATORS,
    KIND_WORDS,
    KNOWN_DATASETS,
    LIST_GLUE,
    OBJECT_STOPS,
)

SIZE_SUFFIX_RE = re.compile(r"[-\s]\d+(?:\.\d+)?(?:x\d+)?[BM](?:$|-)")
# Case is kept: `ADAM` (a dataset) is not `Adam` (an optimizer).
KNOWN_KEY_IGNORED_RE = re.compile(r"[\s\-_./’']+")


@lru_cache(maxsize=8192)
def known_key(name: str) -> str:
    """A name compared with the known names: spaces, hyphens and dots ignored, case kept."""
    return KNOWN_KEY_IGNORED_RE.sub("", unicodedata.normalize("NFKC", name))


KNOWN_DATASET_KEYS = frozenset(map(known_key, KNOWN_DATASETS))


def known_dataset(name: str) -> bool:
    """A known dataset or benchmark name (`etl/data/methods/datasets.txt`)."""
    return known_key(name) in KNOWN_DATASET_KEYS


# Model families show in their names: -Net, -former, BERT, GPT, LLaMA, T5, ViT, -LM, -Instruct.
MODEL_SHAPE_RE = re.compile(
    r"(?:net|former|bert|gpt|llama|t5|vit|lm|instruct|chat|coder)(?:[-\d.]|$)"
)


def _kinds_by_word() -> dict[str, str]:
    """The kind of every lower-case word whose `singular_word` is a kind noun (`datasets`,
    `strategies`): one lookup in place of a call and a lookup per word.

    `singular_word` keeps a lower-case word or drops its `s`, `es` or `ies` (adding `y`), so a
    noun's only candidates are these four; each is kept if `singular_word` says so.
    """
    kinds: dict[str, str] = {}
    for noun in KIND_WORDS:
        for form in (noun, noun + "s", noun + "es", noun[:-1] + "ies"):
            kind = KIND_WORDS.get(singular_word(form))
            if kind:
                kinds[form] = kind
    return kinds


# KIND_WORDS.get(singular_word(word)) for a lower-case word: KIND_OF_WORD.get(word).
KIND_OF_WORD = _kinds_by_word()
# Nouns after which `, X and Y` lists the named instances (`two algorithms, PDI-CP and JDI-CP`).
LIST_NOUNS = frozenset(KIND_WORDS) | {w + "s" for w in KIND_WORDS} | {"approaches", "strategies"}
# Plural nouns after an acronym that make it a class: `pointwise information (PI) measures`.
CLASS_NOUNS = frozenset(w + "s" for w in KIND_WORDS) | CLASS_NOUN_EXTRAS


def kind_before(t: Text, i: int) -> str | None:
    """The kind noun closest before token `i` in its clause (`a framework called X`)."""
    for j in range(i - 1, max(-1, i - 5), -1):
        if t.shapes[j] == PUNCT and t.words[j] != ",":
            return None
        kind = KIND_OF_WORD.get(t.lower[j])
        if kind:
            return kind
    return None


def kind_after(t: Text, i: int) -> str | None:
    """The kind noun of what follows: `, a novel framework`, `benchmark`, `datasets`."""
    j = i
    if j < t.n and t.words[j] == ",":
        j += 1
    for k in range(j, min(t.n, j + 8)):
        low = t.lower[k]
        kind = KIND_OF_WORD.get(low)
        if kind:
            return kind
        if t.shapes[k] == PUNCT or low in OBJECT_STOPS:
            return None
    return None


def mention_kind(t: Text, first: int, last: int, name: str) -> str:
    """The kind of a mention: a noun after it or its list, one before it, or its shape.

    `MSD Pancreas and NIH Pancreas-CT datasets`, `models such as StarCoder2-7B`, and a name
    evaluated `on` (`On LLFF, Mip-NeRF 360 and DTU`) is a dataset.
    """
    j = last + 1
    while j < t.n and j <= last + 10:
        low = t.lower[j]
        kind = KIND_OF_WORD.get(low)
        if kind:
            return kind
        if not (t.shapes[j] in (STRONG, TITLE, NUM) or low in COORDINATORS):
            break
        j += 1
    j = first - 1
    while j >= 0 and j >= first - 12:
        low = t.lower[j]
        kind = KIND_OF_WORD.get(low)
        if kind:
            return kind
        if low == "on" and not (j > 0 and t.lower[j - 1] in {"based", "built", "depends"}):
            return "dataset"
        if not (t.shapes[j] in (STRONG, TITLE, NUM) or low in LIST_GLUE):
            break
        j -= 1
    return kind_of_name(name)


def kind_from(words: list[str]) -> str | None:
    """The last kind noun among the (lower-case) words before a name."""
    for word in reversed(words):
        kind = KIND_OF_WORD.get(word)
        if kind:
            return kind
    return None


@lru_cache(maxsize=4096)
def kind_of_name(name: str) -> str:
    """A kind guessed from the name itself: `SNS-Bench` is a benchmark, `SignSGD` an optimizer."""
    low = name.lower()
    if "bench" in low or low.endswith(("eval", "-env", "qa", "-hard", "-lite")):
        return "benchmark"
    if low.endswith(("sgd", "adam", "adamw", "optimizer", "prop")):
        return "optimizer"
    if low.endswith(("loss", "entropy")):
        return "loss"
    if low.endswith(("distance", "divergence", "information", "score")):
        return "metric"
    if SIZE_SUFFIX_RE.search(name) or MODEL_SHAPE_RE.search(low):
        return "model"
    if low.endswith(("algorithm", "sampling", "search")):
        return "algorithm"
    return "method"

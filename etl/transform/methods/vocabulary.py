"""The word lists the method finder reads, loaded once from `etl/data/methods/`.

Each `NAME.txt` holds words separated by white space, with `#` comments; `kinds.toml` maps each
kind of artifact to the nouns that name it. Reading package data at import is not the text's
I/O: the transform stays a pure function of its input.
"""

from __future__ import annotations

import tomllib
from importlib import resources

_DATA = resources.files("etl.data.methods")


def words(name: str) -> frozenset[str]:
    """The words of `etl/data/methods/NAME.txt`."""
    text = _DATA.joinpath(f"{name}.txt").read_text("utf-8")
    return frozenset(w for line in text.splitlines() for w in line.split("#", 1)[0].split())


def lines(name: str) -> tuple[str, ...]:
    """The non-blank, non-comment lines of `etl/data/methods/NAME.txt` (names with spaces)."""
    text = _DATA.joinpath(f"{name}.txt").read_text("utf-8")
    return tuple(s for s in (line.strip() for line in text.splitlines()) if s and s[0] != "#")


def _kinds() -> dict[str, str]:
    """Noun -> the kind of artifact it names (`framework` -> `framework`, `corpus` -> `dataset`)."""
    data = tomllib.loads(_DATA.joinpath("kinds.toml").read_text("utf-8"))
    return {noun: kind for kind, nouns in data.items() for noun in nouns}


KIND_WORDS = _kinds()
# Metrics and formats are generic too: shaped like names, never an artifact of the paper.
GENERIC = words("generic") | words("metrics") | words("formats")
METRIC_ROOTS = words("metric_roots")
GENERIC_TITLES = words("generic_titles")
HARDWARE_NOUNS = words("hardware_nouns")
NAME_NOUNS = words("name_nouns")
INTRO_VERBS = words("intro_verbs")
SUBJECT_NOUNS = words("subject_nouns")
ADVERBS = words("adverbs")
NAMING_WORDS = words("naming_words")
OBJECT_STOPS = words("object_stops")
OF_NOUNS = words("of_nouns")
RELATIVE_VERBS = INTRO_VERBS | words("relative_verbs")
CUE_BEFORE = words("cue_before")
ABBREVIATIONS = words("abbreviations")
INITIAL_STOPWORDS = words("initial_stopwords")
ADJ_SUFFIX_WORDS = words("adj_suffix_words")
FIELD_HEADS = words("field_heads")
GENERIC_HEADS = words("generic_heads") | FIELD_HEADS
MEASURE_HEADS = words("measure_heads")
LOWERCASE_GENERIC_HEADS = words("lowercase_generic_heads")
UNIT_WORDS = words("unit_words")
TITLE_GENERIC_HEADS = words("title_generic_heads")
CLASS_NOUN_EXTRAS = words("class_nouns")
KNOWN_DATASETS = lines("datasets")
NAME_HEADS = words("name_heads")
TASK_HEADS = words("task_heads")
ORGANISATIONS = words("organisations")

# Grammar, not vocabulary: small and fixed.
SUBJECT_DETERMINERS = frozenset({"this", "our", "the", "present"})
NEW_WORDS = frozenset({"new", "novel", "newly", "first"})
ARTICLES = frozenset({"a", "an", "the"})
CUE_PAIRS = frozenset({("such", "as"), ("compared", "with"), ("compared", "to"), ("e.g", ",")})
COORDINATORS = frozenset({",", "and", "or", "/"})
LIST_GLUE = COORDINATORS | {"such", "as", "like", "including", "e.g", "the", "(", "both", "either"}
FUNCTION_WORDS = frozenset(
    {"of", "for", "with", "and", "in", "on", "to", "the", "from", "by", "via"}
)
ADJ_ENDINGS = ("ed", "ive", "ant", "ent", "able", "ible", "ous", "ic", "al")
# `Our framework consists of three components: ...`
COMPONENT_VERBS = words("component_verbs")
TRIGGERS = INTRO_VERBS | NAMING_WORDS | COMPONENT_VERBS | {"put", "our"}
TRIGGERS_AND_COMMA = TRIGGERS | {","}

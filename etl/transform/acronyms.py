"""Acronyms defined in running text: `Rotary Position Embedding (RoPE)` and `RoPE (Rotary ...)`.

The matching follows Schwartz & Hearst (2003): walk the short form's letters from the end and
find each in the preceding words, the first letter at the start of a word. Appositive
definitions whose long form is written in capitals (`MIB, a Mechanistic Interpretability
Benchmark`; `Many-Shot Adaptive Pseudo-Labeling, namely MAPLE`) count too. Plurals are made
singular on both sides: `Large Language Models (LLMs)` is `LLM` / `Large Language Model`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from etl.models import Acronym

PAREN_RE = re.compile(r"\(([^()]{1,80})\)")
SHORT_FORM_RE = re.compile(r"^[A-Za-z0-9][\w\-./&+]*$")
# Separators between a short form and what follows it inside the parentheses: "(RoPE; ...)"
SPLIT_RE = re.compile(r"[;,]\s*|\s+(?:or|i\.e\.|e\.g\.)\s+")
TITLED_RE = re.compile(r"[A-Z][\w'’-]*$")
# `MIB, a Mechanistic Interpretability Benchmark`: a short form, then a capitalised long form.
# (or a lower-case one: `LG-GNN, a local-global adaptive graph neural network`)
APPOSITIVE_RE = re.compile(r", (?:an?|the) (?=[A-Za-z])")
# `MILO: Multimodal Iterative Language Optimizer`: a short form, a colon, its long form.
COLON_RE = re.compile(r"(?<=\w) ?: (?=[A-Z])")
# `DGS- a decoupled graph scheduler -`: a long form between dashes after its short form.
DASH_RE = re.compile(
    r"(?<![\w-])([A-Za-z0-9][\w-]{0,10}[A-Za-z0-9]) ?[-–—]{1,2} (?:an?|the) "
    r"([a-z][^-–—,.;:()]{2,80}?) ?[-–—]"
)
# `Many-Shot Adaptive Pseudo-Labeling, namely MAPLE`: a capitalised long form, then the short one.
# The optional comma before it is looked at by the caller: a pattern starting with `,?` is tried
# at every position of the text. (A match ends with [\w-], so no match ever takes that comma.)
NAMELY_RE = re.compile(
    r" (?:namely|called|dubbed|termed|abbreviated as) ([A-Za-z0-9][\w-]{1,11})(?![\w-])"
)
SHORT_BEFORE_RE = re.compile(r"(?<![\w-])[A-Za-z0-9][\w-]{1,11}$")
WORD_RE = re.compile(r"\S+")
DIGIT_RUN_RE = re.compile(r"([A-Za-z])([2-4])(?![0-9])")
# A digit between letters read as a word: `2` is `to`, `4` is `for`.
SPOKEN_DIGIT_RE = re.compile(r"(?<=[A-Za-z])[24](?=[A-Za-z])")
SPOKEN_DIGITS = {"2": "t", "4": "f"}
# What no long form holds: the end of a sentence, a clause of the paper's own (`we propose`).
CLAUSE_RE = re.compile(r"[.;!?] |\b(?:we|our|us)\b", re.IGNORECASE)
# Kind nouns that may follow a long form without spelling a letter of its short form.
TRAILING_NOUNS = frozenset(
    "framework model method language approach algorithm system architecture module".split()
)
NUMBER_SHORT_RE = re.compile(r"^[1-9][A-Z]$")
NUMBER_INITIALS = dict(zip("123456789", "ottffssen", strict=True))  # one, two, three ...
# A short form in parentheses inside a long form: `Ground-to-Aerial (G2A) image synthesis`.
INNER_SHORT_RE = re.compile(r" \(([^()]{1,20})\)")
MAX_WORDS_EXTRA = 5
# Compiled once: `re.sub(pattern, ...)` looks its pattern up in re's cache at every call.
SPACES_RE = re.compile(r"\s+")
SPACES_OR_HYPHENS_RE = re.compile(r"[\s\-]+")
NOT_ALNUM_RE = re.compile(r"[^A-Za-z0-9]")
DIGIT_RE = re.compile(r"\d")
OPENING_MARKS_RE = re.compile(r"^[\"'“(\[]+")
LOOKBACK = 240  # characters before a parenthesis searched for the long form
FUNCTION_WORDS = {"of", "for", "with", "and", "in", "on", "to", "the", "from", "by", "via", "as"}
KEEP_S = ("ss", "us", "is", "ics", "series", "species")


class Definition(NamedTuple):
    """One acronym definition: where its parts are, and the pair made singular."""

    start: int  # the whole definition, long and short form
    end: int
    long_start: int
    short_start: int
    short: str  # as written (`LLMs`)
    long: str  # as written (`Large Language Models`)
    acronym: str  # singular (`LLM`)
    expansion: str  # singular (`Large Language Model`)


def find_acronyms(*texts: str) -> tuple[Acronym, ...]:
    """Every acronym defined in cleaned texts (a title, an abstract), each read apart, with its
    expansion; plural forms made singular; one pair whatever the expansion's case."""
    found: dict[tuple[str, str], Acronym] = {}
    for text in texts:
        for d in acronym_definitions(text):
            found.setdefault((d.acronym, d.expansion.lower()), Acronym(d.acronym, d.expansion))
    return tuple(found.values())


@lru_cache(maxsize=64)
def acronym_definitions(text: str) -> tuple[Definition, ...]:
    """Definitions in order of appearance (cached: the method finder reads them again)."""
    found: list[Definition] = []

    def add(start: int, end: int, long_start: int, short_start: int, short: str, long: str) -> None:
        acronym, expansion = singular_pair(short, _without_inner_short_forms(long))
        found.append(
            Definition(start, end, long_start, short_start, short, long, acronym, expansion)
        )

    if "(" in text:
        for match in PAREN_RE.finditer(text):
            body = match.group(1).strip()
            parts = SPLIT_RE.split(body)
            if len(parts) > 1 and sum(is_short_form(p.strip()) for p in parts) > 1:
                continue  # an enumeration such as (DINO, CLIP), not a definition
            inside = parts[0].strip()
            offset = max(0, match.start() - LOOKBACK)
            before = text[offset : match.start()].rstrip()
            short_start = match.start(1) + match.group(1).find(inside)
            pair = _short_then_long(inside, before)
            if pair is not None:
                long_start = offset + before.rfind(pair[1])
                add(long_start, match.end(), long_start, short_start, *pair)
                continue
            pair = _long_then_short(inside, before)
            if pair is not None:
                short_start = offset + before.rfind(pair[0])
                long_start = match.start(1) + match.group(1).find(pair[1])
                add(short_start, match.end(), long_start, short_start, *pair)
    if ": " in text:  # `MILO: Multimodal Iterative Language Optimizer`
        for match in COLON_RE.finditer(text):
            _appositive(text, match, add, initials=True)
    if "- " in text or "— " in text or "– " in text:  # `DGS - a decoupled graph scheduler -`
        for match in DASH_RE.finditer(text):
            short, long_form = match.group(1), match.group(2).strip()
            if is_short_form(short) and any(
                _best_long_form(letters, long_form.split()) == long_form
                for letters in _spellings(short)
            ):
                add(match.start(1), match.end(2), match.start(2), match.start(1), short, long_form)
    if ", " in text:
        for match in APPOSITIVE_RE.finditer(text):  # one pass for both cases
            if text[match.end()].isupper():
                _appositive(text, match, add)
            else:
                _lower_appositive(text, match, add)
        for match in NAMELY_RE.finditer(text):
            short = match.group(1)
            begin = match.start()
            if begin and text[begin - 1] == ",":
                begin -= 1
            window = text[max(0, begin - 160) : begin]
            words = _titled_run(window.split(" "), from_start=False)
            long_form = _titled_long_form(short, words, from_start=False)
            if long_form:
                long_start = begin - len(window) + window.rfind(long_form)
                add(long_start, match.end(), long_start, match.start(1), short, long_form)
    found.sort()
    return tuple(found)


def _appositive(
    text: str, match: re.Match[str], add: Callable[..., None], *, initials: bool = False
) -> None:
    """A short form right before `match` whose capitalised long form follows it (with
    `initials`, one whose words' initials spell it: a colon is weaker evidence than a comma
    and an article)."""
    short_match = SHORT_BEFORE_RE.search(text, max(0, match.start() - 12), match.start())
    if short_match is None:
        return
    short = short_match.group(0)
    following = text[match.end() : match.end() + 160].split(" ")
    words = _titled_run(following, from_start=True, function_words=initials)
    if initials:  # the longest run of words whose initials spell the short form
        long_form = next(
            (
                candidate
                for size in range(len(words), 1, -1)
                if words[size - 1] not in FUNCTION_WORDS
                and _spelled_by_initials(short, candidate := " ".join(words[:size]))
            ),
            None,
        ) or _bracketed_long_form(short, words)
    else:
        long_form = _titled_long_form(short, words, from_start=True)
    if long_form and is_short_form(short) and " " not in short:
        start = short_match.start()
        end = match.end() + len(long_form)
        add(start, end, match.end(), start, short, long_form)


def _lower_appositive(text: str, match: re.Match[str], add: Callable[..., None]) -> None:
    """`LG-GNN, a local-global adaptive graph neural network for ...`: a lower-case long form
    right after the article, spelling the whole short form, up to a function word."""
    short_match = SHORT_BEFORE_RE.search(text, max(0, match.start() - 12), match.start())
    if short_match is None:
        return
    short = short_match.group(0)
    letters = _letters(short)
    if sum(c.isupper() for c in letters) < max(2, len(letters) - 1) or not is_short_form(short):
        return  # an acronym in capitals (`LG-GNN`), not a coined word (`ProtoLens`)
    words: list[str] = []
    for word in text[match.end() : match.end() + 120].split(" "):
        bare = word.rstrip(",.;:)")
        if not bare or not bare[0].islower() or bare in FUNCTION_WORDS:
            break
        words.append(bare)
        if bare != word:
            break
    for size in range(min(len(words), len(letters) + 2), 1, -1):
        candidate = " ".join(words[:size])
        if _best_long_form(letters, words[:size]) == candidate:
            start = short_match.start()
            add(start, match.end() + len(candidate), match.end(), start, short, candidate)
            return


def _bracketed_long_form(short: str, words: list[str]) -> str | None:
    """`SP-Net: Slowly Progressing Dynamic Inference Networks`: words that the short form's
    letters spell, the first and last words starting with its first and last capitals, the
    phrase ending there."""
    capitals = [c.lower() for c in short if c.isupper()]
    if len(capitals) < 2:
        return None
    for size in range(len(words), 1, -1):
        candidate = words[:size]
        if (
            (size == len(words) or words[size].lower() in FUNCTION_WORDS)  # the phrase ends
            and candidate[0][0].lower() == capitals[0]
            and candidate[-1][0].lower() == capitals[-1]
            and _best_long_form(_letters(short), candidate) == " ".join(candidate)
        ):
            return " ".join(candidate)
    return None


@lru_cache(maxsize=4096)
def _spelled_by_initials(short: str, long_form: str) -> bool:
    """Whether the initials of a long form's words spell `short` (or its capitals: `MCNet`),
    function words optional, hyphenated words read as one word or as several."""
    letters = _letters(short)
    wanted = {letters.lower()}
    if sum(c.isupper() for c in letters) >= 2:
        wanted.add("".join(c for c in letters if c.isupper() or c.isdigit()).lower())
    for split in (SPACES_RE, SPACES_OR_HYPHENS_RE):
        words = [w for w in split.split(long_form) if w]
        every = "".join(w[0] for w in words).lower()
        content = "".join(w[0] for w in words if w.lower() not in FUNCTION_WORDS).lower()
        if every in wanted or content in wanted:
            return True
    return False


def _fit_to_initials(short: str, long_form: str, words: list[str]) -> str:
    """A long form adjusted where the words' initials say so: a trailing kind noun that spells
    nothing dropped (`first-order logic language (FOL)`), or a word before it that the shortest
    match left out taken in (`Spatio-temporal Metric-semantic SLAM (SMS)`)."""
    if _spelled_by_initials(short, long_form):
        return long_form
    parts = long_form.split(" ")
    if len(parts) > 2 and parts[-1].lower() in TRAILING_NOUNS:
        shorter = " ".join(parts[:-1])
        if _spelled_by_initials(short, shorter):
            return shorter
    for extra in (1, 2):
        longer = words[-(len(parts) + extra) :]
        if len(longer) == len(parts) + extra:
            candidate = " ".join(longer).lstrip("\"'“([")
            if not CLAUSE_RE.search(candidate) and _spelled_by_initials(short, candidate):
                return candidate
    return long_form


def _without_inner_short_forms(long: str) -> str:
    """A long form without the short forms defined inside it (`Core Context Aware (CCA)
    Attention` is `Core Context Aware Attention`)."""
    if "(" not in long:
        return long
    return INNER_SHORT_RE.sub(lambda m: "" if is_short_form(m.group(1)) else m.group(0), long)


def _titled_run(words: list[str], *, from_start: bool, function_words: bool = False) -> list[str]:
    """The capitalised words at the start (or the end) of a list of words, at most nine (with
    `function_words`, lower-case function words between capitalised ones too)."""
    run: list[str] = []
    for word in words if from_start else reversed(words):
        bare = word.rstrip(",.;:)") if from_start else word
        inner = function_words and bare in FUNCTION_WORDS and bare == word
        if not bare or not (TITLED_RE.match(bare) or inner) or len(run) == 9:
            break
        run.append(bare)
        if bare != word:
            break  # punctuation ends the phrase
    return run if from_start else run[::-1]


@lru_cache(maxsize=4096)
def is_short_form(token: str) -> bool:
    """A plausible acronym: 2-12 characters, a letter, capitals; `Code LLMs` is one too."""
    if " " in token:  # `Code LLMs`, `LB-AdaCurv ONS`
        head, _, tail = token.partition(" ")
        named = (head.isalpha() and head[:1].isupper()) or is_short_form(head)
        return named and " " not in tail and is_short_form(tail)
    if not (2 <= len(token) <= 12) or not SHORT_FORM_RE.match(token):
        return False
    if not any(c.isalpha() for c in token):
        return False
    capitals = sum(c.isupper() for c in token)
    return (
        capitals >= 2
        or (capitals == 1 and token[0].isupper() and len(token) <= 4 and not token[1:].islower())
        or NUMBER_SHORT_RE.match(token) is not None  # 3D, 2D
    )


def _letters(short: str) -> str:
    """The letters and digits a long form must spell, without a plural `s`."""
    letters = NOT_ALNUM_RE.sub("", short)
    if len(letters) > 2 and letters.endswith("s") and letters[-2].isupper():
        letters = letters[:-1]
    return letters


@lru_cache(maxsize=4096)
def _spellings(short: str) -> tuple[str, ...]:
    """Ways a short form spells its long form: as written, `IT3` as `ITTT`, digits dropped."""
    letters = _letters(short)
    options = [letters]
    if letters[:1] in "Xx" and len(letters) > 2 and letters[1:].isupper():  # XLS, XAI
        options += ["C" + letters[1:], "E" + letters[1:]]
    if any(c.isdigit() for c in letters):
        spoken = SPOKEN_DIGIT_RE.sub(lambda m: SPOKEN_DIGITS[m.group(0)], letters)
        if spoken != letters:
            options.append(spoken)  # G2A: Ground-to-Aerial; P4P: planning for planning
        repeated = DIGIT_RUN_RE.sub(lambda m: m.group(1) * int(m.group(2)), letters)
        if repeated != letters:
            options.append(repeated)
        stripped = DIGIT_RE.sub("", letters)
        if len(stripped) >= 2:
            options.append(stripped)
        if letters[0] in NUMBER_INITIALS:  # 3D: three-dimensional
            options.append(NUMBER_INITIALS[letters[0]] + letters[1:])
    return tuple(options)


def _short_then_long(inside: str, before: str) -> tuple[str, str] | None:
    """`long form (SF)`: the short form inside the parentheses."""
    if not is_short_form(inside):
        return None
    words = before.split()  # the same words as WORD_RE.findall: both split at str.isspace
    for letters in _spellings(inside):
        limit = min(len(words), len(letters) + MAX_WORDS_EXTRA, 2 * len(letters))
        long_form = _best_long_form(letters, words[-limit:] if limit else [])
        if long_form:
            return inside, _fit_to_initials(inside, long_form, words)
    return None


def _long_then_short(inside: str, before: str) -> tuple[str, str] | None:
    """`SF (long form)`: the short form is the word right before the parentheses."""
    words = before[-40:].split()
    if not words or len(inside.split()) < 2:
        return None
    short = words[-1].strip(",;:")
    if not is_short_form(short):
        return None
    wanted = inside.strip(" ,.;:")
    for letters in _spellings(short):
        if _best_long_form(letters, inside.split()) == wanted:
            return short, wanted
    if _spelled_by_capitals(short, wanted):  # `ASSIST (lAbel noiSe-robuSt dIalogue ...)`
        return short, _without_spelling_capitals(wanted)
    return None


def _spelled_by_capitals(short: str, long_form: str) -> bool:
    """A long form whose capitals, some inside its words, spell the short form."""
    capitals = "".join(c for c in long_form if c.isupper())
    inner = any(c.isupper() for word in long_form.split() for c in word[1:])
    return inner and capitals.lower() == _letters(short).lower()


def _without_spelling_capitals(long_form: str) -> str:
    """`lAbel noiSe-robuSt` is `label noise-robust`: capitals inside words only spell."""
    return " ".join(w[:1] + w[1:].lower() for w in long_form.split())


def _titled_long_form(short: str, words: list[str], *, from_start: bool) -> str | None:
    """A capitalised appositive long form spelling `short`, reading from its start or its end."""
    if not is_short_form(short) or " " in short:
        return None
    for letters in _spellings(short):
        if from_start:  # the long form is a prefix of the phrase: try the longest first
            for size in range(min(len(words), len(letters) + MAX_WORDS_EXTRA), 1, -1):
                candidate = " ".join(words[:size])
                if _best_long_form(letters, words[:size]) == candidate:
                    return candidate.rstrip(",.;:")
        else:
            long_form = _best_long_form(letters, words)
            if long_form and len(long_form.split()) >= 2:
                return long_form
    return None


def _best_long_form(letters: str, words: list[str]) -> str | None:
    """The shortest tail of `words` whose letters spell `letters` (Schwartz & Hearst)."""
    text = " ".join(words)
    s_index, l_index = len(letters) - 1, len(text) - 1
    lower = text.lower()
    while s_index >= 0:
        char = letters[s_index].lower()
        if not char.isalnum():
            s_index -= 1
            continue
        if len(char) != 1:  # `İ` lower-cased is two characters: no one character equals it
            return None
        # the last `char` at or before l_index (rfind: -1 if none) ...
        l_index = lower.rfind(char, 0, l_index + 1)
        # ... and for the first letter, the last one that starts a word
        while s_index == 0 and l_index > 0 and lower[l_index - 1].isalnum():
            l_index = lower.rfind(char, 0, l_index)
        if l_index < 0:
            return None
        l_index -= 1
        s_index -= 1
    start = lower.rfind(" ", 0, l_index + 1) + 1
    long_form = text[start:].strip(" ,;:\"'“”")
    long_form = OPENING_MARKS_RE.sub("", long_form)
    if long_form.count("(") != long_form.count(")"):
        return None  # it would start inside an earlier parenthesis: `(DVX) extended count`
    if CLAUSE_RE.search(long_form) or long_form.rsplit(" ", 1)[-1].lower() in FUNCTION_WORDS:
        return None  # a sentence or a clause, not a name: `... framework. Then we ...`
    if not long_form or len(long_form) <= len(letters) or long_form.lower() == letters.lower():
        return None
    if len(long_form.split()) > len(letters) + MAX_WORDS_EXTRA:
        return None
    return long_form


def singular_pair(acronym: str, expansion: str) -> tuple[str, str]:
    """`LLMs` / `large language models` become `LLM` / `large language model`."""
    if len(acronym) > 2 and acronym.endswith("s") and acronym[-2].isupper():
        acronym = acronym[:-1]
    words = expansion.split(" ")
    last_parts = words[-1].split("-")
    if FUNCTION_WORDS.isdisjoint(w.lower() for w in words[:-1]) and FUNCTION_WORDS.isdisjoint(
        p.lower() for p in last_parts[:-1]
    ):
        last_parts[-1] = singular_word(last_parts[-1])
        words[-1] = "-".join(last_parts)
    return acronym, " ".join(words)


def singular_word(word: str) -> str:
    """A plural English noun made singular (`models`, `strategies`, `losses`); others unchanged."""
    lower = word.lower()
    if len(lower) < 4 or not lower.endswith("s") or lower.endswith(KEEP_S):
        return word
    if lower.endswith("ies") and len(lower) > 4:
        return word[:-3] + ("Y" if word[-3].isupper() else "y")
    if lower.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if not word[:-1].isalpha():
        return word
    return word[:-1]

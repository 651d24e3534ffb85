"""Acronyms defined in running text: `Rotary Position Embedding (RoPE)` and `RoPE (Rotary ...)`.

The matching follows Schwartz & Hearst (2003): walk the short form's letters from the end and
find each in the preceding words, the first letter at the start of a word.
"""

from __future__ import annotations

import re

from etl.models import Acronym

PAREN_RE = re.compile(r"\(([^()]{1,80})\)")
SHORT_FORM_RE = re.compile(r"^[A-Za-z][\w\-./&+]*$")
# Separators between a long form and its short form inside the parentheses: "(RoPE)", "(RoPE;"
SPLIT_RE = re.compile(r"[;,]\s*|\s+(?:or|i\.e\.|e\.g\.)\s+")
MAX_WORDS_EXTRA = 5


def find_acronyms(text: str) -> tuple[Acronym, ...]:
    """Every acronym defined in a cleaned text, with its expansion; plural forms made singular."""
    found: dict[tuple[str, str], Acronym] = {}
    for match in PAREN_RE.finditer(text):
        inside = SPLIT_RE.split(match.group(1).strip())[0].strip()
        before = text[: match.start()].rstrip()
        pair = _short_then_long(inside, before) or _long_then_short(inside, before)
        if pair is None:
            continue
        acronym, expansion = _singular(*pair)
        found.setdefault((acronym, expansion.lower()), Acronym(acronym, expansion))
    return tuple(found.values())


def is_short_form(token: str) -> bool:
    """A plausible acronym: 2-12 characters, starts with a letter, has a capital, few words."""
    if not (2 <= len(token) <= 12) or not SHORT_FORM_RE.match(token):
        return False
    capitals = sum(c.isupper() for c in token)
    return capitals >= 2 or (capitals == 1 and token[0].isupper() and len(token) <= 4
                             and not token[1:].islower())


def _short_then_long(inside: str, before: str) -> tuple[str, str] | None:
    """`long form (SF)`: the short form inside the parentheses."""
    if not is_short_form(inside):
        return None
    words = re.findall(r"[^\s]+", before)
    letters = re.sub(r"[^A-Za-z0-9]", "", inside)
    letters = letters[:-1] if letters.endswith("s") and letters[:-1].isupper() else letters
    limit = min(len(words), len(letters) + MAX_WORDS_EXTRA, 2 * len(letters))
    candidate = words[-limit:] if limit else []
    long_form = _best_long_form(letters, candidate)
    return (inside, long_form) if long_form else None


def _long_then_short(inside: str, before: str) -> tuple[str, str] | None:
    """`SF (long form)`: the short form is the word right before the parentheses."""
    words = re.findall(r"[^\s]+", before)
    if not words or len(inside.split()) < 2:
        return None
    short = words[-1].strip(",;:")
    if not is_short_form(short):
        return None
    letters = re.sub(r"[^A-Za-z0-9]", "", short)
    letters = letters[:-1] if letters.endswith("s") and letters[:-1].isupper() else letters
    long_form = _best_long_form(letters, inside.split())
    return (short, long_form) if long_form == inside.strip(" ,.;:") else None


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
        while l_index >= 0 and (
            lower[l_index] != char
            or (s_index == 0 and l_index > 0 and lower[l_index - 1].isalnum())
        ):
            l_index -= 1
        if l_index < 0:
            return None
        l_index -= 1
        s_index -= 1
    start = lower.rfind(" ", 0, l_index + 1) + 1
    long_form = text[start:].strip(" ,;:\"'“”")
    long_form = re.sub(r"^[\"'“(\[]+", "", long_form)
    if not long_form or len(long_form) <= len(letters) or long_form.lower() == letters.lower():
        return None
    if len(long_form.split()) > len(letters) + MAX_WORDS_EXTRA:
        return None
    return long_form


def _singular(acronym: str, expansion: str) -> tuple[str, str]:
    """`LLMs` / `large language models` become `LLM` / `large language model`."""
    if len(acronym) > 2 and acronym.endswith("s") and acronym[:-1].isupper():
        acronym = acronym[:-1]
        expansion = re.sub(r"(?<=\w)(?:ies)$", "y", expansion)
        if not expansion.endswith("ies"):
            expansion = re.sub(r"(?<=[^s])s$", "", expansion)
    return acronym, expansion

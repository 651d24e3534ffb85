"""Checks for the word lists users give: taxonomy terms and venue spellings.

Terms match whole words with punctuation ignored, so a term that is nothing but punctuation,
stop words or one letter would match almost every paper (`(a+)+$` is the word `a`).
"""

from __future__ import annotations

import json
import re

from etl.query_language import STOP_WORDS

WORD_RE = re.compile(r"\w+")

MIN_TERM_CHARS, MAX_TERM_CHARS = 2, 100


def term_problem(term: str) -> str | None:
    """Why a taxonomy term (or venue spelling) would match nothing useful, or None: terms
    match whole words, punctuation ignored, so `(a+)+$` is the word `a` and matches every
    text with that word."""
    words = WORD_RE.findall(term.lower())
    shown = repr(term.strip()[:60])
    if not words:
        return f"{shown} holds no letter or digit"
    if len(term.strip()) > MAX_TERM_CHARS:
        return f"{shown} is longer than {MAX_TERM_CHARS} characters"
    # `all-to-all` is a term of its own; `of the`, or `a` however decorated, matches anything
    if all(word in STOP_WORDS for word in words) and (len(words) == 1 or "-" not in term):
        if " ".join(words) != " ".join(term.lower().split()):
            return f"{shown} is the stop word {' '.join(words)!r} once punctuation is ignored"
        return f"{shown} is only stop words"
    if len("".join(words)) < MIN_TERM_CHARS:
        return f"{shown} is shorter than {MIN_TERM_CHARS} characters"
    return None


def line_of(text: str, term: str) -> str:
    """`:LINE` of a term's first occurrence as a TOML string in a file's text ("" if none)."""
    for written in (json.dumps(term, ensure_ascii=False), f"'{term}'", term):
        index = text.find(written)
        if index >= 0:
            return f":{text.count(chr(10), 0, index) + 1}"
    return ""

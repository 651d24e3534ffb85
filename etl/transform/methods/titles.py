"""A paper's title read as a title, not as a sentence of its abstract.

Title case capitalises every word, so capitals say nothing there; what a title does say: in
`X: a ... for ...` (or `X - ...`) the name before the colon is the paper's own artifact. Other
names in a title are taken only where their shape is a coined name's (`BERT`, `GPT-4o`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from etl.transform.acronyms import singular_word
from etl.transform.methods.kinds import kind_after, kind_of_name
from etl.transform.methods.tokens import ADJ, LOWER, NUM, STRONG, TITLE, Text, generic_key
from etl.transform.methods.vocabulary import (
    ARTICLES,
    GENERIC,
    GENERIC_HEADS,
    INITIAL_STOPWORDS,
    TITLE_GENERIC_HEADS,
)

SEPARATORS = frozenset({":", "-", "–", "—"})
MAX_NAME_TOKENS = 4
# What a title with a name holds: a separator, or a word with capitals or digits inside.
HINT_RE = re.compile(r":| [-–—] |\w[A-Z0-9]|[A-Za-z]\d")
PREPOSITIONS = frozenset(
    "beyond toward towards through via against without across under over into onto upon "
    "about after before between".split()
)
QUESTION_WORDS = frozenset("why how what when where which who is are does do can should".split())


class TitleName(NamedTuple):
    """A name found in a title, with its kind."""

    name: str
    kind: str


def title_names(title: str) -> tuple[TitleName | None, list[TitleName]]:
    """The title's own artifact (`X: a ...`), if any, and the coined names it mentions."""
    if not HINT_RE.search(title):
        return None, []  # no separator and no coined-looking word: nothing to find
    t = Text(title)
    own: TitleName | None = None
    end = _name_end(t)
    if end:
        name = t.span(0, end - 1)
        own = TitleName(name, kind_after(t, end + 1) or kind_of_name(name))
    mentions: list[TitleName] = []
    i = end + 1 if end else 0
    while i < t.n:
        if t.shapes[i] != STRONG or generic_key(t.words[i]) in GENERIC:
            i += 1
            continue
        last = i
        while last + 1 < t.n and t.shapes[last + 1] in (STRONG, NUM):
            last += 1
        name = t.span(i, last)
        mentions.append(TitleName(name, kind_after(t, last + 1) or kind_of_name(name)))
        i = last + 1
    return own, mentions


def _name_end(t: Text) -> int:
    """How many tokens before a title's colon (or dash) make a name, or 0."""
    end = next((i for i in range(min(t.n, MAX_NAME_TOKENS + 1)) if t.words[i] in SEPARATORS), 0)
    if not end or end + 1 >= t.n or (t.starts[end] == t.ends[end - 1] and t.words[end] != ":"):
        return 0  # no separator, nothing after it, or a hyphen inside a word
    shapes = t.shapes[:end]
    if any(w in INITIAL_STOPWORDS or w in QUESTION_WORDS for w in t.lower[:end]):
        return 0  # `Why It Works:`, `On the Limits of X:`
    if end == 1 and "-" in t.words[0] and t.shapes[0] in (LOWER, ADJ):
        # `textless-lib: a Library for ...`: a coined lower-case name, then `a ...`
        return 1 if t.lower[2] in ARTICLES else 0
    if any(s not in (STRONG, TITLE, NUM) for s in shapes) or shapes[0] == NUM:
        return 0
    if end == 1:
        return 1 if generic_key(t.words[0]) not in GENERIC else 0
    first, head = t.lower[0], singular_word(t.lower[end - 1])
    if t.shapes[0] == TITLE and (first.endswith(("ing", "ed", "ly")) or first in PREPOSITIONS):
        return 0  # `Demonstrating X:`, `Beyond Goldfish Memory:`
    if STRONG in shapes:
        return end
    ordinary = first.endswith("s")
    if ordinary or head in TITLE_GENERIC_HEADS or head in GENERIC_HEADS:
        return 0
    return end

"""The search language, parsed once and rendered for each backend.

A search is words (ANDed), "quoted phrases", `OR` between two terms, and `-word` or
`-"phrase"` to exclude. Everything else is text: `AND` and `NOT` are ignored (terms are ANDed
anyway; `-` excludes), stray operators (`OR OR`, a leading or trailing `OR`, a lone `-`) are
dropped, and PostgreSQL's English stop words (`the`, `of`, ...) are dropped from bare words on
both backends, since PostgreSQL does not index them. The parsed query is rendered to an FTS5
expression in which every term is a quoted string, and to a PostgreSQL tsquery expression
built from a fixed template whose every term is a bound parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from etl.errors import QueryError

MAX_CHARACTERS = 500
MAX_TERMS = 32
TOKEN_RE = re.compile(r'(-?)"([^"]*)"?|(\S+)')
WORD_RE = re.compile(r"[^\W_]")  # a letter or a digit: something both backends index
IGNORED_WORDS = frozenset({"AND", "NOT"})
# PostgreSQL's `english` stop words (share/tsearch_data/english.stop, from Snowball).
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will
    just don should now""".split()
)


@dataclass(frozen=True)
class Term:
    """A word or a phrase, as the user wrote it."""

    text: str
    phrase: bool = False


@dataclass(frozen=True)
class Search:
    """Groups of terms: a paper matches every group (one term of each) and no excluded term."""

    groups: tuple[tuple[Term, ...], ...]
    excluded: tuple[Term, ...]

    @property
    def terms(self) -> int:
        """How many terms the search holds."""
        return sum(len(group) for group in self.groups) + len(self.excluded)


def parse(query: str) -> Search:
    """Parse a user's search; QueryError when it is too long or has nothing to look for."""
    if len(query) > MAX_CHARACTERS:
        raise QueryError(
            f"the search is {len(query):,} characters long; at most {MAX_CHARACTERS} are allowed"
        )
    groups: list[list[Term]] = []
    excluded: list[Term] = []
    pending_or = False
    for match in TOKEN_RE.finditer(query):
        minus, phrase, word = match.groups()
        if word is not None and word.upper() == "OR":
            pending_or = bool(groups)
            continue
        if word is not None and word.upper() in IGNORED_WORDS:
            continue
        if word is not None and word.startswith("-"):
            minus, word = "-", word[1:]
        term = _term(phrase, word)
        if term is None:
            continue
        if minus:
            excluded.append(term)
        elif pending_or:
            groups[-1].append(term)
        else:
            groups.append([term])
        pending_or = False
    search = Search(tuple(tuple(g) for g in groups), tuple(excluded))
    if search.terms > MAX_TERMS:
        raise QueryError(f"the search has {search.terms} terms; at most {MAX_TERMS} are allowed")
    if not search.groups:
        raise QueryError("the search has no words to look for")
    return search


def _term(phrase: str | None, word: str | None) -> Term | None:
    """A term, or None for text neither backend would index (punctuation, stop words)."""
    if phrase is not None:
        return Term(phrase.strip(), phrase=True) if WORD_RE.search(phrase) else None
    if word is None or not WORD_RE.search(word) or word.lower() in STOP_WORDS:
        return None
    return Term(word)


def to_fts5(search: Search) -> str:
    """The search as an FTS5 expression: every term a quoted string, so never FTS5 syntax."""
    expression = " AND ".join(_fts5_group(group) for group in search.groups)
    if search.excluded:
        expression = f"({expression}) NOT {_fts5_group(search.excluded)}"
    return expression


def _fts5_group(terms: tuple[Term, ...]) -> str:
    quoted = ['"' + term.text.replace('"', '""') + '"' for term in terms]
    return quoted[0] if len(quoted) == 1 else "(" + " OR ".join(quoted) + ")"


def to_tsquery(search: Search) -> tuple[str, dict[str, str]]:
    """The search as a PostgreSQL tsquery expression and its bound parameters.

    The SQL is made only of fixed pieces and parameter names (`:t0`, `:t1` ...); the terms
    are values bound to them, and `phraseto_tsquery` reads each as plain text.
    """
    params: dict[str, str] = {}

    def group(terms: tuple[Term, ...]) -> str:
        parts = []
        for term in terms:
            name = f"t{len(params)}"
            params[name] = term.text
            parts.append(f"phraseto_tsquery('english', :{name})")
        return "(" + " || ".join(parts) + ")"

    expression = " && ".join(group(g) for g in search.groups)
    if search.excluded:
        expression = f"({expression}) && !!{group(search.excluded)}"
    return expression, params

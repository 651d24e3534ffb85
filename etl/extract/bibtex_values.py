"""BibTeX field values as written (`procneurips # " 2024"`) made text.

A value is parts joined by `#`: a `"quoted"` or `{braced}` text, a number, or the name of
an `@string` macro. bibtexparser's own middleware replaces a value that is one macro name
only and leaves a `#` join as written, so the joins are resolved here. Each macro is stored
resolved, and a value (a macro's or a field's) stops growing at `cap` characters: a chain of
`@string`s that each double the last would otherwise reach gigabytes in 40 lines.

Values that name things (venue, ids, authors) are then made plain text from LaTeX
(`Advances in {N}eural {I}nformation...`, `Bal{\\'a}zs`): see `venue_text` and `id_text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from etl.extract.records import latex_to_text

# An arXiv id named in a venue: `arXiv:2306.01116`, `arXiv preprint arXiv:1607.06450`,
# `arxiv.org/abs/2205.11916` (old ids: `arXiv:cs/0112017`).
ARXIV_IN_VENUE_RE = re.compile(
    r"(?i)\barxiv(?:\.org/(?:abs|pdf)/|\s*:\s*|\s+)"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[a-z]{2})?/\d{7}(?:v\d+)?)"
)


class Macros:
    """`@string` macros by lower-cased name, resolved. Past `max_names` names or `max_chars`
    characters in all a new definition is not kept (its uses stay as written), so that the
    macros hold a bounded amount whatever the file; a macro past the cap is kept as `cut`
    only (a value using it is cut too)."""

    def __init__(self, max_names: int, max_chars: int) -> None:
        self.values: dict[str, str] = {}
        self.cut: set[str] = set()
        self.chars = 0
        self.max_names = max_names
        self.max_chars = max_chars

    def define(self, name: str, value: Resolved) -> None:
        key = name.lower()
        if key not in self.values and len(self.values) >= self.max_names:
            return
        text = "" if value.cut else value.text
        chars = self.chars - len(self.values.get(key, "")) + len(text)
        if chars <= self.max_chars:
            self.values[key], self.chars = text, chars
            (self.cut.add if value.cut else self.cut.discard)(key)

    def get(self, name: str) -> str | None:
        return self.values.get(name.lower())

    def is_cut(self, name: str) -> bool:
        return name.lower() in self.cut


@dataclass(frozen=True)
class Resolved:
    """A value made text; `cut` (and its text not kept) when it ran past the cap."""

    text: str
    cut: bool = False


def resolve(value: str, macros: Macros, cap: int) -> Resolved:
    """The text of a value: its parts joined, macros (by lower-cased name) replaced; a name
    that is no macro (a month such as `jan`, or a typo) kept as written."""
    pieces: list[str] = []
    size = 0
    for part in split_parts(value):
        if macros.is_cut(part):
            return Resolved("", cut=True)
        text = _part_text(part, macros)
        pieces.append(text)
        size += len(text)
        if size > cap:
            return Resolved("", cut=True)
    return Resolved("".join(pieces))


def split_parts(value: str) -> list[str]:
    """The `#`-joined parts of a value, each stripped; `#` inside quotes or braces is text."""
    parts: list[str] = []
    start = 0
    depth = 0
    quoted = False
    for index, character in enumerate(value):
        if character == "{":
            depth += 1
        elif character == "}":
            depth = max(depth - 1, 0)
        elif character == '"' and depth == 0 and (index == 0 or value[index - 1] != "\\"):
            quoted = not quoted
        elif character == "#" and depth == 0 and not quoted:
            parts.append(value[start:index].strip())
            start = index + 1
    parts.append(value[start:].strip())
    return parts


def _part_text(part: str, macros: Macros) -> str:
    if (len(part) >= 2 and part[0] == part[-1] == '"') or (part[:1] == "{" and part[-1:] == "}"):
        return part[1:-1]
    known = macros.get(part)
    return part if known is None else known


def venue_text(value: str | None) -> tuple[str | None, str | None]:
    """A `booktitle` or `journal` as plain text, and the arXiv id it names (`Ar{X}iv:2306.01116`
    is the preprint 2306.01116, its venue arXiv); (None, None) for no value."""
    if not value:
        return None, None
    plain = latex_to_text(value)
    found = ARXIV_IN_VENUE_RE.search(plain)
    if found is None:
        return plain or None, None
    return ARXIV_IN_VENUE_RE.sub("arXiv", plain), found.group(1)


def id_text(value: str | None) -> str | None:
    """An id field (`doi`, `eprint`) without LaTeX escapes or braces (`10.1000/a\\_b`)."""
    if not value:
        return None
    return latex_to_text(value) if "\\" in value or "{" in value else value


def trim_names(names: list[str]) -> list[str]:
    """Author names split on `and`, without the comma a list may leave at a name's end
    (`Ram{\\'o}n y Cajal, Santiago, and Azoulay, L.`): a trailing comma is no name part."""
    return [name.rstrip().rstrip(",").rstrip() for name in names]

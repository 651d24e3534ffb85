"""Canonical venue names: a packaged table of known venues and their spellings, extendable.

`parse_venue("ICLR 2024 oral")` gives `("ICLR", 2024, "oral")`; `venue_in_name("nips2018")`
gives `("NeurIPS", 2018)`, and no venue for a name that names no known one (`r20k`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from etl.errors import VenueTableError
from etl.wordlists import line_of, term_problem

YEAR_RE = re.compile(r"(?<!\d)(19[5-9]\d|20\d{2})(?!\d)")
# Words of a name: runs of letters or of digits (`nips2018` -> nips, 2018; `3DV` -> 3, dv).
PIECE_RE = re.compile(r"[^\W\d_]+|\d+")
SEPARATORS = " -_,;:"  # trimmed from the ends of what a venue string says besides the venue


@dataclass(frozen=True)
class VenueTable:
    """Spellings (lower-cased letters and digits only) to canonical names, and the most
    pieces (words) a spelling has."""

    names: dict[str, str]
    longest: int = 1


def venue_key(text: str) -> str:
    """A spelling compared without case, spaces or punctuation."""
    return "".join(PIECE_RE.findall(text.lower()))


def load_venues(path: str | Path | None = None) -> VenueTable:
    """The packaged table, extended with a user's file in the same format when given."""
    names: dict[str, str] = {}
    default = resources.files("etl.data").joinpath("venues.toml").read_text("utf-8")
    longest = _add(names, default, "default venues")
    if path is not None:
        try:
            text = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise VenueTableError(f"{path}: cannot read: {exc}") from exc
        longest = max(longest, _add(names, text, str(path)))
    return VenueTable(names, longest)


def _add(names: dict[str, str], text: str, where: str) -> int:
    """Add a TOML venues file's `[[venue]]` entries (name, spellings) to a table; the most
    words a spelling has."""
    longest = 1
    try:
        entries = tomllib.loads(text).get("venue", [])
    except tomllib.TOMLDecodeError as exc:
        raise VenueTableError(f"{where}: not valid TOML: {exc}") from exc
    for number, entry in enumerate(entries, 1):
        name = entry.get("name") if isinstance(entry, dict) else None
        spellings = entry.get("spellings", []) if isinstance(entry, dict) else None
        if not isinstance(name, str) or not venue_key(name) or not isinstance(spellings, list):
            raise VenueTableError(
                f"{where}: venue {number} needs a `name` and a list of `spellings`"
            )
        for spelling in (name, *spellings):
            if not isinstance(spelling, str):
                raise VenueTableError(f"{where}: venue {name!r}: spellings must be strings")
            reason = term_problem(spelling)
            if reason is not None:
                at = line_of(text, spelling)
                raise VenueTableError(f"{where}{at}: venue {name!r}: spelling {reason}")
            names[venue_key(spelling)] = name
            longest = max(longest, len(PIECE_RE.findall(spelling.lower())))
    return longest


_table: VenueTable | None = None


def use_venues(table: VenueTable) -> None:
    """Use this table for the rest of the process (a run sets it in each worker too)."""
    global _table
    _table = table


def current_venues() -> VenueTable:
    """The table in use: the packaged one unless a run set another."""
    global _table
    if _table is None:
        _table = load_venues()
    return _table


def _find_known(pieces: list[str]) -> tuple[str, int, int] | None:
    """The longest run of pieces spelling a known venue: (name, start, end)."""
    table = current_venues()
    names = table.names
    best: tuple[str, int, int] | None = None
    for start in range(len(pieces)):
        # a spelling's words may come split finer (`Neur-IPS` -> neur, ips)
        for end in range(min(len(pieces), start + 2 * table.longest), start, -1):
            name = names.get("".join(pieces[start:end]))
            if name:
                if best is None or end - start > best[2] - best[1]:
                    best = (name, start, end)
                break
    return best


def parse_venue(text: str) -> tuple[str | None, int | None, str | None]:
    """Venue, year and what else a venue string says (`ICLR 2024 oral` -> ICLR, 2024, oral).

    A known venue gets its canonical name; an unknown one is kept as written, without the
    year.
    """
    match = YEAR_RE.search(text)
    year = int(match.group(1)) if match else None
    words = YEAR_RE.sub(" ", text).split()
    pieces: list[str] = []
    owners: list[int] = []  # the word each piece is part of
    for index, word in enumerate(words):
        for piece in PIECE_RE.findall(word.lower()):
            pieces.append(piece)
            owners.append(index)
    found = _find_known(pieces)
    if found is None:
        return trimmed(" ".join(words)) or None, year, None
    name, start, end = found
    used = set(owners[start:end])
    rest = trimmed(" ".join(w for k, w in enumerate(words) if k not in used))
    return name, year, rest or None


def trimmed(text: str) -> str:
    """Text without separators at its ends, nor brackets that close nothing, open nothing or
    wrap it whole: `(oral)` -> `oral`, `Systems (OSDI 16)` kept whole, `Proceedings (` ->
    `Proceedings`."""
    while True:
        before = text = text.strip(SEPARATORS)
        if text[:1] == "(" and text[-1:] == ")" and _balanced(text[1:-1]):
            text = text[1:-1]
        elif text[-1:] == "(" or (text[-1:] == ")" and text.count(")") > text.count("(")):
            text = text[:-1]
        elif text[:1] == ")" or (text[:1] == "(" and text.count("(") > text.count(")")):
            text = text[1:]
        if text == before:
            return text


def _balanced(text: str) -> bool:
    """Whether every bracket of a text closes one it opened."""
    depth = 0
    for character in text:
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth < 0:
            return False
    return depth == 0


def venue_in_name(text: str) -> tuple[str | None, int | None]:
    """A known venue and a year named in a file name or header; no venue for an unknown one."""
    match = YEAR_RE.search(text)
    year = int(match.group(1)) if match else None
    found = _find_known(PIECE_RE.findall(text.lower()))
    return (found[0] if found else None), year

"""Printing results as a table, JSON or CSV (for the read commands).

Table output shows data as data: cells are rich `Text` objects, never markup, so a stored
`[bold]`, `\\**x**` or `:fire:` prints as written; control characters and ANSI escapes are
shown in their escaped form (`\\x1b`) so that data cannot move the cursor, recolour or retitle
the terminal. JSON and CSV write values unchanged.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from etl.read import Rows

FORMATS = ("table", "json", "csv")
HIGHLIGHT_STYLE = "bold yellow"
HIGHLIGHT_RE = re.compile(r"\*\*(.+?)\*\*", re.S)


# C0 and C1 controls except newline and tab, DEL, and the invisible format characters
# (Unicode category Cf: zero-width spaces and joiners, bidirectional marks and overrides, the
# BOM ...) that can hide text or make it read differently from what it is.
@cache
def invisible_re() -> re.Pattern[str]:
    """The characters to show escaped (built on first use: listing the format characters
    walks every code point, too slow for every command's start)."""
    formats = (chr(c) for c in range(0xA0, 0x110000) if unicodedata.category(chr(c)) == "Cf")
    # Surrogates too: an undecodable byte of a name or argument (`\udcff`) cannot be printed.
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff" + "".join(formats) + "]")


def plain(value: Any) -> Any:
    """A JSON-friendly value: ISO dates, floats for decimals."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    return value


def visible(text: str) -> str:
    """Text with control characters and ANSI escapes written as escapes (`\\x1b`, `\\u202e`)."""
    return invisible_re().sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def make_console(*, stderr: bool = False) -> Console:
    """A console that never turns `:name:` into emoji nor highlights numbers or URLs."""
    return Console(stderr=stderr, highlight=False, emoji=False, soft_wrap=stderr)


def render(rows: Rows, fmt: str, console: Console, *, title: str | None = None) -> None:
    """Print rows in the chosen format."""
    if fmt == "json":
        records = [dict(zip(rows.columns, map(plain, row), strict=True)) for row in rows.rows]
        console.file.write(json.dumps(records, ensure_ascii=False, indent=2) + "\n")
    elif fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(rows.columns)
        writer.writerows([[plain(v) for v in row] for row in rows.rows])
        console.file.write(buffer.getvalue())
    else:
        table = Table(
            title=Text(visible(title)) if title else None, show_lines=False, header_style="bold"
        )
        for index, column in enumerate(rows.columns):
            width = _token_width(rows, index)
            if width:  # ids, statuses, numbers: whole on one line, never folded mid-value
                table.add_column(Text(visible(str(column))), no_wrap=True, min_width=width)
            else:
                table.add_column(Text(visible(str(column))), overflow="fold")
        highlighted = [column == "snippet" for column in rows.columns]
        for row in rows.rows:
            table.add_row(*(_cell(v, h) for v, h in zip(row, highlighted, strict=True)))
        console.print(table)


TOKEN_WIDTH = 40  # a value without spaces at most this long is shown whole (an id, a status)


def _token_width(rows: Rows, index: int) -> int:
    """The width of a column whose values are all short single tokens, else 0."""
    width = 0
    for row in rows.rows:
        value = row[index]
        if value is None:
            continue
        text = visible(str(plain(value)))
        if len(text) > TOKEN_WIDTH or any(c.isspace() for c in text):
            return 0
        width = max(width, len(text))
    return width


def _cell(value: Any, highlight: bool) -> Text:
    """A table cell as Text; a search snippet's **marks** are shown in bold, not as markup."""
    if value is None:
        return Text("")
    text = visible(str(plain(value)))
    if not highlight:
        return Text(text)
    cell = Text()
    last = 0
    for match in HIGHLIGHT_RE.finditer(text):
        cell.append(text[last : match.start()])
        cell.append(match.group(1), style=HIGHLIGHT_STYLE)
        last = match.end()
    cell.append(text[last:])
    return cell

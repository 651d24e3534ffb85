"""Printing results as a table, JSON or CSV (for the read commands)."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from etl.read import Rows

FORMATS = ("table", "json", "csv")


def plain(value: Any) -> Any:
    """A JSON-friendly value: ISO dates, floats for decimals."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    return value


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
        table = Table(title=title, show_lines=False, header_style="bold")
        for column in rows.columns:
            table.add_column(column, overflow="fold")
        for row in rows.rows:
            table.add_row(*(_cell(v) for v in row))
        console.print(table)


def _cell(value: Any) -> str:
    """Table text, with **highlights** from search snippets shown in bold."""
    if value is None:
        return ""
    text = escape(str(plain(value)))
    return re.sub(r"\*\*(.+?)\*\*", r"[bold yellow]\1[/]", text)

"""`etl report`: one self-contained HTML file of charts and tables, readable offline.

The numbers come from the queries in `sql/report/` (portable SQL over the packaged views and
tables, the same on SQLite and PostgreSQL); the charts are Vega-Lite specifications made with
Altair and rendered to SVG by vl-convert, inlined in the page; the page is a Jinja template
with autoescaping, so text from the data is always escaped. Nothing in the file refers to
anything outside it. Altair and vl-convert are optional (`pip install ".[report]"`).
"""

from __future__ import annotations

import math
import re
import resource
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text

from etl import __version__
from etl.errors import EtlError
from etl.load.database import package_dir, sql_dir
from etl.output import plain

CHART_WIDTH = 560
# A chart drawn in a child process first, under a virtual-memory limit: vl-convert's V8 engine
# reserves a large range of address space when it starts, and a limit that refuses it aborts
# the whole process (SIGTRAP, exit status 133) before Python can catch anything.
PROBE = (
    "import vl_convert; vl_convert.vegalite_to_svg({'mark': 'bar', 'data': {'values': "
    "[{'a': 1}]}, 'encoding': {'x': {'field': 'a', 'type': 'quantitative'}}})"
)
BAR_STEP = 18
WITH_CODE, WITHOUT_CODE = "with code", "without code"


@dataclass(frozen=True)
class Section:
    """One part of the report: a heading, a note, a chart (inline SVG) and its table."""

    key: str
    title: str
    note: str
    svg: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


def query(engine: Engine, name: str) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """Run sql/report/NAME.sql: its columns and rows as dicts of plain values."""
    sql = sql_dir().joinpath("report", f"{name}.sql").read_text("utf-8")
    with engine.connect() as connection:
        result = connection.execute(text(sql))
        columns = tuple(result.keys())
        return columns, [dict(zip(columns, map(plain, row), strict=True)) for row in result]


def _table(columns: tuple[str, ...], values: list[dict[str, Any]]) -> tuple[tuple[Any, ...], ...]:
    """A query's rows as tuples in column order (for a section's table of numbers)."""
    return tuple(tuple(row[c] for c in columns) for row in values)


def build_report(engine: Engine) -> str:
    """The whole report as one HTML document."""
    try:
        import altair  # noqa: F401
        import jinja2
        import vl_convert  # noqa: F401
    except ImportError as exc:
        raise EtlError(f'etl report needs {exc.name}: pip install ".[report]"') from exc
    check_renderer()
    _, totals = query(engine, "totals")
    sections = [builder(engine) for builder in SECTIONS]
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(package_dir("etl.data", "etl/data")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return environment.get_template("report.html.j2").render(
        totals=totals[0],
        sections=sections,
        version=__version__,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        dialect=engine.dialect.name,
    )


def check_renderer() -> None:
    """Refuse, with what to do, to draw charts under a virtual-memory limit the chart renderer
    cannot start within (tried in a child process: it would abort this one)."""
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit == resource.RLIM_INFINITY:
        return
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    if probe.returncode == 0:
        return
    kib = limit // 1024
    if probe.returncode < 0:  # killed by a signal: V8 aborted on its reservation
        raise EtlError(
            f"etl report cannot draw its charts under this process's virtual-memory limit "
            f"(ulimit -v {kib}, in KiB): the chart renderer (vl-convert, which embeds the V8 "
            f"JavaScript engine) reserves some 64 GiB of address space, not memory, when it "
            f"starts, and the system stopped it. Run it without the limit (ulimit -v "
            f"unlimited) or with a larger one (ulimit -v 70000000)"
        )
    last = (probe.stderr.strip().splitlines() or ["no message"])[-1]
    raise EtlError(f"etl report cannot start its chart renderer (vl-convert): {last}")


def write_report(engine: Engine, output: Path) -> int:
    """Write the report to a file; returns its size in bytes."""
    document = build_report(engine)
    try:
        output.write_text(document, encoding="utf-8")
    except OSError as exc:
        raise EtlError(f"cannot write the report to {output}: {exc.strerror}") from exc
    return len(document.encode("utf-8"))


def _svg(chart: Any) -> str:
    """A chart as inline SVG (no XML namespaces: HTML implies them); empty without data."""
    import vl_convert

    if not chart.data.values:
        return ""
    svg: str = vl_convert.vegalite_to_svg(chart.to_dict())
    return re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", svg, count=2)


def _count_axis(counts: Iterable[int]) -> Any:
    """An axis of whole numbers: ticks at integer steps only (counts of papers)."""
    import altair as alt

    top = max(counts, default=1)
    step = max(1, math.ceil(top / 10))
    return alt.Axis(values=list(range(0, top + step, step)), format="d")


def _bars(values: list[dict[str, Any]], category: str, amount: str, title: str) -> Any:
    """A horizontal bar chart, largest first."""
    import altair as alt

    return (
        alt.Chart(alt.InlineData(values=values))
        .mark_bar()
        .encode(
            x=alt.X(f"{amount}:Q", title=title, axis=_count_axis(r[amount] for r in values)),
            y=alt.Y(f"{category}:N", sort="-x", title=None, axis=alt.Axis(labelLimit=260)),
            tooltip=[f"{category}:N", f"{amount}:Q"],
        )
        .properties(width=CHART_WIDTH, height=alt.Step(BAR_STEP))
    )


def _code_split(values: list[dict[str, Any]], category: str, sort: list[str]) -> Any:
    """Stacked horizontal bars: papers with and without code per category."""
    import altair as alt

    long = [
        {category: row[category], "code": kind, "papers": count}
        for row in values
        for kind, count in (
            (WITH_CODE, row["papers_with_code"]),
            (WITHOUT_CODE, row["papers"] - row["papers_with_code"]),
        )
    ]
    return (
        alt.Chart(alt.InlineData(values=long))
        .mark_bar()
        .encode(
            x=alt.X(
                "papers:Q",
                title="papers",
                stack="zero",
                axis=_count_axis(r["papers"] for r in values),
            ),
            y=alt.Y(f"{category}:N", sort=sort, title=None, axis=alt.Axis(labelLimit=260)),
            color=alt.Color(
                "code:N",
                scale=alt.Scale(domain=[WITH_CODE, WITHOUT_CODE], range=["#2f7d4f", "#c9d3cc"]),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            order=alt.Order("code:N"),
        )
        .properties(width=CHART_WIDTH, height=alt.Step(BAR_STEP))
    )


def venues(engine: Engine) -> Section:
    """Papers and the share with code per venue and year."""
    columns, values = query(engine, "venues")
    for row in values:
        row["venue_year"] = f"{row['venue'] or '(no venue)'} {row['year'] or ''}".strip()
    order = [row["venue_year"] for row in values]
    return Section(
        "venues",
        "Papers per venue and year",
        "How many papers each venue and year holds, and how many of them link to code.",
        _svg(_code_split(values, "venue_year", order)),
        columns,
        _table(columns, values),
    )


def topics(engine: Engine) -> Section:
    """The largest topics, with their share of papers with code."""
    columns, values = query(engine, "topics")
    order = [row["topic"] for row in values]
    return Section(
        "topics",
        "Topics",
        "The 20 topics with the most papers; a paper can have several topics.",
        _svg(_code_split(values, "topic", order)),
        columns,
        _table(columns, values),
    )


def _simple(key: str, title: str, note: str, category: str, amount: str, axis: str) -> Any:
    """A section builder: one query, one bar chart of `amount` per `category`."""

    def build(engine: Engine) -> Section:
        columns, values = query(engine, key)
        return Section(
            key,
            title,
            note,
            _svg(_bars(values, category, amount, axis)),
            columns,
            _table(columns, values),
        )

    return build


def builds_on(engine: Engine) -> Section:
    """Methods introduced by one paper and mentioned by others."""
    columns, values = query(engine, "builds_on")
    for row in values:
        row["method_by"] = f"{row['method']} ({row['introduced_by']})"
    return Section(
        "builds_on",
        "Who builds on whom",
        "Methods introduced by one paper and mentioned by other papers in this database.",
        _svg(_bars(values, "method_by", "mentioned_by", "papers that mention it")),
        columns,
        _table(columns, values),
    )


LATER, NOT_LATER = "later years", "same year or earlier"


def picked_up(engine: Engine) -> Section:
    """Methods introduced by one paper that later papers mention most (method_lineage)."""
    import altair as alt

    columns, values = query(engine, "picked_up")
    long = [
        {"method": f"{row['method']} ({row['introduced_at']})", "when": when, "papers": count}
        for row in values
        for when, count in (
            (LATER, row["later_papers"]),
            (NOT_LATER, row["mentioned_by"] - row["later_papers"]),
        )
    ]
    order = [f"{row['method']} ({row['introduced_at']})" for row in values]
    chart = (
        alt.Chart(alt.InlineData(values=long))
        .mark_bar()
        .encode(
            x=alt.X(
                "papers:Q",
                title="papers that mention it",
                stack="zero",
                axis=_count_axis(r["mentioned_by"] for r in values),
            ),
            y=alt.Y("method:N", sort=order, title=None, axis=alt.Axis(labelLimit=260)),
            color=alt.Color(
                "when:N",
                scale=alt.Scale(domain=[LATER, NOT_LATER], range=["#3a5f9e", "#c5cfe0"]),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            order=alt.Order("when:N"),
            tooltip=["method:N", "when:N", "papers:Q"],
        )
        .properties(width=CHART_WIDTH, height=alt.Step(BAR_STEP))
    )
    return Section(
        "picked_up",
        "Methods picked up by later papers",
        "Methods a paper introduces, by how many papers of later years mention them (then "
        "papers of the same year or earlier); a paper defining the method's acronym counts.",
        _svg(chart),
        columns,
        _table(columns, values),
    )


SECTIONS = (
    venues,
    topics,
    _simple(
        "methods_introduced",
        "Most introduced methods",
        "Named methods, models, benchmarks and datasets that the most papers propose.",
        "method",
        "papers",
        "papers introducing it",
    ),
    _simple(
        "methods_mentioned",
        "Most mentioned methods",
        "The methods, models, benchmarks and datasets that the most papers use or compare with.",
        "method",
        "papers",
        "papers mentioning it",
    ),
    builds_on,
    picked_up,
    _simple(
        "most_cited",
        "Most cited in this database",
        "Papers by how many papers in this database cite them; source_cited_by is the count "
        "a source such as OpenAlex or Semantic Scholar gives, for the whole literature.",
        "paper",
        "cited_by",
        "papers in this database citing it",
    ),
    _simple(
        "code_hosts",
        "Code hosts",
        "Where the papers' code lives.",
        "host",
        "papers",
        "papers",
    ),
    _simple(
        "acronyms",
        "Most defined acronyms",
        "The acronyms the most papers define, from the acronym glossary.",
        "acronym",
        "papers",
        "papers defining it",
    ),
)

"""`etl report`: one offline HTML file of charts and escaped tables, on both backends."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from etl.cli import main
from etl.read import open_reader
from etl.report import SECTIONS, build_report
from tests.helpers import SEEDS, fetch, load

CITATIONS = Path(__file__).parents[1] / "fixtures" / "sources" / "citations"
pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

HOSTILE_TITLE = "<script>alert(1)</script> Zorb & co"
BUILDS_ON = [
    {
        "venue": "zorb",
        "title": HOSTILE_TITLE,
        "abstract": "We propose ZorbNet, a novel architecture for sparse attention. Code at https://gitlab.com/acme/zorbnet",
    },
    {
        "venue": "zorb",
        "abstract": "We build on ZorbNet and extend it to graphs, outperforming ZorbNet on three benchmarks.",
    },
    {
        "venue": "zorb",
        "abstract": "Our method improves ZorbNet with Rotary Position Embedding (RoPE) for long inputs.",
    },
]


def loaded(url: str, folder: Path) -> str:
    """The seed lists, three made-up papers, one building on another, and made-up metadata
    records citing each other, in a database."""
    extra = folder / "zorb_2024.jsonl"
    extra.write_text("\n".join(json.dumps(r) for r in BUILDS_ON) + "\n", encoding="utf-8")
    load(url, SEEDS, extra, CITATIONS)
    return report_of(url)


def report_of(url: str) -> str:
    engine = open_reader(url)
    try:
        return build_report(engine)
    finally:
        engine.dispose()


def sections(html: str) -> dict[str, str]:
    """Each section's HTML by its id."""
    return dict(re.findall(r'<section id="(\w+)">(.*?)</section>', html, re.S))


def test_every_section_has_a_chart_and_its_numbers(db_url: str, tmp_path: Path) -> None:
    html = loaded(db_url, tmp_path)
    found = sections(html)
    assert len(found) == len(SECTIONS) == 9
    for key, body in found.items():
        assert body.count("<svg") == 1, key
        assert "<table>" in body, key
    venues = fetch(  # no paper here has two statuses at one venue and year
        db_url,
        "SELECT venue, year, SUM(papers), SUM(papers_with_code) FROM venue_summary "
        "WHERE venue IN ('ICML', 'zorb') GROUP BY venue, year",
    )
    assert {v[0] for v in venues} == {"ICML", "zorb"}
    for venue, year, papers, with_code in venues:
        assert re.search(
            rf"<td>{venue}</td><td class=\"number\">{year}</td><td class=\"number\">{papers}</td><td class=\"number\">{with_code}</td>",
            found["venues"],
        )
    assert (
        "ZorbNet</td><td>architecture</td><td>&lt;script&gt;alert(1)&lt;/script&gt; Zorb &amp; co</td>"
        in found["builds_on"]
    )
    assert re.search(
        r"<td>zorb</td><td class=\"number\">2024</td><td class=\"number\">2</td>",
        found["builds_on"],
    )
    assert "gitlab.com" in found["code_hosts"] and "github.com" in found["code_hosts"]
    assert "RoPE" in found["acronyms"]
    assert (
        '<td>Torches: Light for Exploration</td><td></td><td class="number">2020</td>'
        '<td class="number">5</td><td class="number">120</td>' in found["most_cited"]
    )


def test_the_report_refers_to_nothing_outside_itself(sqlite_url: str, tmp_path: Path) -> None:
    html = loaded(sqlite_url, tmp_path)
    assert not re.search(r"https?://", html)
    assert not re.search(r"<script|<link|<img|<iframe|<object|\bsrc=|url\(|@import", html, re.I)
    assert not re.search(r'href="(?!#)', html)


def test_hostile_text_is_escaped_in_tables_and_charts(sqlite_url: str, tmp_path: Path) -> None:
    html = loaded(sqlite_url, tmp_path)
    assert "<script>" not in html
    chart = sections(html)["builds_on"].split("<details>")[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Zorb &amp; co" in chart


def test_an_empty_database_reports_without_charts(sqlite_url: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    load(sqlite_url, empty)
    html = report_of(sqlite_url)
    assert "<svg" not in html
    assert html.count("None in this database.") == len(SECTIONS)


def test_cli_writes_the_file_and_reports_errors(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    load(url, SEEDS)
    runner = CliRunner()
    output = tmp_path / "out" / "report.html"
    missing_folder = runner.invoke(main, ["report", "--db", url, "-o", str(output)])
    assert missing_folder.exit_code == 1 and "cannot write the report" in missing_folder.output
    output.parent.mkdir()
    result = runner.invoke(main, ["report", "--db", url, "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert output.read_text(encoding="utf-8").count("<svg") == 6  # the seeds build on nobody
    nothing = runner.invoke(main, ["report", "--db", f"sqlite:///{tmp_path / 'none.db'}"])
    assert nothing.exit_code == 1 and "etl run" in nothing.output


def test_methods_picked_up_by_later_papers_lead_their_chart(db_url: str, tmp_path: Path) -> None:
    older = tmp_path / "zorb_2023.jsonl"
    older.write_text(json.dumps(BUILDS_ON[0]) + "\n", encoding="utf-8")
    newer = tmp_path / "zorb_2024.jsonl"
    newer.write_text("\n".join(json.dumps(r) for r in BUILDS_ON[1:]) + "\n", encoding="utf-8")
    load(db_url, older, newer)
    section = sections(report_of(db_url))["picked_up"]
    chart, table = section.split("<details>")
    assert chart.count("<svg") == 1 and "ZorbNet (zorb 2023)" in chart
    assert re.search(
        r"<td>ZorbNet</td><td>architecture</td><td>zorb 2023</td>"
        r"<td class=\"number\">2</td><td class=\"number\">0</td><td class=\"number\">2</td>",
        table,
    )

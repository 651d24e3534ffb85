"""`etl related PAPER`: a paper named by id, DOI, arXiv id or title; related papers with why,
as a table, JSON or CSV; a clear error for a paper that is not there or is ambiguous."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etl.cli import main
from tests.helpers import fetch_one, load

CITATIONS = Path(__file__).parents[1] / "fixtures" / "sources" / "citations"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    database = f"sqlite:///{tmp_path_factory.mktemp('related') / 'p.db'}"
    load(database, CITATIONS)
    return database


def related(url: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["related", *args, "--db", url], terminal_width=200)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "named",
    [
        "10.5555/torch.2020.3",
        "https://doi.org/10.5555/TORCH.2020.3",
        "https://openalex.org/W2000000003",
        "torches: light for exploration",
    ],
)
def test_a_paper_is_named_by_its_doi_an_id_or_its_title(url: str, named: str) -> None:
    code, output = related(url, named, "--format", "json")
    assert code == 0, output
    rows = json.loads(output)
    assert rows[0]["related_label"] == "Flint and Steel: Early Sparks"
    assert rows[0]["why"] == "this paper cites it; it cites this paper"
    assert [row["rank"] for row in rows] == list(range(1, len(rows) + 1))


def test_by_id_as_csv_and_table(url: str) -> None:
    paper_id = str(fetch_one(url, "SELECT id FROM papers WHERE title = 'Compiling Lanterns'"))
    code, output = related(url, paper_id, "--format", "csv")
    assert code == 0
    (row,) = csv.DictReader(io.StringIO(output))
    assert row["related_label"] == "Machines That Carry Torches" and row["cites"] == "1"
    code, output = related(url, paper_id, "-n", "1")
    assert code == 0 and "Machines That Carry" in output and "this paper cites it" in output


def test_an_unknown_paper_is_an_error_without_a_traceback(url: str) -> None:
    code, output = related(url, "No Such Paper")
    assert code == 1 and "no paper has the id, DOI, arXiv id or title 'No Such Paper'" in output
    assert "Traceback" not in output

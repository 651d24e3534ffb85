"""Change events: what each run changed, recorded by the loader; `etl changes` reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from etl.cli import main
from tests.helpers import fetch, load
from tests.helpers import write_jsonl as write_list

pytestmark = pytest.mark.migrated  # databases start migrated (tests/conftest.py)

VENUE = {"venue": "ICML", "year": 2024}


def paper(number: int, **fields: object) -> dict[str, object]:
    """A made-up paper with a DOI (its identity whatever its title) and its own abstract."""
    record: dict[str, object] = {
        "doi": f"10.5555/changes.{number}",
        "title": f"A study of widget number {number} under pressure",
        "abstract": f"We study widget {number} and show it bends in {number} distinct ways "
        "when pressed, measured on three benchmarks.",
        "authors": [f"Ada Example{number}", "Bob Sample"],
        "status": "poster",
        **VENUE,
    }
    record.update(fields)
    return record


def events(url: str, run_id: int) -> list[tuple[object, ...]]:
    """(kind, field, old, new, label) of a run's events, sorted."""
    rows = fetch(
        url,
        "SELECT kind, field, old_value, new_value, label FROM change_events "
        "WHERE run_id = :run ORDER BY kind, field, label",
        {"run": run_id},
    )
    return sorted(rows, key=repr)


def test_a_second_load_records_exactly_what_changed_and_a_third_nothing(
    db_url: str, tmp_path: Path
) -> None:
    listed = tmp_path / "list.jsonl"
    first = [paper(n) for n in range(1, 7)]
    write_list(listed, first)
    run1 = load(db_url, listed)
    assert [row[0] for row in events(db_url, run1.run_id)] == ["first_load"]

    second = [
        paper(1),
        paper(2, title="A study of widget number 2 under great pressure"),  # title corrected
        paper(3, status="oral"),  # status changed
        paper(4, code="https://github.com/example/widget4"),  # repository added
        # paper 5 removed
        paper(6),
        paper(7),  # added
    ]
    write_list(listed, second)
    run2 = load(db_url, listed)
    assert run2.status == "succeeded"
    old_title = "A study of widget number 2 under pressure"
    new_title = "A study of widget number 2 under great pressure"
    assert events(db_url, run2.run_id) == sorted(
        [
            ("paper_added", None, None, None, "A study of widget number 7 under pressure"),
            ("paper_removed", None, None, None, "A study of widget number 5 under pressure"),
            ("paper_changed", "title", old_title, new_title, new_title),
            (
                "paper_changed",
                "status",
                "poster",
                "oral",
                "A study of widget number 3 under pressure",
            ),
            (
                "link_added",
                "code",
                None,
                "https://github.com/example/widget4",
                "A study of widget number 4 under pressure",
            ),
        ],
        key=repr,
    )

    released = fetch(
        db_url,
        "SELECT paper_id, code_url, first_loaded_run, code_released_run, first_loaded_at, "
        "code_released_at FROM code_released",
    )
    assert [row[1:4] for row in released] == [
        ("https://github.com/example/widget4", run1.run_id, run2.run_id)
    ]
    assert str(released[0][4]) < str(released[0][5])

    shown = CliRunner().invoke(main, ["changes", "--db", db_url, "--format", "json"])
    assert shown.exit_code == 0, shown.output
    listed_events = json.loads(shown.output)
    assert [e["run_id"] for e in listed_events] == [run2.run_id] * 5 + [run1.run_id]
    assert [e["event_id"] for e in listed_events] == sorted(
        (e["event_id"] for e in listed_events), reverse=True
    )
    code = CliRunner().invoke(
        main,
        [
            "changes",
            "--db",
            db_url,
            "--since",
            str(run1.run_id),
            "--kind",
            "link_added",
            "--venue",
            "icml",
            "--format",
            "csv",
        ],
    )
    assert code.exit_code == 0, code.output
    assert code.output.splitlines()[1:] and len(code.output.splitlines()) == 2
    assert "widget4" in code.output
    runner = CliRunner()
    for options, count in (
        (["--run", str(run2.run_id)], 5),
        (["--since", "2000-01-01"], 6),
        (["--since", "2999-01-01T00:00+02:00"], 0),
    ):
        found = runner.invoke(main, ["changes", "--db", db_url, "--format", "json", *options])
        assert found.exit_code == 0, found.output
        assert len(json.loads(found.output)) == count, options
    nothing = runner.invoke(main, ["changes", "--db", db_url, "--since", "2999-01-01"])
    assert nothing.exit_code == 0 and "No changes match." in nothing.output
    wrong = runner.invoke(main, ["changes", "--db", db_url, "--since", "last week"])
    assert wrong.exit_code == 2 and "neither a run number nor a date" in wrong.output

    (tmp_path / "list.jsonl").write_text(listed.read_text() + "\n", encoding="utf-8")
    run3 = load(db_url, listed)  # the same records (the file's bytes differ: it is reread)
    assert run3.sources_loaded == 1
    assert events(db_url, run3.run_id) == []


def test_a_full_refresh_records_one_event(db_url: str, tmp_path: Path) -> None:
    listed = write_list(tmp_path / "list.jsonl", [paper(n) for n in range(1, 4)])
    load(db_url, listed)
    refresh = load(db_url, listed, full_refresh=True)
    assert [row[0] for row in events(db_url, refresh.run_id)] == ["full_refresh"]


def test_a_paper_seen_in_a_second_list_and_then_not_is_a_sighting_added_and_removed(
    db_url: str, tmp_path: Path
) -> None:
    write_list(tmp_path / "a.jsonl", [paper(1), paper(2)])
    load(db_url, tmp_path / "a.jsonl")
    other = write_list(tmp_path / "b.jsonl", [paper(2, status="oral")])
    added = load(db_url, tmp_path / "a.jsonl", other)
    label = "A study of widget number 2 under pressure"
    assert events(db_url, added.run_id) == sorted(
        [
            ("sighting_added", "source", None, str(other), label),
            ("paper_changed", "status", "poster", "oral", label),
        ],
        key=repr,
    )
    write_list(other, [paper(3)])
    dropped = load(db_url, tmp_path / "a.jsonl", other)
    assert events(db_url, dropped.run_id) == sorted(
        [
            ("paper_added", None, None, None, "A study of widget number 3 under pressure"),
            ("sighting_removed", "source", str(other), None, label),
            ("paper_changed", "status", "oral", "poster", label),
        ],
        key=repr,
    )


def test_method_lineage_and_adoption_follow_a_method_into_the_next_year(
    db_url: str, tmp_path: Path
) -> None:
    older = write_list(
        tmp_path / "conf_2023.jsonl",
        [
            {
                "title": "Gated widgets",
                "abstract": "We propose Gated Widget Networks (GWN), a novel architecture "
                "for sparse attention.",
                "venue": "ICML",
                "year": 2023,
            }
        ],
    )
    newer = write_list(
        tmp_path / "conf_2024.jsonl",
        [
            {
                "title": "Widgets on graphs",
                "abstract": "We build on GWN and extend it to graphs, outperforming GWN on "
                "three benchmarks. Code: https://github.com/example/graphwidgets",
                "venue": "ICML",
                "year": 2024,
            },
            {
                "title": "Long widgets",
                "abstract": "We compare with Gated Widget Networks (GWN) on long inputs.",
                "venue": "ICML",
                "year": 2024,
            },
        ],
    )
    load(db_url, older, newer)
    lineage = fetch(
        db_url,
        "SELECT introduced_by, introduced_at, introduced_year, mentioned_by, later_papers, "
        "first_mention_year, latest_mention_year, later_papers_with_code "
        "FROM method_lineage WHERE method = 'GWN'",
    )
    # the second paper names the method, the third only defines its acronym (the glossary)
    assert lineage == [("Gated widgets", "ICML 2023", 2023, 2, 2, 2024, 2024, 1)]
    adoption = fetch(
        db_url,
        "SELECT year, papers, papers_with_code, introduced_year FROM method_adoption "
        "WHERE method = 'GWN'",
    )
    assert adoption == [(2024, 2, 1, 2023)]

"""Marks real metadata leaves in its values: DBLP's homonym numbers in author names, HTML
character references in OpenAlex abstracts and titles. Made-up records, written as the
services write them."""

from __future__ import annotations

import json
from pathlib import Path

from etl import extract
from etl.models import RawRecord
from tests.helpers import fetch, load

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sources"
DBLP = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE dblp SYSTEM "dblp.dtd">
<dblp>
<article key="journals/tcs/FulopQ21" mdate="2021-01-01">
<author>Zolt&aacute;n F&uuml;l&ouml;p 0001</author>
<author>Invented Quux</author>
<title>Tree Automata for Invented Languages.</title>
<journal>Theor. Comput. Sci.</journal>
<year>2021</year>
</article>
</dblp>
"""
OPENALEX_WORK = {
    "id": "https://openalex.org/W2000000042",
    "title": "Moths &amp; Lanterns: A Field Study",
    "publication_year": 2022,
    "authorships": [{"author": {"display_name": "Ada Moth"}}],
    "abstract_inverted_index": {
        "Background.&#13;\n": [0],
        "Moths": [1],
        "circle": [2],
        "lanterns.&#13;\\n": [3],
        "Results:": [4],
        "&amp;amp;": [5],
        "more.": [6],
    },
}


def records(path: Path) -> list[RawRecord]:
    found = list(extract.read_records(extract.identify(path)))
    return [r for r in found if isinstance(r, RawRecord)]


def test_a_dblp_homonym_number_is_kept_apart_from_the_name(tmp_path: Path) -> None:
    path = tmp_path / "dblp.xml"
    path.write_text(DBLP, encoding="utf-8")
    (record,) = records(path)
    assert record.authors == ("Zoltán Fülöp", "Invented Quux")
    assert json.loads(record.extra or "{}")["dblp_homonyms"] == {"Zoltán Fülöp": "0001"}
    url = f"sqlite:///{tmp_path / 'p.db'}"
    load(url, path, FIXTURES / "dblp.xml")
    names = {name for (name,) in fetch(url, "SELECT name FROM authors")}
    assert {"Zoltán Fülöp", "Wei Zhang"} <= names
    assert not [n for n in names if str(n)[-1].isdigit()]
    kept = fetch(
        url, "SELECT extra FROM papers WHERE title = 'Tree Automata for Invented Languages'"
    )
    assert json.loads(str(kept[0][0]))["dblp_homonyms"] == {"Zoltán Fülöp": "0001"}


def test_a_dblp_bibtex_export_keeps_its_homonym_numbers_apart(tmp_path: Path) -> None:
    path = tmp_path / "dblp.bib"
    path.write_text(
        "@article{DBLP:journals/tcs/FulopQ21,\n"
        '  author = {Zolt{\\\'{a}}n F{\\"{u}}l{\\"{o}}p 0001 and Invented Quux},\n'
        "  title = {Tree Automata for Invented Languages},\n"
        "  journal = {Theor. Comput. Sci.},\n  year = {2021}\n}\n",
        encoding="utf-8",
    )
    (record,) = records(path)
    assert record.authors == ("Zoltán Fülöp", "Invented Quux")
    assert json.loads(record.extra or "{}")["dblp_homonyms"] == {"Zoltán Fülöp": "0001"}


def test_openalex_character_references_are_decoded_once(tmp_path: Path) -> None:
    path = tmp_path / "works.json"
    path.write_text(json.dumps({"results": [OPENALEX_WORK]}), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'p.db'}"
    load(url, path)
    ((title, abstract),) = fetch(url, "SELECT title, abstract FROM papers")
    assert title == "Moths & Lanterns: A Field Study"
    assert abstract == "Background. Moths circle lanterns. Results: &amp; more."

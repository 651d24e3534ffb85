"""BibTeX values made plain text (etl.extract.bibtex_values, etl.extract.records.latex_to_text):
venues, ids and names as reference managers and book bibliographies write them, with
LaTeX case protection, accents and commands; venues matched whatever their case.

The entries are made up, written the way real bibliographies write such fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from etl import extract
from etl.extract.records import latex_to_text
from etl.extract.venues import parse_venue
from etl.models import RawRecord, Reject
from tests.helpers import fetch, load

BIBLIOGRAPHY = r"""
@inproceedings{Zorb.Quux.2020,
  title     = {Sparse {Z}orbs for {L}ong {I}nputs},
  author    = {Zorb, Ada and Quux, B{\'e}la},
  booktitle = {Advances in {N}eural {I}nformation {P}rocessing {S}ystems},
  year      = {2020}
}

@article{Quux.2023,
  title   = {Lanterns in the {F}og},
  author  = {Quux, B{\'e}la and M{\"u}ller, J.~P.},
  journal = {Ar{X}iv:2306.01116},
  year    = {2023}
}

@article{Moth.2021,
  title   = {Moths as Graph Nodes},
  author  = {Ram{\'o}n y {C}ajal, Santiago, and Moth, L.},
  journal = {arXiv preprint arXiv:2101.00042},
  year    = {2021}
}

@inproceedings{Sys.2016,
  title     = {A System for Invented Workloads},
  author    = {Sys, Tem},
  booktitle = {12th $\{$USENIX$\}$ {S}ymposium on {O}perating {S}ystems {D}esign and
               {I}mplementation ($\{$OSDI$\}$ 16)},
  year      = {2016}
}

@inproceedings{Conv.2019,
  title     = {Convolutions Revisited},
  author    = {Conv, Olu},
  booktitle = {Proceedings of the {IEEE} {C}onference on {C}omputer {V}ision and
               {P}attern {R}ecognition},
  doi       = {10.1000/invented\_doi},
  year      = {2019}
}

@article{Caps.2005,
  Title   = {Capitalised Field Names},
  Author  = {Caps, Lock and Shift, Key},
  Journal = {{J}ournal of {M}achine {L}earning {R}esearch},
  Year    = {2005}
}
"""


@pytest.fixture
def bibliography(tmp_path: Path) -> Path:
    path = tmp_path / "book.bib"
    path.write_text(BIBLIOGRAPHY, encoding="utf-8")
    return path


def entries(path: Path) -> dict[str, RawRecord]:
    found = list(extract.read_records(extract.identify(path)))
    assert not [r for r in found if isinstance(r, Reject)]
    return {r.title or "": r for r in found if isinstance(r, RawRecord)}


def test_a_case_protected_venue_is_matched_to_its_canonical_name(bibliography: Path) -> None:
    found = entries(bibliography)
    assert found["Sparse {Z}orbs for {L}ong {I}nputs"].venue == "NeurIPS"
    assert found["Convolutions Revisited"].venue == "CVPR"
    assert found["Capitalised Field Names"].venue == "JMLR"


def test_an_arxiv_id_written_as_the_journal_is_the_papers_arxiv_id(bibliography: Path) -> None:
    found = entries(bibliography)
    lanterns = found["Lanterns in the {F}og"]
    assert ("arxiv", "2306.01116") in lanterns.ids
    assert lanterns.venue == "arXiv" and lanterns.year == 2023
    moths = found["Moths as Graph Nodes"]
    assert ("arxiv", "2101.00042") in moths.ids and moths.venue == "arXiv"


def test_an_unknown_venue_keeps_its_closing_bracket_and_loses_its_latex(
    bibliography: Path,
) -> None:
    system = entries(bibliography)["A System for Invented Workloads"]
    assert system.venue == (
        "12th USENIX Symposium on Operating Systems Design and Implementation (OSDI 16)"
    )


def test_a_name_list_with_a_trailing_comma_is_read_and_names_lose_their_latex(
    bibliography: Path,
) -> None:
    found = entries(bibliography)
    assert found["Moths as Graph Nodes"].authors == ("Santiago Ramón y Cajal", "L. Moth")
    assert found["Lanterns in the {F}og"].authors == ("Béla Quux", "J. P. Müller")
    assert found["Capitalised Field Names"].authors == ("Lock Caps", "Key Shift")


def test_ids_lose_their_latex_escapes(bibliography: Path) -> None:
    conv = entries(bibliography)["Convolutions Revisited"]
    assert ("doi", "10.1000/invented_doi") in conv.ids


def test_stored_venues_names_and_ids_hold_no_brace_or_command(
    bibliography: Path, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    load(url, bibliography)
    values = [
        *fetch(url, "SELECT venue FROM papers"),
        *fetch(url, "SELECT venue FROM paper_sources"),
        *fetch(url, "SELECT name FROM authors"),
        *fetch(url, "SELECT key FROM paper_keys"),
    ]
    assert values
    marked = [v for (v,) in values if v and re.search(r"[{}\\$~]", str(v))]
    assert marked == []
    assert ("arxiv:2306.01116",) in fetch(url, "SELECT key FROM paper_keys")


@pytest.mark.parametrize("spelling", ["ArXiv", "arXiv", "ARXIV", "arxiv", "CoRR"])
def test_venues_are_matched_whatever_their_case(spelling: str) -> None:
    assert parse_venue(spelling)[0] == "arXiv"
    assert parse_venue(spelling.lower())[0] == parse_venue(spelling.upper())[0]


@pytest.mark.parametrize(
    ("written", "venue"),
    [
        ("Transactions of the Association for Computational Linguistics", "TACL"),
        (
            "Proceedings of the 57th Annual Meeting of the Association for Computational "
            "Linguistics",
            "ACL",
        ),
        (
            "Proceedings of the 2019 Conference of the North American Chapter of the Association "
            "for Computational Linguistics",
            "NAACL",
        ),
        ("ICLR 2024 (oral)", "ICLR"),
    ],
)
def test_the_longest_known_spelling_wins(written: str, venue: str) -> None:
    assert parse_venue(written)[0] == venue


@pytest.mark.parametrize(
    ("written", "rest"),
    [
        ("ICLR 2024 (oral)", "oral"),
        ("ICLR 2024 (Datasets and Benchmarks)", "Datasets and Benchmarks"),
    ],
)
def test_what_else_a_venue_says_loses_the_brackets_that_wrap_it(written: str, rest: str) -> None:
    assert parse_venue(written)[2] == rest


@pytest.mark.parametrize(
    ("written", "plain"),
    [
        (
            r"Advances in {N}eural {I}nformation {P}rocessing {S}ystems",
            "Advances in Neural Information Processing Systems",
        ),
        (r"Rend.\ Accad.\ Lincei", "Rend. Accad. Lincei"),
        (r"Taylor \& Francis", "Taylor & Francis"),
        (r"\mbox{NeurIPS} \texttt{Track}", "NeurIPS Track"),
        (r"Bal{\'a}zs K{\"o}r{\H{o}}s", "Balázs Körős"),
        ("F.~P. Cantelli", "F. P. Cantelli"),
        (r"100% {R}eal", "100% Real"),
        ("Plain Venue", "Plain Venue"),
    ],
)
def test_latex_is_made_plain_text(written: str, plain: str) -> None:
    assert latex_to_text(written) == plain


def test_venue_text_id_text_and_trim_names() -> None:
    from etl.extract.bibtex_values import id_text, trim_names, venue_text

    assert venue_text("arxiv.org/abs/2205.11916") == ("arXiv", "2205.11916")
    assert venue_text(r"Ar{X}iv:cs/0112017") == ("arXiv", "cs/0112017")
    assert venue_text(None) == (None, None)
    assert id_text(r"{10.1000/x\_y}") == "10.1000/x_y"
    assert id_text("10.1000/50%off") == "10.1000/50%off"
    assert trim_names(["Cajal, Santiago,", "Moth, L. "]) == ["Cajal, Santiago", "Moth, L."]

"""Markup removal: markdown emphasis, LaTeX and math go, URLs and words stay."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from etl.transform.clean import clean_text, emphasized, trim_url


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (
            "The proposed framework, called **TraceGrad**, first",
            "The proposed framework, called TraceGrad, first",
        ),
        ("we present *SCENIR*, a Graph", "we present SCENIR, a Graph"),
        (
            "two algorithms, $\\texttt{PDI-CP}$ and $\\texttt{JDI-CP}$.",
            "two algorithms, PDI-CP and JDI-CP.",
        ),
        ("reduce memory usage by 60\\% - 90\\%", "reduce memory usage by 60% - 90%"),
        ("we study {\\em local pan-privacy}, where", "we study local pan-privacy, where"),
        ("graphs $G = (V, E, w_G)$ and", "graphs G = (V, E, w_G) and"),
        ("only $O(\\log\\log T)$ bits", "only O(log log T) bits"),
        ("at $b \\approx \\frac{1}{2}\\log_2 T$.", "at b ≈ 1/2 log_2 T."),
        ("with $x\\in\\mathbb{R}^d$ and $1-2\\alpha$", "with x∈R^d and 1-2α"),
        ("nested \\textbf{\\texttt{X}} markup", "nested X markup"),
        ("code in `repo/main.py` here", "code in repo/main.py here"),
        ("spaces\n\n and\ttabs  folded ", "spaces and tabs folded"),
    ],
)
def test_markup_is_removed_and_text_kept(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_bold_initials_spell_an_acronym_without_breaking_words() -> None:
    raw = "we propose **M**any-Shot **A**daptive **P**seudo-**L**ab**E**ling, namely **MAPLE**"
    assert clean_text(raw) == "we propose Many-Shot Adaptive Pseudo-Labeling, namely MAPLE"


def test_urls_survive_markup_stripping_unchanged() -> None:
    raw = "Code: https://github.com/a_b/c_d and $x_1$ at https://x.org/~u/p*q.html."
    assert (
        clean_text(raw) == "Code: https://github.com/a_b/c_d and x_1 at https://x.org/~u/p*q.html."
    )


def test_href_keeps_its_label_and_target() -> None:
    raw = "available at \\href{https://github.com/Coxy7/AIGI}{GitHub}."
    assert clean_text(raw) == "available at GitHub (https://github.com/Coxy7/AIGI)."
    assert clean_text("see \\url{https://x.org/a_b}.") == "see https://x.org/a_b."


def test_unclosed_emphasis_is_left_alone_without_scanning_the_whole_text() -> None:
    text = "**a " * 5000 + "$x `y"
    assert clean_text(text) == text.strip()


def test_private_use_placeholders_in_input_cannot_break_cleaning() -> None:
    assert clean_text("a \ue0000\ue001 b https://x.org") == "a 0 b https://x.org"


def test_emphasized_spans_in_order_of_appearance() -> None:
    raw = (
        "we present *SCENIR*, then $\\texttt{PDI-CP}$ and **Aggregation Buffer** with "
        "{\\em local pan-privacy} at https://github.com/a_b/c_d_e"
    )
    assert emphasized(raw) == ["SCENIR", "PDI-CP", "Aggregation Buffer", "local pan-privacy"]
    assert emphasized("no markup at all") == []


def test_trim_url_drops_sentence_punctuation_and_unbalanced_brackets() -> None:
    assert trim_url("https://github.com/fwu11/MACIL.git.") == "https://github.com/fwu11/MACIL.git"
    assert trim_url("https://en.wikipedia.org/wiki/A_(b))") == "https://en.wikipedia.org/wiki/A_(b)"
    assert trim_url("https://x.org/a”") == "https://x.org/a"


MARKUP = st.sampled_from(
    [
        "**",
        "*",
        "__",
        "_",
        "$",
        "$$",
        "`",
        "~",
        "{",
        "}",
        "\\",
        "\\texttt{",
        "\\textbf{",
        "\\emph{",
        "{\\em ",
        "\\href{https://github.com/a/b}{",
        "\\url{",
        "\\%",
        "\\alpha",
        "\\frac{1}{2}",
        "https://github.com/o/r.",
        "www.x.org",
        " ",
        "\n",
        ".",
        ",",
        "(",
        ")",
        "MAPLE",
        "LLMs",
        "x",
        "Word",
        "\ue000",
        "\ue001",
        "0",
    ]
)
MARKUP_TEXT = st.lists(st.one_of(MARKUP, st.text(max_size=6)), max_size=30).map("".join)
BOLD_PAIR = re.compile(r"\*\*(?=\S)[^*]+?(?<=\S)\*\*")


@settings(max_examples=400, deadline=None)
@given(MARKUP_TEXT)
def test_clean_text_never_fails_and_leaves_no_markup(raw: str) -> None:
    clean = clean_text(raw)
    if "\\*" in raw:  # an escaped star is text as written (`\\**x**` is `**x**`)
        return
    assert "\\texttt{" not in clean and "\\textbf{" not in clean and "\\emph{" not in clean
    urls = re.findall(r"https?://\S+|www\.\S+", clean)
    outside_urls = re.sub(r"https?://\S+|www\.\S+", " ", clean)
    assert not BOLD_PAIR.search(outside_urls), clean
    assert "\ue000" not in clean and "\ue001" not in clean
    assert clean == clean.strip() and "  " not in clean
    assert all(not u.endswith(("\ue000", "\ue001")) for u in urls)


@settings(max_examples=400, deadline=None)
@given(MARKUP_TEXT)
def test_clean_text_is_idempotent(raw: str) -> None:
    """Except where a star was escaped: the cleaned text holds it as a plain star, which a
    second cleaning would read as markup."""
    assume("\\*" not in raw)
    once = clean_text(raw)
    assert clean_text(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_emphasized_never_fails_on_arbitrary_text(raw: str) -> None:
    assert all(span and span == span.strip() for span in emphasized(raw))


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (r"Escaped \**star** title", "Escaped **star** title"),
        (r"a \* b", "a * b"),
        (
            r"Data in C:\data\x and \\server\share\f.txt",
            r"Data in C:\data\x and \\server\share\f.txt",
        ),
        (r"**Bold** stays markup, \textbf{this} too", "Bold stays markup, this too"),
        (r"a map $f:\mathcal{X}\to\mathcal{Y}$ and T:\mathbb{R}", "a map f:X→Y and T:R"),  # math
    ],
)
def test_escaped_characters_and_paths_are_kept_as_written(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean

"""Links: every URL found, normalised to one clean https form, and classified."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.transform.links import collect_links, external_ids, find_urls, make_link


def urls(text: str) -> list[tuple[str, str]]:
    """(url, kind) of every link in an abstract."""
    return [(link.url, link.kind) for link in collect_links({"abstract": text}, ())]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Code: https://github.com/fwu11/MACIL.git.", "https://github.com/fwu11/MACIL"),
        (
            "open-source at http://github.com/grghosal/MemSinks.",
            "https://github.com/grghosal/MemSinks",
        ),
        ("at https://github.com/relweaver/RelWeaver.git", "https://github.com/relweaver/RelWeaver"),
        (
            "source at https://github.com/hopscotch-sys/hopscotch/ and",
            "https://github.com/hopscotch-sys/hopscotch",
        ),
        (
            "code is at https://github.com/kadp-robot/kadp/tree/main/policy",
            "https://github.com/kadp-robot/kadp",
        ),
        ("see https://www.github.com/A/B/blob/main/x.py)", "https://github.com/A/B"),
        ("at gitlab.com/tide-nlp/tidemt, and", "https://gitlab.com/tide-nlp/tidemt"),
        (
            "Code: https://gitlab.com/vision-group/splatprior/-/tree/main.",
            "https://gitlab.com/vision-group/splatprior",
        ),
        (
            "at https://gitlab.com/group/sub/repo/-/blob/main/a.py",
            "https://gitlab.com/group/sub/repo",
        ),
        (
            "https://bitbucket.org/secml-lab/purgecode/src/master/ and",
            "https://bitbucket.org/secml-lab/purgecode",
        ),
        ("released at github.com/scqi-rl/scqi.", "https://github.com/scqi-rl/scqi"),
        ("Code at GitHub.com/Owner/Repo;", "https://github.com/Owner/Repo"),
        (
            "weights at https://huggingface.co/cellanchor/CellAnchor-base and",
            "https://huggingface.co/cellanchor/CellAnchor-base",
        ),
        (
            "data at https://huggingface.co/datasets/tide-nlp/tide-corpus.",
            "https://huggingface.co/datasets/tide-nlp/tide-corpus",
        ),
        (
            "demo at huggingface.co/spaces/org/demo-app.",
            "https://huggingface.co/spaces/org/demo-app",
        ),
        (
            "available at \\href{https://github.com/Coxy7/AIGI-Detection}{GitHub}.",
            "https://github.com/Coxy7/AIGI-Detection",
        ),
        ("at \\url{https://github.com/hra-chem/hra}.", "https://github.com/hra-chem/hra"),
        ("see [code](https://github.com/q/r).", "https://github.com/q/r"),
        ("代码：https://github.com/a/b。更多", "https://github.com/a/b"),
        ("(https://github.com/a/b), and", "https://github.com/a/b"),
    ],
)
def test_code_links_are_one_clean_repository_url(text: str, expected: str) -> None:
    assert urls(text) == [(expected, "code")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "the project page is https://protolens-ai.github.io/.",
            ("https://protolens-ai.github.io", "project"),
        ),
        (
            "Videos are at https://kadp-robot.github.io, the",
            ("https://kadp-robot.github.io", "project"),
        ),
        ("paper: https://arxiv.org/abs/2409.01234)", ("https://arxiv.org/abs/2409.01234", "paper")),
        (
            "pdf https://arxiv.org/pdf/2401.01234v2.pdf.",
            ("https://arxiv.org/abs/2401.01234v2", "paper"),
        ),
        (
            "https://openreview.net/forum?id=abc123 .",
            ("https://openreview.net/forum?id=abc123", "paper"),
        ),
        ("doi https://doi.org/10.1000/xyz123,", ("https://doi.org/10.1000/xyz123", "paper")),
        (
            "https://huggingface.co/papers/2401.12345",
            ("https://huggingface.co/papers/2401.12345", "paper"),
        ),
        ("data on https://zenodo.org/records/123.", ("https://zenodo.org/records/123", "data")),
        ("see www.example.com/page.", ("https://www.example.com/page", "other")),
        ("profile https://github.com/someone.", ("https://github.com/someone", "other")),
    ],
)
def test_other_links_are_classified(text: str, expected: tuple[str, str]) -> None:
    assert urls(text) == [expected]


def test_owner_and_repository_are_split_out() -> None:
    (link,) = collect_links({"abstract": "https://gitlab.com/g/sub/r/-/tree/x"}, ())
    assert (link.host, link.repo_owner, link.repo_name) == ("gitlab.com", "g", "r")
    (link,) = collect_links({"abstract": "https://huggingface.co/datasets/o/n"}, ())
    assert (link.repo_owner, link.repo_name) == ("o", "n")


def test_links_come_in_order_of_appearance_once_each() -> None:
    text = (
        "Weights: https://huggingface.co/a/b, code \\href{https://github.com/c/d}{here} and "
        "again https://github.com/c/d/. Page: https://c.github.io"
    )
    assert [u for u, _ in urls(text)] == [
        "https://huggingface.co/a/b",
        "https://github.com/c/d",
        "https://c.github.io",
    ]


def test_record_fields_win_over_text_and_expand_identifiers() -> None:
    fields = (
        ("github", "GitHub.com/owner/repo"),
        ("arxiv", "2401.01234"),
        ("openreview", "AbCdEf123"),
        ("pdf", "https://proceedings.mlr.press/v235/x.pdf"),
        ("project_page", "https://owner.github.io/repo/"),
        ("doi", "10.5555/3495724.3496298"),
    )
    links = collect_links({"abstract": "Code: https://github.com/owner/repo."}, fields)
    assert [(link.url, link.kind, link.found_in) for link in links] == [
        ("https://github.com/owner/repo", "code", "github"),
        ("https://arxiv.org/abs/2401.01234", "paper", "arxiv"),
        ("https://openreview.net/forum?id=AbCdEf123", "paper", "openreview"),
        ("https://proceedings.mlr.press/v235/x.pdf", "paper", "pdf"),
        ("https://owner.github.io/repo", "project", "project_page"),
        ("https://doi.org/10.5555/3495724.3496298", "paper", "doi"),
    ]


def test_text_that_is_not_a_url_gives_no_link() -> None:
    assert make_link("not a url", "abstract") is None
    assert make_link("", "abstract") is None
    assert make_link("ftp://example.org/file", "abstract") is None
    assert urls("We use github and huggingface models, e.g. GitHub Copilot.") == []


def test_find_urls_reads_latex_and_schemeless_forms() -> None:
    raw = "A \\url{https://x.org/a_b} and \\href{https://y.org}{Y}, bare github.com/o/r."
    assert find_urls(raw) == ["https://x.org/a_b", "https://y.org", "github.com/o/r"]


URLISH = st.sampled_from(
    [
        "https://github.com/o/r",
        "http://GitHub.com/O/R.git",
        "github.com/a/b/tree/main",
        "https://huggingface.co/datasets/x/y",
        "https://x.github.io/",
        "www.site.org/p",
        "https://arxiv.org/pdf/2401.00001.pdf",
        "\\href{https://g.com/x}{t}",
        "\\url{https://h.org}",
        "https://gitlab.com/g/s/r/-/blob/x",
        "(",
        ")",
        ".",
        ",",
        ";",
        "!",
        "?",
        "'",
        '"',
        "]",
        "}",
        "{",
        " ",
        "。",
        "…",
        "*",
        "$",
        "\\",
        "https://",
        "://",
        "http://.",
        "https://a.b/(c)",
    ]
)
URL_TEXT = st.lists(st.one_of(URLISH, st.text(max_size=5)), max_size=20).map("".join)


@settings(max_examples=500, deadline=None)
@given(URL_TEXT)
def test_links_are_always_clean_https_urls(text: str) -> None:
    links = collect_links({"abstract": text}, (("code", text[:40]),))
    assert len({link.url for link in links}) == len(links)
    for link in links:
        assert link.url.startswith("https://")
        last = link.url[-1]
        opener = {")": "(", "]": "[", "}": "{"}.get(last)
        assert opener is None or link.url.count(last) <= link.url.count(opener)
        assert link.url[-1] not in ".,;:!?'\"*$~…。"
        assert link.host == link.host.lower() and " " not in link.url
        assert link.kind in {"code", "project", "paper", "data", "other"}
        if link.kind == "code":
            assert link.repo_owner and link.repo_name
            assert not link.url.endswith((".git", "/"))


# Link shapes of real lists (issue 17), made-up values.


def field_links(name: str, value: str) -> list[tuple[str, str, str | None, str | None]]:
    """(url, kind, owner, name) of the links of one record field."""
    return [
        (link.url, link.kind, link.repo_owner, link.repo_name)
        for link in collect_links({}, ((name, value),))
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (  # Markdown link around a Markdown image, and a second link that is no repository
            "[![github](/images/github_icon.svg) lab/tool](https://github.com/lab/tool) + "
            "[![pwc](/images/pwc_icon.svg) 3 implementations](https://paperswithcode.com/paper/x)",
            [
                ("https://github.com/lab/tool", "code", "lab", "tool"),
                ("https://paperswithcode.com/paper/x", "other", None, None),
            ],
        ),
        (  # parentheses inside a Markdown target
            "[lab/tool](https://github.com/lab/tool/tree/main/alg/Deep%20(MRNN))",
            [("https://github.com/lab/tool", "code", "lab", "tool")],
        ),
        (
            '<a href="https://github.com/lab/tool">code</a>',
            [("https://github.com/lab/tool", "code", "lab", "tool")],
        ),
        ("git@github.com:lab/tool.git", [("https://github.com/lab/tool", "code", "lab", "tool")]),
        ("github.com:lab/tool", [("https://github.com/lab/tool", "code", "lab", "tool")]),
        (  # spaces inside the repository path: kept whole, never cut at the first
            "https://github.com/lab/Spaced Tool Name",
            [("https://github.com/lab/Spaced%20Tool%20Name", "code", "lab", "Spaced Tool Name")],
        ),
        (
            "https://github.com/lab/one; https://github.com/lab/two",
            [
                ("https://github.com/lab/one", "code", "lab", "one"),
                ("https://github.com/lab/two", "code", "lab", "two"),
            ],
        ),
        (  # a remark after the URL is not part of it
            "https://github.com/lab/tool (official)",
            [("https://github.com/lab/tool", "code", "lab", "tool")],
        ),
    ],
)
def test_code_links_in_the_field_shapes_real_lists_use(
    value: str, expected: list[tuple[str, str, str | None, str | None]]
) -> None:
    assert field_links("github", value) == expected


def test_a_url_split_after_its_scheme_in_an_abstract_is_found() -> None:
    assert urls("Code is at https: //github.com/lab/tool-x") == [
        ("https://github.com/lab/tool-x", "code")
    ]


def test_link_fields_that_give_no_link_are_named_and_other_fields_give_only_code() -> None:
    silent: list[str] = []
    links = collect_links(
        {},
        (("github", "coming soon"), ("project", "https://lab.example.org/tool")),
        silent,
        (("bibtex", "url = {https://lab.example.org/x}, note = {github.com/lab/tool}"),),
    )
    assert silent == ["github"]
    assert [(link.url, link.found_in) for link in links] == [
        ("https://lab.example.org/tool", "project"),
        ("https://github.com/lab/tool", "bibtex"),
    ]


def test_a_record_gives_its_own_external_ids_never_those_its_abstract_cites() -> None:
    links = collect_links(
        {"abstract": "Builds on https://arxiv.org/abs/1706.03762 and doi:10.1/other."},
        (
            ("site", "https://openreview.net/forum?id=AbC_12-x"),
            ("arxiv", "2310.16808v2"),
            ("doi", "10.1145/3592108"),
            ("project", "https://arxiv.org/abs/1111.22222"),
        ),
    )
    assert external_ids(links, None) == (
        "doi:10.1145/3592108",
        "arxiv:2310.16808",
        "openreview:AbC_12-x",
    )
    assert external_ids((), "10.1609/AAAI.V36I2.20034") == ("doi:10.1609/aaai.v36i2.20034",)
    assert external_ids((), "8793770") == ()  # a number is no known id


@pytest.mark.parametrize(
    "text",
    [
        "Code: htps://github.com/lab/tool-x.",
        "Code: https//github.com/lab/tool-x upon publication",
        "Code: https: //github.com/lab/tool-x",
    ],
)
def test_repositories_behind_a_mistyped_scheme_are_found(text: str) -> None:
    assert urls(text) == [("https://github.com/lab/tool-x", "code")]

"""Terms weighed by where they stand: made-up sentences for each rule, meant and unmeant."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.transform.terms import (
    IN_CONTRIBUTION,
    MODIFIER,
    NEGATED,
    SENTENCE_END_RE,
    TITLE,
    Occurrence,
    TermIndex,
    build_index,
    occurrences,
    pieces,
    spellings,
    term_matches,
)
from etl.transform.topics import Taxonomy, assign_topics, build_taxonomy, load_taxonomy

TOPICS = [
    {"slug": "area", "name": "Area"},
    {"slug": "vision", "name": "Vision", "parent": "area", "terms": ["image classification"]},
    {"slug": "video", "name": "Video", "parent": "area", "terms": ["video"]},
    {"slug": "recsys", "name": "Recsys", "parent": "area", "terms": ["recommendation"]},
    {"slug": "tuning", "name": "Tuning", "parent": "area", "terms": ["fine-tuning"]},
    {"slug": "ood", "name": "OOD", "parent": "area", "terms": ["out-of-distribution detection"]},
    {"slug": "icl", "name": "ICL", "parent": "area", "terms": ["ICL", "in-context learning"]},
    {"slug": "graphs", "name": "Graphs", "parent": "area", "terms": ["graph neural network"]},
    {"slug": "zebra", "name": "Zebra", "parent": "area", "terms": ["zebra"]},
    {"slug": "aardvark", "name": "Aardvark", "parent": "area", "terms": ["aardvark"]},
    {
        "slug": "seg",
        "name": "Segmentation",
        "parent": "area",
        "terms": ["segmentation"],
        "not": ["word segmentation"],
    },
]


@pytest.fixture(scope="module")
def taxonomy() -> Taxonomy:
    return build_taxonomy(TOPICS)


def factors(text: str, title: str | None = None) -> dict[str, float]:
    """Each matched topic's best factor."""
    index = build_taxonomy(TOPICS).index
    found: dict[str, float] = {}
    for o in occurrences(pieces(title, text), index):
        found[o.key] = max(found.get(o.key, 0.0), o.factor)
    return found


def slugs(text: str, taxonomy: Taxonomy, title: str | None = None) -> list[str]:
    return [h.slug for h in assign_topics(text, taxonomy, title=title)]


def test_the_title_counts_more_than_the_abstract() -> None:
    assert factors("A study of video.", title="Graph neural networks") == {
        "graphs": TITLE,
        "video": 1.0,
    }


def test_the_contribution_sentence_counts_more_up_to_its_verb() -> None:
    text = "Video is everywhere. We propose a graph neural network for recommendation."
    assert factors(text) == {"video": 1.0, "graphs": IN_CONTRIBUTION, "recsys": IN_CONTRIBUTION}
    # the clauses after the one stating it say how it works
    text = "We propose a graph neural network, which adds video, and image classification."
    assert factors(text) == {"graphs": IN_CONTRIBUTION, "video": 1.0, "vision": 1.0}
    # a sentence that states nothing is read plainly
    assert factors("Graph neural networks for recommendation are popular.") == {
        "graphs": 1.0,
        "recsys": 1.0,
    }


def test_examples_are_context_and_evaluation_sentences_are_read_plainly(
    taxonomy: Taxonomy,
) -> None:
    assert factors("It helps tasks such as image classification.")["vision"] == 0.4
    assert factors("It helps downstream tasks like image classification.")["vision"] == 0.4
    assert factors("We would like image classification to be fair.")["vision"] == 1.0
    # results on a task are evidence of it like any plain sentence (a discount measured no
    # better on unseen text)
    text = (
        "We propose a graph neural network for recommendation. "
        "Experiments on image classification benchmarks show gains of 3%."
    )
    assert factors(text)["vision"] == 1.0
    assert slugs(text, taxonomy) == ["graphs", "recsys", "vision"]


def test_a_term_never_runs_across_a_comma_or_a_sentence_end() -> None:
    assert factors("We study image, classification of video.") == {"video": 1.0}
    assert factors("It sees the image. Classification is hard.") == {}


@pytest.mark.parametrize(
    "text",
    [
        "Our method does not require fine-tuning.",
        "It adapts without fine-tuning.",
        "Unlike fine-tuning, our method edits activations.",
        "It edits activations rather than fine-tuning.",
    ],
)
def test_a_negated_or_contrasted_term_is_context(text: str) -> None:
    assert factors(text)["tuning"] == NEGATED


def test_a_hyphenated_cue_word_is_not_a_cue() -> None:
    # "click-through" holds "through", "tax-free of" nothing: no clause is cut there
    assert factors("The click-through video fine-tuning works.") == {"video": 0.5, "tuning": 1.0}


def test_negated_evidence_still_gives_a_topic_when_it_is_all_there_is(taxonomy: Taxonomy) -> None:
    assert slugs("A method that does not require fine-tuning.", taxonomy) == ["tuning"]
    text = "We propose a graph neural network that does not require fine-tuning."
    assert slugs(text, taxonomy) == ["graphs"]


def test_a_term_that_modifies_the_next_counts_less(taxonomy: Taxonomy) -> None:
    assert factors("We study video recommendation.") == {"video": 0.75, "recsys": 1.5}
    assert slugs("We study video recommendation.", taxonomy) == ["recsys", "video"]
    # apart, both count fully
    assert factors("Video, and recommendation.") == {"video": 1.0, "recsys": 1.0}


def test_a_parenthesised_acronym_does_not_split_a_term() -> None:
    assert factors("Out-of-distribution (OOD) detection matters.") == {"ood": 1.0}
    # ... nor a plural one, and a parenthesis that is not an acronym is read as written
    assert factors("Out-of-distribution (OODs) detection (in practice) matters.") == {"ood": 1.0}


def test_a_repeated_acronym_counts_once(taxonomy: Taxonomy) -> None:
    text = (
        "We propose a recommendation method. In-context learning (ICL) is studied. "
        "ICL helps. ICL fails. ICL works. ICL again. ICL once more."
    )
    hits = assign_topics(text, taxonomy)
    # the long form, then the acronym at half, its repeats ignored: the paper's own topic stays
    assert [(h.slug, h.score) for h in hits] == [("icl", 1.5 + 0.5), ("recsys", IN_CONTRIBUTION)]


def test_ties_go_to_more_mentions_then_to_the_first_read_not_the_alphabet(
    taxonomy: Taxonomy,
) -> None:
    assert slugs("Zebra and aardvark.", taxonomy) == ["zebra", "aardvark"]
    assert slugs("Aardvark and zebra.", taxonomy) == ["aardvark", "zebra"]


def test_a_phrase_listed_as_not_a_term_hides_the_term(taxonomy: Taxonomy) -> None:
    assert slugs("Chinese word segmentation of news.", taxonomy) == []
    assert slugs("Image segmentation of news.", taxonomy) == ["seg"]


def test_prefixed_words_match_joined_hyphenated_or_apart() -> None:
    assert spellings(["multi", "modal", "model"]) == [
        ["multi", "modal", "model"],
        ["multimodal", "model"],
    ]
    assert spellings(["multimodal"]) == [["multimodal"], ["multi", "modal"]]
    index = build_index([("mm", ["multimodal large language model"])])
    for text in ("Multi-Modal Large Language Models", "multimodal large language model"):
        assert [o.key for o in occurrences(pieces(None, text), index)] == ["mm"]
    assert occurrences(pieces(None, "a multi-model large language model"), index) == []


def test_the_packaged_taxonomy_credits_a_compound_to_both_its_topics() -> None:
    hits = assign_topics("We study multi-agent reinforcement learning.", load_taxonomy())
    assert {h.slug for h in hits} == {"multi-agent", "deep-rl"}
    # the head alone is reinforcement learning only
    hits = assign_topics("We study reinforcement learning.", load_taxonomy())
    assert [h.slug for h in hits] == ["deep-rl"]


STREAM_INDEX = build_index(
    [
        ("graphs", ["graph neural network", "GNN"]),
        ("mm", ["multimodal model", "LLM"]),
        ("icl", ["in-context learning", "ICL"]),
        ("greek", ["σα model", "ΣA", "aσ b", "xi model"]),
        ("", ["word segmentation"]),
        ("seg", ["segmentation"]),
    ]
)
STREAM_WORDS = st.sampled_from(
    ["graph", "neural", "network", "networks", "GNN", "GNNs", "LLM", "multi", "modal",
     "multi-modal", "model", "models", "in-context", "learning", "word", "segmentation",
     "İ", "Σ", "ΣA", "σα", "AΣ'B", "xİ", "é", "\x00", ",", "-", "(ICL)", " ", "  "]
)  # fmt: skip


def read_piece_by_piece(
    parts: tuple[tuple[str, float], ...], index: TermIndex
) -> list[tuple[str, str, float, int]]:
    """`occurrences` as the rule reads it: each piece matched on its own."""
    found: list[Occurrence] = []
    for number, (text, factor) in enumerate(parts):
        previous_end, previous = -2, []
        for start, (end, ending) in term_matches(text, index).items():
            if start == previous_end + 1:
                for occurrence in previous:
                    occurrence.factor *= MODIFIER
            previous = [Occurrence(k, t, factor, number * 1000 + start) for k, t in ending if k]
            found.extend(previous)
            previous_end = end
    return [(o.key, o.term, o.factor, o.order) for o in found]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(STREAM_WORDS, max_size=8).map(" ".join), st.sampled_from([1.0, 0.4, 2.0])
        ),
        max_size=5,
    )
)
def test_pieces_read_in_one_stream_match_as_each_read_alone(
    parts: list[tuple[str, float]],
) -> None:
    """No term runs from one piece into the next, and each piece is read as it is alone,
    whatever its characters (`İ` and `Σ` lower-case by what surrounds them)."""
    stream = [(o.key, o.term, o.factor, o.order) for o in occurrences(parts, STREAM_INDEX)]
    assert stream == read_piece_by_piece(tuple(parts), STREAM_INDEX)


def test_a_term_never_runs_across_pieces() -> None:
    parts = [("a graph neural", 1.0), ("network and a multimodal", 1.0), ("model", 1.0)]
    assert occurrences(parts, STREAM_INDEX) == []
    assert [o.key for o in occurrences([("a graph neural network", 1.0)], STREAM_INDEX)] == [
        "graphs"
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "B", ".", "?", "!", " ", "  ", "\n", "é", "1"]), max_size=20))
def test_sentences_end_at_the_space_after_a_stop_before_anything_but_lower_case(
    chars: list[str],
) -> None:
    text = "".join(chars)
    reference = re.compile(r"(?<=[.!?])\s+(?=[^a-z\s])")  # the rule as first written
    assert [m.start(1) for m in SENTENCE_END_RE.finditer(text)] == [
        m.start() for m in reference.finditer(text)
    ]

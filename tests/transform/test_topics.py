"""Topics: a documented taxonomy, term matching, and the choice of a paper's best topics."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.errors import TaxonomyError
from etl.transform.clean import clean_text
from etl.transform.topics import (
    KEEP_RATIO,
    MAX_TOPICS,
    assign_topics,
    build_taxonomy,
    load_taxonomy,
    matched_terms,
)

GOLD = Path(__file__).parents[1] / "gold"

SMALL = [
    {"slug": "nlp", "name": "NLP", "terms": ["natural language processing"]},
    {
        "slug": "llm",
        "name": "LLMs",
        "parent": "nlp",
        "terms": ["large language model", "language model", "LLM", "in-context learning"],
    },
    {
        "slug": "mt",
        "name": "Translation",
        "parent": "nlp",
        "terms": ["machine translation", "BLEU"],
    },
    {"slug": "vision", "name": "Vision", "terms": ["image"]},
    {
        "slug": "detection",
        "name": "Detection",
        "parent": "vision",
        "terms": ["object detection", "query"],
    },
]


@pytest.fixture(scope="module")
def small() -> object:
    return build_taxonomy(SMALL)


def test_default_taxonomy_is_a_two_level_hierarchy_with_terms() -> None:
    taxonomy = load_taxonomy()
    slugs = {t.slug for t in taxonomy.topics}
    areas = [t for t in taxonomy.topics if t.parent is None]
    leaves = [t for t in taxonomy.topics if t.parent is not None]
    assert len(areas) >= 10 and len(leaves) >= 60
    assert all(t.parent in slugs and t.terms for t in leaves)
    assert all(t.parent is None for t in taxonomy.topics if t.slug in {t.parent for t in leaves})
    assert pickle.loads(pickle.dumps(taxonomy)) == taxonomy  # shipped to worker processes


def test_terms_match_plurals_hyphens_and_acronyms_case_sensitively(small: object) -> None:
    text = "Large-Language Models and LLMs use in context learning; an llm queries images."
    assert matched_terms(text, small) == {  # type: ignore[arg-type]
        "llm": ["large language model", "LLM", "in-context learning"],
        "detection": ["query"],
        "vision": ["image"],
    }


def test_a_term_inside_a_longer_match_counts_for_the_longer_term_only(small: object) -> None:
    assert matched_terms("a large language model", small) == {"llm": ["large language model"]}  # type: ignore[arg-type]
    text = "a large language model and a language model"
    assert matched_terms(text, small) == {"llm": ["large language model", "language model"]}  # type: ignore[arg-type]


def test_best_leaf_topics_within_the_ratio_with_evidence(small: object) -> None:
    text = (
        "Machine translation with BLEU gains, an LLM, a large language model, and object detection."
    )
    hits = assign_topics(text, small)  # type: ignore[arg-type]
    # an acronym counts half beside a topic's other evidence (BLEU; LLM beside its long form)
    assert [(h.slug, h.score, h.evidence) for h in hits] == [
        ("llm", 2.5, ("LLM", "large language model")),
        ("mt", 2.0, ("machine translation", "BLEU")),
        ("detection", 1.5, ("object detection",)),
    ]
    weak = assign_topics("machine translation, BLEU, object detection and a query", small)  # type: ignore[arg-type]
    assert [h.slug for h in weak] == ["detection", "mt"]
    assert all(h.score >= KEEP_RATIO * hits[0].score for h in hits)


def test_an_area_is_used_when_no_leaf_matches_and_nothing_when_nothing_does(small: object) -> None:
    assert [h.slug for h in assign_topics("natural language processing", small)] == ["nlp"]  # type: ignore[arg-type]
    assert assign_topics("a study of bird songs", small) == ()  # type: ignore[arg-type]


def test_every_seed_abstract_gets_a_topic() -> None:
    taxonomy = load_taxonomy()
    for line in (GOLD / "seeds.jsonl").read_text("utf-8").splitlines():
        record = json.loads(line)
        hits = assign_topics(clean_text(record["abstract"]), taxonomy)
        assert 1 <= len(hits) <= MAX_TOPICS, record["id"]


@pytest.mark.parametrize(
    ("record_id", "first"),
    [
        ("unseen-04", "offline-rl"),
        ("unseen-09", "speech-recognition"),
        ("unseen-10", "recommender-systems"),
        ("unseen-12", "ml-for-systems"),
        ("unseen-14", "3d-vision"),
    ],
)
def test_unseen_abstracts_get_their_central_topic_first(record_id: str, first: str) -> None:
    records = [json.loads(line) for line in (GOLD / "unseen.jsonl").read_text("utf-8").splitlines()]
    record = next(r for r in records if r["id"] == record_id)
    assert assign_topics(clean_text(record["abstract"]), load_taxonomy())[0].slug == first


def test_a_custom_taxonomy_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(
        '[[topic]]\nslug = "bio"\nname = "Biology"\n\n'
        '[[topic]]\nslug = "proteins"\nname = "Proteins"\nparent = "bio"\nterms = ["protein", "enzyme"]\n',
        "utf-8",
    )
    taxonomy = load_taxonomy(path)
    assert [h.slug for h in assign_topics("Enzymes are proteins.", taxonomy)] == ["proteins"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no [[topic]] entries"),
        ("[[topic]]\nname = 'X'\n", "topic #1 needs a slug and a name"),
        ("[[topic]]\nslug = 'a'\nname = 'A'\nterms = 'x'\n", "terms must be a list of strings"),
        (
            "[[topic]]\nslug = 'a'\nname = 'A'\n[[topic]]\nslug = 'a'\nname = 'B'\n",
            "'a' is defined twice",
        ),
        ("[[topic]]\nslug = 'a'\nname = 'A'\nparent = 'zz'\n", "unknown parent 'zz'"),
        ("[[topic]\n", "not valid TOML"),
    ],
)
def test_bad_taxonomy_files_are_reported(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content, "utf-8")
    with pytest.raises(TaxonomyError, match=message.replace("[", r"\[")) as error:
        load_taxonomy(path)
    assert str(path) in str(error.value)


def test_a_missing_taxonomy_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="cannot read"):
        load_taxonomy(tmp_path / "missing.toml")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_assign_topics_is_well_formed_on_arbitrary_text(text: str) -> None:
    hits = assign_topics(text, load_taxonomy())
    assert len(hits) <= MAX_TOPICS
    assert len({h.slug for h in hits}) == len(hits)
    assert all(h.score > 0 and h.evidence for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    ("meant", "slug", "unmeant"),
    [
        ("We study text-video retrieval.", "visual-retrieval", "We study text-video generation."),
        ("We study human motion prediction.", "human-pose-motion", "We study camera motion."),
        ("We study few-shot classification.", "meta-learning", "We study few-shot prompting."),
        ("We study camera pose estimation.", "3d-vision", "We study human pose estimation."),
        ("We study person detection.", "object-detection", "We study person re-identification."),
        ("We study induction heads.", "interpretability", "We study proof by induction."),
        ("We study reward modelling.", "ai-safety", "We study reward shaping."),
        ("We fit neural scaling laws.", "deep-learning-theory", "We fit power laws."),
        ("We study approximate inference.", "bayesian-inference", "We study fast inference."),
        ("We study sequential Monte Carlo.", "bayesian-inference", "We visit Monaco."),
        ("We study diffusion planners.", "diffusion-models", "We study route planners."),
        ("We study optimal transport.", "optimal-transport", "We study optimal control."),
        ("We study violin performance.", "audio-music", "We study violent videos."),
        ("Multi-Modal Large Language Models", "vision-language", "Multi-Model Ensembles"),
        ("We study video recommendation.", "recommender-systems", "We study video editing."),
        ("We study semantic segmentation.", "segmentation", "We study word segmentation."),
        ("We study human-robot collaboration.", "human-robot-interaction", "We study robots."),
        ("We tune model predictive control.", "learning-based-control", "We study model merging."),
        ("We study safety validation of drones.", "safety-validation", "We study drones."),
        (
            "We study multi-objective optimization.",
            "multi-objective-optimization",
            "We study optimization.",
        ),
        (
            "We study morphological segmentation.",
            "syntax-morphology",
            "We study image segmentation.",
        ),
        (
            "We study natural language inference.",
            "natural-language-understanding",
            "We study language models.",
        ),
        ("We snapshot virtual machines.", "computer-systems", "We study machines."),
        ("We study intelligent tutoring systems.", "education", "We train a student model."),
        ("We study the GELU activation function.", "activation-functions", "We study functions."),
        ("We study statistical learning.", "statistical-learning", "We study learning."),
        ("We study text style transfer.", "text-generation", "We study image style transfer."),
        ("We study mental health.", "medical", "We study mental arithmetic."),
    ],
)
def test_added_vocabulary_matches_what_it_means_and_not_its_neighbours(
    meant: str, slug: str, unmeant: str
) -> None:
    taxonomy = load_taxonomy()
    assert slug in [h.slug for h in assign_topics(meant, taxonomy)]
    assert slug not in [h.slug for h in assign_topics(unmeant, taxonomy)]


def test_a_spatial_transformer_is_not_a_transformer() -> None:
    assert assign_topics("We study spatial transformer networks.", load_taxonomy()) == ()
    hits = assign_topics("We study transformer networks.", load_taxonomy())
    assert [h.slug for h in hits] == ["transformers"]


def test_video_recommendation_is_about_recommendation_not_video() -> None:
    hits = assign_topics("We study video recommendation.", load_taxonomy())
    assert [h.slug for h in hits] == ["recommender-systems"]


def test_the_topics_of_the_packaged_taxonomy_are_kept() -> None:
    # slugs that databases and gold sets already use stay valid
    slugs = {t.slug for t in load_taxonomy().topics}
    for path in (GOLD / f"{name}.jsonl" for name in ("seeds", "unseen", "fresh")):
        for line in path.read_text("utf-8").splitlines():
            assert set(json.loads(line)["topics"]) <= slugs


def test_an_acronym_counts_once_and_half_beside_its_long_form() -> None:
    taxonomy = build_taxonomy(
        [
            {"slug": "area", "name": "Area"},
            {
                "slug": "icl",
                "name": "ICL",
                "parent": "area",
                "terms": ["ICL", "in-context learning"],
            },
        ]
    )
    # alone, the acronym counts its best mention, however often it recurs
    assert assign_topics("ICL helps. ICL is cheap. ICL wins.", taxonomy)[0].score == 1.0
    # beside its long form, half of it: the two are one piece of evidence
    hits = assign_topics("In-context learning helps. ICL is cheap.", taxonomy)
    assert hits[0].score == 1.5 + 0.5

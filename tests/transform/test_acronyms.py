"""Acronyms defined in text, with their expansions, plural forms made singular."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.transform.acronyms import find_acronyms, singular_word
from etl.transform.clean import clean_text

GOLD = Path(__file__).parents[1] / "gold"


def pairs(text: str) -> list[tuple[str, str]]:
    return [(a.acronym, a.expansion) for a in find_acronyms(clean_text(text))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "commutative with Rotary Position Embedding (RoPE) and",
            [("RoPE", "Rotary Position Embedding")],
        ),
        ("the key-value (KV) cache", [("KV", "key-value")]),
        ("Large Language Models (LLMs) are used", [("LLM", "Large Language Model")]),
        ("large-language models (LLMs) have", [("LLM", "large-language model")]),
        ("sparse autoencoders (SAE) or", [("SAE", "sparse autoencoder")]),
        ("Social Networking Services (SNS), the", [("SNS", "Social Networking Service")]),
        ("Neural radiance fields (NeRFs) trained", [("NeRF", "Neural radiance field")]),
        ("constraint satisfaction problems (CSPs)", [("CSP", "constraint satisfaction problem")]),
        ("word error rates (WERs) far above", [("WER", "word error rate")]),
        ("3D Gaussian Splatting (3DGS) overfits", [("3DGS", "3D Gaussian Splatting")]),
        (
            "We present Idempotent Test-Time Training (IT3), a",
            [("IT3", "Idempotent Test-Time Training")],
        ),
        (
            "instruction-tuned code large language models (Code LLMs) are",
            [("Code LLM", "code large language model")],
        ),
        (
            "Single-cell RNA sequencing (scRNA-seq) atlases",
            [("scRNA-seq", "Single-cell RNA sequencing")],
        ),
        ("a mixture-of-experts (MoE) model", [("MoE", "mixture-of-experts")]),
        (
            "Compared with ACT (Action Chunking with Transformers), KADP",
            [("ACT", "Action Chunking with Transformers")],
        ),
        (
            "we propose MIB, a Mechanistic Interpretability Benchmark, with",
            [("MIB", "Mechanistic Interpretability Benchmark")],
        ),
        ("the state-of-the-art (SOTA) in", [("SOTA", "state-of-the-art")]),
        (
            "train it using an Expectation-Maximization (EM) algorithm",
            [("EM", "Expectation-Maximization")],
        ),
        ("We present JoinSketch-Net (JSN), a learned estimator", [("JSN", "JoinSketch-Net")]),
    ],
)
def test_definitions_give_acronym_and_singular_expansion(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert pairs(text) == expected


def test_bold_initials_and_namely_define_an_acronym() -> None:
    raw = "we propose **M**any-Shot **A**daptive **P**seudo-**L**ab**E**ling, namely **MAPLE**, a"
    assert pairs(raw) == [("MAPLE", "Many-Shot Adaptive Pseudo-Labeling")]
    raw = "We propose **LUMEN** (**L**ightweight **U**nified **M**ultimodal **E**mbedding **N**etwork), which"
    assert pairs(raw) == [("LUMEN", "Lightweight Unified Multimodal Embedding Network")]


@pytest.mark.parametrize(
    "text",
    [
        "we introduce Rate-Constrained Training (BackSlash), a novel",  # a name, not an acronym
        "Evaluating pretrained models (DINO, CLIP), we find",  # a list of names
        "architectures (MLPs, CNNs, GNNs) show",
        "issues known as (i) vanishing gradients and (ii) rank collapse",
        "such as (Ye et al., 2024; Ali et al., 2023), whose",
        "when the context length L becomes very large (e.g., 128K), the",
        "function match rate (65.33%) on",
        "proposed by Dwork et al. (2010) as",
        "DropEdge, a data augmentation technique for GNNs",
    ],
)
def test_parentheses_and_appositions_that_define_nothing(text: str) -> None:
    assert pairs(text) == []


def test_each_distinct_pair_once_in_order() -> None:
    text = (
        "Large Language Models (LLMs) are big. Recent Large Language Models (LLMs) and "
        "large language models (LLMs) and key-value (KV) caches."
    )
    assert pairs(text) == [("LLM", "Large Language Model"), ("KV", "key-value")]


def test_singular_word_handles_common_plurals() -> None:
    assert [
        singular_word(w)
        for w in ["models", "strategies", "losses", "Services", "analysis", "series", "LLM"]
    ] == [
        "model",
        "strategy",
        "loss",
        "Service",
        "analysis",
        "series",
        "LLM",
    ]


@pytest.mark.parametrize(
    ("record_id", "expected"),
    [
        (
            "unseen-01",
            [("OVD", "Open-vocabulary object detection"), ("SAPB", "Scale-Aware Prototype Bank")],
        ),
        (
            "unseen-04",
            [("RL", "reinforcement learning"), ("SCQI", "Support-Contracting Q-Iteration")],
        ),
        (
            "unseen-09",
            [
                ("ASR", "automatic speech recognition"),
                ("WER", "word error rate"),
                ("CTC", "connectionist temporal classification"),
            ],
        ),
        (
            "unseen-13",
            [("scRNA-seq", "Single-cell RNA sequencing"), ("HVG", "highly variable gene")],
        ),
    ],
)
def test_unseen_abstracts(record_id: str, expected: list[tuple[str, str]]) -> None:
    records = [json.loads(line) for line in (GOLD / "unseen.jsonl").read_text("utf-8").splitlines()]
    record = next(r for r in records if r["id"] == record_id)
    assert pairs(record["abstract"]) == expected


WORDS = st.sampled_from(
    [
        "Large",
        "Language",
        "Models",
        "(LLMs)",
        "(",
        ")",
        "key-value",
        "(KV)",
        ",",
        "namely",
        "MAPLE",
        "a",
        "the",
        "Network",
        "(3DGS)",
        "(IT3)",
        "(Code LLMs)",
        "s",
        "(S)",
        "(",
        "x",
    ]
)
ACRONYM_TEXT = st.lists(st.one_of(WORDS, st.text(max_size=8)), max_size=40).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(ACRONYM_TEXT)
def test_acronyms_are_well_formed_on_arbitrary_text(text: str) -> None:
    found = find_acronyms(text)
    assert len({(a.acronym, a.expansion.lower()) for a in found}) == len(found)
    for acronym in found:
        assert acronym.acronym and acronym.expansion
        assert len(acronym.expansion) > len(acronym.acronym.replace(" ", ""))
        assert acronym.acronym[:-1] in text or acronym.acronym in text

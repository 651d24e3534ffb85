"""Named artifacts: what a paper introduces, what it merely mentions, and what is no name at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text

from etl.models import MethodMention, RawRecord
from etl.pipeline import RunOptions, run
from etl.transform import load_taxonomy, transform
from etl.transform.acronyms import find_acronyms
from etl.transform.clean import clean_text, emphasized
from etl.transform.methods import find_methods, method_key

REPO = Path(__file__).resolve().parents[2]
GOLD = REPO / "tests" / "gold"


def methods(raw: str, title: str | None = None) -> tuple[MethodMention, ...]:
    """The artifacts the real transform finds in an abstract."""
    record = RawRecord(source="t", position=1, venue="V", year=2025, title=title, abstract=raw)
    return transform(record, load_taxonomy()).methods


def names(raw: str, role: str, title: str | None = None) -> list[str]:
    return [m.name for m in methods(raw, title) if m.role == role]


def gold(record_id: str) -> dict[str, object]:
    for path in GOLD.glob("*.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            record = json.loads(line)
            if record["id"] == record_id:
                return record
    raise KeyError(record_id)


def test_method_key_merges_case_hyphen_space_and_plural_variants() -> None:
    assert method_key("CommVQ") == method_key("commvq") == "commvq"
    assert method_key("SWE-bench Lite") == method_key("swe bench lite") == "swebenchlite"
    assert method_key("Soup-of-Experts") == method_key("soup of experts")
    assert method_key("Transformers") == method_key("transformer")
    assert method_key("loss") == "loss"


def test_commvq_is_one_introduced_method_with_its_expansion_as_alias() -> None:
    raw = gold("000-03")["abstract"]
    found = {m.name: m for m in methods(str(raw))}
    commvq = found["CommVQ"]
    assert commvq.role == "introduced"
    assert commvq.aliases == ("Commutative Vector Quantization",)
    assert commvq.keys == ("commvq", "commutativevectorquantization")
    assert "Commutative Vector Quantization" not in found
    assert found["RoPE"].role == "mentioned"
    assert found["RoPE"].aliases == ("Rotary Position Embedding",)
    assert [m.name for m in methods(str(raw)) if m.role == "mentioned"] == [
        "RoPE",
        "EM",
        "GSM8K",
        "LLaMA-3.1 8B",
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("We introduce TimeFuse, a framework for forecasting.", ["TimeFuse"]),
        ("The proposed framework, called **TraceGrad**, first constructs", ["TraceGrad"]),
        (
            "this paper introduces a novel framework called *detect-then-impute conformal prediction*.",
            ["detect-then-impute conformal prediction"],
        ),
        (
            "We develop two practical algorithms, $\\texttt{PDI-CP}$ and $\\texttt{JDI-CP}$, and",
            ["PDI-CP", "JDI-CP"],
        ),
        ("we put forward a new paradigm of MemSinks that promotes isolation", ["MemSinks"]),
        ("Using ZebraLogic, a newly developed benchmark dataset of puzzles, we", ["ZebraLogic"]),
        ("Notably, our CCA-Attention is able to replace self-attention.", ["CCA-Attention"]),
        ("We propose the Soup-of-Experts, a novel architecture that", ["Soup-of-Experts"]),
        ("We present **Hopscotch**, a training system that overlaps", ["Hopscotch"]),
        ("a relation-aware negative sampler, named HardNeg, which draws negatives", ["HardNeg"]),
        (
            "On JOB-light and DriftJoin, a new benchmark we build by replaying updates, it",
            ["DriftJoin"],
        ),
        ("a new drift-heavy dataset, TelemDrift, that we collect from satellites", ["TelemDrift"]),
        ("We also release **LVIS-Tiny**, a split of 12K images.", ["LVIS-Tiny"]),
    ],
)
def test_cue_phrases_introduce_names(raw: str, expected: list[str]) -> None:
    assert names(raw, "introduced") == expected
    assert not set(names(raw, "mentioned")) & set(expected)  # one role per name


@pytest.mark.parametrize(
    ("raw", "name", "aliases"),
    [
        (
            "we propose Commutative Vector Quantization (CommVQ) to reduce",
            "CommVQ",
            ("Commutative Vector Quantization",),
        ),
        (
            "we introduce Rate-Constrained Training (BackSlash), a novel approach",
            "BackSlash",
            ("Rate-Constrained Training",),
        ),
        (
            "we propose **M**any-Shot **A**daptive **P**seudo-**L**ab**E**ling, namely **MAPLE**, a",
            "MAPLE",
            ("Many-Shot Adaptive Pseudo-Labeling",),
        ),
        (
            "We propose **LUMEN** (**L**ightweight **U**nified **M**ultimodal **E**mbedding **N**etwork), which",
            "LUMEN",
            ("Lightweight Unified Multimodal Embedding Network",),
        ),
        (
            "we propose a plug-and-play Core Context Aware (CCA) Attention for efficiency. Our "
            "CCA-Attention works.",
            "CCA-Attention",
            ("Core Context Aware Attention",),
        ),
        ("We present JoinSketch-Net (JSN), a learned estimator", "JSN", ("JoinSketch-Net",)),
        (
            "we provide an analytical performance model (APM) that predicts time",
            "APM",
            ("analytical performance model",),
        ),
        (
            "We present ProtoLens, a framework. ProtoLens introduces a Scale-Aware Prototype Bank (SAPB) that",
            "SAPB",
            ("Scale-Aware Prototype Bank",),
        ),
    ],
)
def test_long_forms_become_aliases_of_the_short_name(
    raw: str, name: str, aliases: tuple[str, ...]
) -> None:
    found = {m.name: m for m in methods(raw) if m.role == "introduced"}
    assert name in found, found
    assert found[name].aliases == aliases
    assert found[name].keys == tuple(method_key(n) for n in (name, *aliases))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("We revisit DropEdge, a data augmentation technique for GNNs.", ["DropEdge"]),
        ("a simple model to understand adaptive optimizers like Adam.", ["Adam"]),
        ("We train with the Adam optimizer on the Pile dataset.", ["Adam", "Pile"]),
        (
            "detectors such as USAD and the Anomaly Transformer flag drift",
            ["USAD", "Anomaly Transformer"],
        ),
        (
            "Using ResNet-50 and ViT-B/16, compared to GPT-4o and Claude 3.",
            ["ResNet-50", "ViT-B/16", "GPT-4o", "Claude 3"],
        ),
        ("Experiments on long-context benchmarks and GSM8K show gains.", ["GSM8K"]),
        ("allowing a LLaMA-3.1 8B model to run on a single RTX 4090 GPU.", ["LLaMA-3.1 8B"]),
        ("It reaches 65% on SWE-bench Lite. It also improves.", ["SWE-bench Lite"]),
        ("Evaluating pretrained models (DINO, CLIP), we find", ["DINO", "CLIP"]),
        ("we explore strategies such as Best-of-N sampling, backtracking", ["Best-of-N sampling"]),
        (
            "a new loss function based on Direct Preference Optimization, which",
            ["Direct Preference Optimization"],
        ),
        (
            "We also show that Thompson sampling with quantized rewards fails.",
            ["Thompson sampling"],
        ),
        ("on the Yahoo! R6A news-recommendation dataset confirm", ["Yahoo! R6A"]),
        ("batch-correction models such as scVI or Harmony. We", ["scVI", "Harmony"]),
        (
            "by 31% compared with DeepSpeed-MoE and by 18% compared with Tutel, while",
            ["DeepSpeed-MoE", "Tutel"],
        ),
        (
            "the time of a Mixtral-style 8x22B model and BadNets-style triggers",
            ["Mixtral", "BadNets"],
        ),
        ("Plugged into PostgreSQL 16, it is fast. PostgreSQL chooses plans.", ["PostgreSQL 16"]),
        ("on news corpora such as CNN/DailyMail and XSum", ["CNN/DailyMail", "XSum"]),
        (
            "a monocular depth prior from Depth Anything and Stable Diffusion 2.1.",
            ["Depth Anything", "Stable Diffusion 2.1"],
        ),
        (
            "the public MSD Pancreas and NIH Pancreas-CT datasets",
            ["MSD Pancreas", "NIH Pancreas-CT"],
        ),
    ],
)
def test_named_existing_artifacts_are_mentioned(raw: str, expected: list[str]) -> None:
    assert names(raw, "mentioned") == expected
    assert names(raw, "introduced") == []  # an existing artifact is never the paper's own


@pytest.mark.parametrize(
    "raw",
    [
        "Large language models are susceptible to memorizing sequences. Catastrophic forgetting remains.",
        "Existing GNNs, CNNs and MLPs, like most LLMs and Video-LLMs, reach SOTA results.",
        "It improves PSNR by 1.6 dB and NDCG@10 by 8%, pass@1 and chrF++ at 38 FPS on one A100 GPU.",
        "trained on 200B tokens with 8B parameters and a 128K context, 2-bit and FP16 weights",
        "on a single RTX 4090 GPU and 512 H100 GPUs, collected on a Franka Emika Panda arm",
        "Pan-privacy was proposed by Dwork et al. (2010) as an approach; see (Ye et al., 2024).",
        "Code is available at https://github.com/aimagelab/TransFusion and github.com/fwu11/MACIL.",
        "We derive a limiting SDE and ODE and an Efron–Stein inequality via Random Matrix Theory.",
        "native speakers of Wolof, Quechua and Khmer; the Bayesian FL setting with Gaussian noise",
        "regret Ω(d√T + dT2^-b) with G = (V, E, w_G) and SO(3)-equivariant features of 1-2α",
        "Models with different sizes exhibit variations. Moreover, we hope this helps. 1) Can it?",
        "We present an analysis of SignSGD in a high dimensional limit.",
        "Code and data are available at GitHub (https://github.com/Coxy7/AIGI).",
        "As shown in Section 3 and Algorithm 1 (Theorem 2), published at NeurIPS 2023 in May 2024.",
        "We release the French dataset and a Transformer model trained on Chinese text.",
    ],
)
def test_ordinary_words_generic_acronyms_units_hardware_and_urls_are_not_names(raw: str) -> None:
    found = methods(raw)
    assert [m.name for m in found if m.role == "introduced"] == []
    # Only the text that names SignSGD may mention it; no other text may yield any name.
    expected = ["SignSGD"] if "SignSGD" in raw else []
    assert [m.name for m in found if m.role == "mentioned"] == expected


def test_defined_acronyms_of_fields_tasks_and_classes_are_not_methods() -> None:
    raw = (
        "Personalized federated learning (PFL) and reinforcement learning (RL) with Large Language "
        "Models (LLMs), graph neural networks (GNNs), computed tomography (CT) and the click-through "
        "rate (CTR), with Mutual Information (MI) bounds and three pointwise information (PI) "
        "measures: pointwise mutual information (PMI) and pointwise V-information (PVI). PVI beats PMI."
    )
    assert names(raw, "mentioned") == ["PMI", "PVI"]


def test_title_case_headings_are_not_names_but_a_named_title_introduces() -> None:
    assert names(
        "We evaluate on ImageNet.",
        "mentioned",
        title="Deep Residual Learning for Image Recognition",
    ) == ["ImageNet"]
    found = methods(
        "We study caching. SlimKV beats H2O on LongBench.",
        title="SlimKV: Fast Long-Context Inference",
    )
    assert [(m.name, m.role) for m in found] == [
        ("SlimKV", "introduced"),
        ("H2O", "mentioned"),
        ("LongBench", "mentioned"),
    ]


def test_kinds_come_from_the_words_around_a_name() -> None:
    raw = (
        "We introduce TimeFuse, a framework for fusion. We also release FooBench, a suite of tasks. "
        "Results on the MSD Pancreas and NIH Pancreas-CT datasets and models such as StarCoder2-7B, "
        "with optimizers like SignSGD."
    )
    kinds = {m.name: m.kind for m in methods(raw)}
    assert kinds == {
        "TimeFuse": "framework",
        "FooBench": "benchmark",
        "MSD Pancreas": "dataset",
        "NIH Pancreas-CT": "dataset",
        "StarCoder2-7B": "model",
        "SignSGD": "optimizer",
    }


@pytest.mark.parametrize("record_id", ["unseen-05", "unseen-07", "unseen-12", "unseen-14"])
def test_unseen_abstracts_come_out_as_annotated(record_id: str) -> None:
    record = gold(record_id)
    found = methods(str(record["abstract"]))
    for role in ("introduced", "mentioned"):
        wanted = record[role]
        assert isinstance(wanted, list)
        assert [m.name for m in found if m.role == role] == [g["name"] for g in wanted]


def test_every_mention_has_keys_for_its_name_and_aliases() -> None:
    for path in GOLD.glob("*.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            record = json.loads(line)
            if "abstract" not in record:
                continue  # real gold lines keep a key to their source, not the text
            found = methods(record["abstract"])
            seen: set[str] = set()
            for mention in found:
                assert mention.keys[0] == method_key(mention.name)
                assert mention.keys == tuple(
                    method_key(n) for n in (mention.name, *mention.aliases)
                )
                assert seen.isdisjoint(mention.keys)
                seen.update(mention.keys)


def test_seeds_load_commvq_once_with_its_alias_and_rope_in_the_glossary(tmp_path: Path) -> None:
    """The loader merges methods through the keys: the contract the views rely on."""
    url = f"sqlite:///{tmp_path / 'papers.db'}"
    run(RunOptions(paths=(str(REPO / "seeds"),), database_url=url))
    engine = create_engine(url)
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT method, role FROM method_index WHERE method LIKE '%CommVQ%' OR method LIKE 'Commutative%'"
            )
        ).all()
        assert [tuple(r) for r in rows] == [("CommVQ", "introduced")]
        aliases = (
            connection.execute(
                text(
                    "SELECT a.alias FROM method_aliases a JOIN methods m ON m.id = a.method_id "
                    "WHERE m.name = 'CommVQ' ORDER BY a.alias"
                )
            )
            .scalars()
            .all()
        )
        assert aliases == ["CommVQ", "Commutative Vector Quantization"]
        expansions = (
            connection.execute(
                text("SELECT DISTINCT expansion FROM acronym_glossary WHERE acronym = 'RoPE'")
            )
            .scalars()
            .all()
        )
        assert expansions == ["Rotary Position Embedding"]
    engine.dispose()


NAMEISH = st.sampled_from(
    [
        "We",
        "propose",
        "introduce",
        "called",
        "namely",
        "our",
        "CommVQ",
        "(",
        ")",
        ",",
        ".",
        "a",
        "novel",
        "LLMs",
        "Adam",
        "like",
        "such",
        "as",
        "GSM8K",
        "8B",
        "Yahoo",
        "!",
        "-style",
        "et",
        "al",
        "https://github.com/o/r",
        "**X**",
        "$",
        "Net",
        "(KV)",
        "key-value",
        ":",
        "1)",
        "’s",
    ]
)
METHOD_TEXT = st.lists(st.one_of(NAMEISH, st.text(max_size=6)), max_size=40).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(METHOD_TEXT)
def test_find_methods_is_well_formed_on_arbitrary_text(raw: str) -> None:
    clean = clean_text(raw)
    found = find_methods(clean, emphasized(raw), find_acronyms(clean))
    keys: set[str] = set()
    for mention in found:
        assert mention.name and mention.name == mention.name.strip()
        assert mention.role in {"introduced", "mentioned"}
        assert mention.keys and mention.keys[0] == method_key(mention.name)
        assert keys.isdisjoint(mention.keys)
        keys.update(mention.keys)
        assert "://" not in mention.name


def test_every_packaged_word_list_is_read_and_its_comments_are_not_words() -> None:
    from importlib import resources

    from etl.transform.methods import vocabulary

    files = [f.name for f in resources.files("etl.data.methods").iterdir()]
    lists = sorted(f[:-4] for f in files if f.endswith(".txt"))
    source = Path(vocabulary.__file__).read_text("utf-8")
    for name in lists:
        read_as = (f'words("{name}")', f'lines("{name}")')
        assert any(r in source for r in read_as), f"{name}.txt is packaged but never read"
        read = vocabulary.words(name)
        assert read and not any(w.startswith("#") for w in read)
    assert vocabulary.KIND_WORDS["corpus"] == "dataset"

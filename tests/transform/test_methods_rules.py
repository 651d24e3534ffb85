"""General rules for names the real abstracts of public paper lists exposed, each on made-up
sentences: the paper's own artifact, acronyms of fields and tasks, names cut short or run
together, acronym forms, metrics and formats, and titles read as titles."""

from __future__ import annotations

import pytest

from etl.models import MethodMention, RawRecord
from etl.transform import load_taxonomy, transform
from etl.transform.acronyms import find_acronyms

TAXONOMY = load_taxonomy()


def methods(abstract: str, title: str | None = None) -> tuple[MethodMention, ...]:
    """The artifacts the real transform finds in a record."""
    record = RawRecord(source="t", position=1, venue="V", year=2025, title=title, abstract=abstract)
    return transform(record, TAXONOMY).methods


def roles(abstract: str, title: str | None = None) -> dict[str, str]:
    """Name -> role of every artifact found."""
    return {m.name: m.role for m in methods(abstract, title)}


def acronyms(text: str) -> set[tuple[str, str]]:
    return {(a.acronym, a.expansion) for a in find_acronyms(text)}


# -- 1. the paper's own artifact -----------------------------------------------------------


@pytest.mark.parametrize(
    ("abstract", "introduced"),
    [
        ("Our method, Kestrel, aligns features across domains without labels.", ["Kestrel"]),
        ("We study sorting and present an operator that we dub g-softsort.", ["g-softsort"]),
        ("Ranking needs smooth sorts, which we call SoftRank, for training.", ["SoftRank"]),
        ("We analyze data mixing and propose TreeMix, an algorithm that mixes trees.", ["TreeMix"]),
        (
            "To this end, we introduce two new datasets: HARBOR-3D and DOCK-3D. Both are large.",
            ["HARBOR-3D", "DOCK-3D"],
        ),
        ("We propose a sparse accelerated Hard Thresholding (saHT) method.", ["saHT"]),
    ],
)
def test_the_papers_own_artifact_is_introduced(abstract: str, introduced: list[str]) -> None:
    found = roles(abstract)
    assert [n for n, r in found.items() if r == "introduced"] == introduced
    assert "mentioned" not in found.values()


def test_a_name_given_to_a_generic_head_is_the_introduced_one() -> None:
    found = roles("We introduce a U-Net architecture named PolarSeg for segmentation.")
    assert found == {"U-Net": "mentioned", "PolarSeg": "introduced"}


def test_an_acronym_inside_a_long_form_belongs_to_the_outer_name() -> None:
    text = (
        "We propose a Geometry-Preserving Ground-to-Aerial (G2A) image synthesis (GP-G2A) "
        "model for novel views."
    )
    found = {m.name: m for m in methods(text)}
    assert list(found) == ["GP-G2A"]
    assert found["GP-G2A"].role == "introduced"
    assert found["GP-G2A"].aliases == ("Geometry-Preserving Ground-to-Aerial image synthesis",)
    assert acronyms(text) == {
        ("G2A", "Ground-to-Aerial"),
        ("GP-G2A", "Geometry-Preserving Ground-to-Aerial image synthesis"),
    }


def test_a_subject_reaches_the_second_of_two_coordinated_verbs_only_in_its_sentence() -> None:
    assert roles("We study mixing and propose LoopMix for parsing.") == {"LoopMix": "introduced"}
    found = roles("We study mixing. Prior work and propose LoopMix for parsing.")
    assert found.get("LoopMix") != "introduced"


# -- 2. acronyms of tasks, fields, settings and notions --------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "We train a reward model (RM) for alignment.",
        "Remote sensing (RS) images are hard to label.",
        "Human-Object Interaction (HOI) detection needs context.",
        "We study open-world test-time adaptation (OWTTA) for streams.",
        "Independent component analysis (ICA) is a classical field.",
        "We explain predictions with explainable AI (XAI) tools.",
        "We bound the CDF and the VC-dimension of the class.",
        "Videos are rendered in 4K HD for the study.",
    ],
)
def test_fields_tasks_settings_and_notions_are_not_artifacts(text: str) -> None:
    assert methods(text) == ()


def test_a_capitalised_model_acronym_is_still_a_mentioned_artifact() -> None:
    found = {m.name: m for m in methods("We prompt the Segment Anything Model (SAM) with boxes.")}
    assert found["SAM"].role == "mentioned"
    assert found["SAM"].aliases == ("Segment Anything Model",)


# -- 3. capitalised phrases that are not artifacts ---------------------------------------------


def test_words_glued_by_a_missing_space_are_not_a_name() -> None:
    assert methods("We compare several models.Our results hold across seeds.") == ()


# -- 7. acronym forms ------------------------------------------------------------------------


def test_colon_and_dash_appositive_acronym_forms() -> None:
    text = (
        "We propose MILO: Multimodal Iterative Language Optimizer, which tunes prompts. "
        "We build DGS- a decoupled graph scheduler - for clusters."
    )
    assert acronyms(text) == {
        ("MILO", "Multimodal Iterative Language Optimizer"),
        ("DGS", "decoupled graph scheduler"),
    }
    found = {m.name: m for m in methods(text)}
    assert found["MILO"].role == found["DGS"].role == "introduced"
    assert found["MILO"].aliases == ("Multimodal Iterative Language Optimizer",)


def test_a_colon_form_must_be_spelled_by_initials() -> None:
    assert acronyms("We use BERT: Pre-training of Deep Bidirectional Transformers.") == set()
    assert acronyms("BERT: Bidirectional Encoder Representations from Transformers") == {
        ("BERT", "Bidirectional Encoder Representations from Transformers")
    }
    assert acronyms("Results in Section 2: Ablations Show Gains") == set()


def test_a_digit_read_as_a_word_spells_its_long_form() -> None:
    assert acronyms("a sequence to sequence (Seq2Seq) model") == {
        ("Seq2Seq", "sequence to sequence")
    }
    assert acronyms("Ground-to-Aerial (G2A) synthesis") == {("G2A", "Ground-to-Aerial")}


# -- 6. a long form never starts inside an earlier parenthesis ---------------------------------


def test_a_long_form_does_not_run_back_over_a_parenthesis() -> None:
    assert acronyms("with data (DVX) extended count (DVX-cnt) of nodes") == set()
    assert acronyms("the **D**ynamic **V**erte**X** count (DVX-cnt)".replace("**", "")) == {
        ("DVX-cnt", "Dynamic VerteX count")
    }


# -- 8. metrics and formats ------------------------------------------------------------------


def test_metrics_questionnaires_and_formats_are_not_artifacts() -> None:
    text = (
        "Users rated workload with NASA-TLX and the music was stored as MIDI; "
        "we report MS-SSIM and SacreBLEU."
    )
    assert methods(text) == ()


# -- 9. titles -------------------------------------------------------------------------------


def test_a_title_is_not_read_as_a_sentence_of_the_abstract() -> None:
    found = roles("We propose a new approach for tagging.", "Robust Named Entity Recognition")
    assert found == {}


@pytest.mark.parametrize(
    ("title", "name", "kind"),
    [
        ("SkyDet: A Detector for Small Objects", "SkyDet", "model"),
        ("Kestrel: Aligning Domains without Labels", "Kestrel", "method"),
        ("Halo-3D - a Benchmark for Lidar Odometry", "Halo-3D", "benchmark"),
    ],
)
def test_the_name_before_a_title_colon_is_introduced(title: str, name: str, kind: str) -> None:
    found = {m.name: m for m in methods("We study the problem on aerial images.", title)}
    assert found == {name: found[name]}
    assert (found[name].role, found[name].kind) == ("introduced", kind)


@pytest.mark.parametrize(
    "title",
    [
        "Deep Learning: A Survey",
        "Revisiting Dropout: When Does It Help",
        "Transformers: A Primer",
        "Why It Works: Margins",
        "Beyond Goldfish Memory: Long Chats",
        "Demonstrating HumanBot: A Robot Study",
    ],
)
def test_a_title_prefix_that_is_no_name_is_not_introduced(title: str) -> None:
    assert [m for m in methods("We study the problem.", title) if m.role == "introduced"] == []


def test_a_title_name_the_abstract_mentions_is_introduced_once() -> None:
    found = methods("Unlike Adam, SkyDet adapts its step size.", "SkyDet: An Adaptive Optimizer")
    assert [(m.name, m.role) for m in found] == [("Adam", "mentioned"), ("SkyDet", "introduced")]


def test_coined_names_in_a_title_are_mentions() -> None:
    found = roles("We study the problem.", "Do LSTMs Beat GPT-4o on Long Text")
    assert found == {"GPT-4o": "mentioned"}


# -- 3. capitalised task phrases -------------------------------------------------------------


def test_title_case_task_names_are_not_artifacts() -> None:
    text = "We study Conversational Table Analysis and Visual Question Answering in dialogue."
    assert methods(text) == ()


# -- 4. names not cut short ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("We evaluate agents on Google Research Football and Atari.", "Google Research Football"),
        ("We compare Vision Transformers with convolutions.", "Vision Transformers"),
        (
            "We analyze Local (Stochastic) Gradient Descent under noise.",
            "Local (Stochastic) Gradient Descent",
        ),
        ("Detectors are trained on MS COCO for a day.", "MS COCO"),
    ],
)
def test_names_are_kept_whole(text: str, name: str) -> None:
    assert roles(text) == {name: "mentioned"}


def test_a_maker_or_family_word_alone_is_no_name() -> None:
    assert (
        methods("We thank Google for compute and use transformers with Transformer blocks.") == ()
    )


# -- 5. lists whose commas were stripped -----------------------------------------------------


def test_a_list_without_commas_splits_on_known_names() -> None:
    found = methods("Our model is evaluated on (KITTI nuScenes Waymo and Argoverse) at night.")
    assert [(m.name, m.role, m.kind) for m in found] == [
        (name, "mentioned", "dataset") for name in ("KITTI", "nuScenes", "Waymo", "Argoverse")
    ]


def test_a_list_without_commas_splits_names_sharing_a_stem() -> None:
    found = roles("We compare ResNet18 ResNet50 and Grounding DINO on PASCAL VOC.")
    assert found == {
        "ResNet18": "mentioned",
        "ResNet50": "mentioned",
        "Grounding DINO": "mentioned",
        "PASCAL VOC": "mentioned",
    }


def test_namely_before_known_datasets_introduces_nothing() -> None:
    found = roles("We test on several image sets, namely CIFAR10 CIFAR100 and TinyImageNet.")
    assert found == {n: "mentioned" for n in ("CIFAR10", "CIFAR100", "TinyImageNet")}


def test_namely_before_new_names_still_introduces_them() -> None:
    found = roles("We propose a framework, namely DeltaGraph, for sparse graphs.")
    assert found == {"DeltaGraph": "introduced"}


# -- known names as evidence of kind ---------------------------------------------------------


def test_known_dataset_names_get_the_dataset_kind_whatever_the_sentence() -> None:
    found = {
        m.name: m.kind for m in methods("Unlike COCO, GLUE, CelebA and PASCAL VOC, it is small.")
    }
    assert found == {
        "COCO": "dataset",
        "GLUE": "dataset",
        "CelebA": "dataset",
        "PASCAL VOC": "dataset",
    }


def test_a_rare_known_dataset_name_is_a_mention_on_its_own() -> None:
    assert roles("We segment street scenes from Cityscapes at night.") == {
        "Cityscapes": "mentioned"
    }


def test_known_names_keep_case_so_an_optimizer_is_no_dataset() -> None:
    found = {m.name: m.kind for m in methods("We train with optimizers such as Adam.")}
    assert found == {"Adam": "optimizer"}  # the archive lists a dataset `ADAM`


def test_the_packaged_dataset_list_is_attributed_and_has_no_ordinary_words() -> None:
    from importlib import resources

    from etl.transform.methods.vocabulary import KNOWN_DATASETS

    header = resources.files("etl.data.methods").joinpath("datasets.txt").read_text("utf-8")
    assert "Papers with Code" in header and "CC BY-SA 4.0" in header
    assert {"COCO", "GLUE", "CelebA", "PASCAL VOC", "KITTI", "nuScenes"} <= set(KNOWN_DATASETS)
    assert not {"Travel", "Breakfast", "Birds"} & set(KNOWN_DATASETS)
    assert all(len(name) >= 3 and not name.startswith("#") for name in KNOWN_DATASETS)


# -- more forms of the paper's own artifact --------------------------------------------------


@pytest.mark.parametrize(
    ("abstract", "name", "kind"),
    [
        (
            "Further, we propose a novel end-to-end model (QUILL) that grounds text.",
            "QUILL",
            "model",
        ),
        (
            "We propose a clustering method with tensor factorization (TensorKM), built on k-means.",
            "TensorKM",
            "method",
        ),
        (
            'We propose a "cross-view decoupling architecture" within our ranking pipeline.',
            "cross-view decoupling architecture",
            "architecture",
        ),
        (
            'We propose an optimization technique called the "subspace Newton\'s method" for speed.',
            "subspace Newton's method",
            "method",
        ),
        (
            "We propose a framework, called neural-progressive hedging (NPH), for control.",
            "NPH",
            "framework",
        ),
        (
            "Besides, an Audio-Bridged Temporal Mixer module is proposed to exchange cues.",
            "Audio-Bridged Temporal Mixer",
            "module",
        ),
    ],
)
def test_coined_quoted_and_passive_names_are_introduced(
    abstract: str, name: str, kind: str
) -> None:
    found = {m.name: m for m in methods(abstract) if m.role == "introduced"}
    assert list(found) == [name]
    assert found[name].kind == kind


def test_a_definition_a_few_words_after_called_is_the_introduced_name() -> None:
    found = methods(
        "We propose a family of models called label-noise robust GANs (rGANs), which work."
    )
    assert [(m.name, m.role, m.aliases) for m in found] == [("rGAN", "introduced", ("robust GAN",))]


def test_a_passive_intro_needs_a_kind_noun_and_a_name() -> None:
    assert methods("Our code is released and a new method is proposed for ranking.") == ()
    assert methods("Pan-privacy is introduced in this note.") == ()


@pytest.mark.parametrize(
    "text",
    [
        "Research on dialogue state tracking (DST) has grown; DST models are brittle.",
        "Cross-Lingual Summarization (XLS) aims to summarize across languages.",
        "This paper considers the multi-armed bandit (MAB) problem under delays.",
        "Knowledge Tracing (KT) models students; KT is hard.",
        "Players reach a Nash Equilibrium (NE) quickly.",
        "We study sim2real transfer and text-to-SQL parsing on non-IID data with 4-DoF grasps.",
    ],
)
def test_tasks_settings_and_paradigms_are_no_mentions(text: str) -> None:
    assert methods(text) == ()


def test_a_loss_named_after_a_task_word_is_still_a_mention() -> None:
    found = methods("We train with Connectionist Temporal Classification (CTC) on speech.")
    assert [(m.name, m.role) for m in found] == [("CTC", "mentioned")]


def test_embedding_names_of_the_x2vec_shape_stay_names() -> None:
    assert roles("We compare against wav2vec and Megatron-LM baselines.") == {
        "wav2vec": "mentioned",
        "Megatron-LM": "mentioned",
    }


def test_the_named_parts_of_the_papers_own_framework_are_introduced() -> None:
    text = (
        "Our pre-training framework consists of the following components: (1) Intra-modal "
        "Denoising Coding (IDC), which rebuilds inputs. (2) Cross-modal Denoising Coding (CDC), "
        "which translates them. It contains two modules, including the Supportive Node Picker "
        "and the Soft Rule-Inspired Node Reweighting."
    )
    found = {m.name: (m.role, m.kind) for m in methods(text)}
    assert found == {
        name: ("introduced", "module")
        for name in ("IDC", "CDC", "Supportive Node Picker", "Soft Rule-Inspired Node Reweighting")
    }


def test_parts_listed_by_someone_elses_work_are_not_introduced() -> None:
    text = "Prior pipelines contain two stages, including the Grounding DINO detector and SAM."
    assert "introduced" not in roles(text).values()


def test_a_task_defined_after_an_intro_verb_is_not_the_papers_artifact() -> None:
    text = (
        "We propose a method for zero-shot sketch-based image retrieval (ZS-SBIR) and present "
        "an analytical performance model (APM) for it."
    )
    found = roles(text)
    assert found.get("ZS-SBIR") != "introduced" and found["APM"] == "introduced"


def test_two_introduced_names_joined_by_a_slash_are_two() -> None:
    found = roles("Two vaccines are studied. We show that our DWV/IWV stop removal attacks.")
    assert found == {"DWV": "introduced", "IWV": "introduced"}


def test_a_task_run_is_never_introduced() -> None:
    assert methods("We propose Implicit Sentiment Analysis for reviews.") == ()


# -- long forms fitted to their initials -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        (
            "a question focus-driven contrastive learning framework (QFCL). Then",
            ("QFCL", "question focus-driven contrastive learning"),
        ),
        (
            "with a differentiable first-order logic language (FOL). To",
            ("FOL", "first-order logic"),
        ),
        (
            "a High-order Graph Representation Learning model (HOGRL) to",
            ("HOGRL", "High-order Graph Representation Learning"),
        ),
        (
            "defines the Spatio-temporal Metric-semantic SLAM (SMS) problem",
            ("SMS", "Spatio-temporal Metric-semantic SLAM"),
        ),
        ("a convolutional neural network (CNN) model", ("CNN", "convolutional neural network")),
        (
            "Log-Barrier Adaptive-Curvature Online Newton Step (LB-AdaCurv ONS) is",
            ("LB-AdaCurv ONS", "Log-Barrier Adaptive-Curvature Online Newton Step"),
        ),
        (
            "R-BASS : Relevance-aided Block-wise Adaptation for Speech Summarization",
            ("R-BASS", "Relevance-aided Block-wise Adaptation for Speech Summarization"),
        ),
        (
            "MCNet: Monotonic Calibration Networks for Uncertainty",
            ("MCNet", "Monotonic Calibration Network"),
        ),
        (
            "named ASSIST (lAbel noiSe-robuSt dIalogue State Tracking), to",
            ("ASSIST", "label noise-robust dialogue State Tracking"),
        ),
        (
            "we propose LG-GNN, a local-global adaptive graph neural network for graphs",
            ("LG-GNN", "local-global adaptive graph neural network"),
        ),
        ("Cross-Lingual Summarization (XLS) aims", ("XLS", "Cross-Lingual Summarization")),
    ],
)
def test_long_forms_fit_their_initials(text: str, pair: tuple[str, str]) -> None:
    assert acronyms(text) == {pair}


def test_a_coined_word_is_no_lower_case_appositive_acronym() -> None:
    text = "ProtoLens, a region-prompt distillation framework that learns prototypes"
    assert acronyms(text) == set()


def test_a_number_initial_short_form_spells_its_number_word() -> None:
    assert acronyms("merged into an entire three-dimensional(3D) model") == {
        ("3D", "three-dimensional")
    }


def test_a_colon_form_may_spell_a_whole_title_phrase_between_its_capitals() -> None:
    assert acronyms("SP-Net: Slowly Progressing Dynamic Inference Networks") == {
        ("SP-Net", "Slowly Progressing Dynamic Inference Network")
    }
    assert acronyms("SAU: Smooth Activation Function Using Convolution with Identities") == set()


def test_a_title_acronym_does_not_hide_the_titles_own_name() -> None:
    found = roles("We calibrate ad rankings.", "MCNet: Monotonic Calibration Networks for Ads")
    assert found == {"MCNet": "introduced"}


def test_named_parts_based_on_other_work_are_not_introduced() -> None:
    text = (
        "Our system consists of three components: (1) a speaker encoder trained on speech; "
        "(2) a synthesis network based on Tacotron 2, which makes spectrograms."
    )
    assert roles(text) == {"Tacotron 2": "mentioned"}


def test_paradigm_words_are_no_mentions() -> None:
    assert methods("Sequence models such as seq2seq and Seq2Seq learners are compared.") == ()


def test_a_capitalised_naming_word_inside_a_name_names_nothing() -> None:
    text = "Networks such as Long Short Term Memory (LSTM) and Gated Recurrent Unit (GRU) work."
    assert "introduced" not in roles(text).values()


def test_an_appositive_intro_takes_the_whole_capitalised_name() -> None:
    found = roles("We introduce Siamese Survival Prognosis Network, a novel deep architecture.")
    assert found == {"Siamese Survival Prognosis Network": "introduced"}


def test_a_passive_intro_of_a_sentence_initial_word_names_nothing() -> None:
    assert methods("The network is designed for speed. The method is proposed here.") == ()


def test_short_all_capital_names_are_not_taken_as_known_datasets() -> None:
    from etl.transform.methods.vocabulary import KNOWN_DATASETS

    assert "SGD" not in KNOWN_DATASETS  # a dialogue dataset in the archive, an optimizer here
    assert {m.name: m.kind for m in methods("We train with SGD and momentum.")} != {
        "SGD": "dataset"
    }


def test_a_lower_case_coined_title_name_before_an_article_is_introduced() -> None:
    found = roles("We release tools for speech.", "wordless-kit: a Library for Spoken Text")
    assert found == {"wordless-kit": "introduced"}
    assert roles("We study it.", "self-supervised: Learning Without Labels") == {}


def test_plural_acronyms_labels_and_title_case_paradigms_are_no_mentions() -> None:
    text = (
        "Sampling from k-DPPs and DPPs is hard. Challenges C1, C2 and C3 remain for "
        "Text-to-SQL, unlike T5."
    )
    assert roles(text) == {"T5": "mentioned"}


def test_bold_initials_inside_hyphenated_names_through_the_transform() -> None:
    record = RawRecord(
        source="t",
        position=1,
        venue="V",
        year=2025,
        title=None,
        abstract=(
            "We track graphs (see Sec. 2) with the **D**ynamic **V**erte**X**-**c**ou**n**t "
            "(DVX-cnt) of nodes. Counts matter (a lot) in e**X**tended-**c**ou**n**t (DXC-cnt)."
        ),
    )
    bundle = transform(record, TAXONOMY)
    assert [(a.acronym, a.expansion) for a in bundle.acronyms] == [
        ("DVX-cnt", "Dynamic VerteX-count")
    ]

"""Generate N realistic, deterministic paper records for benchmarks (JSON Lines or plain text).

Usage: python benchmarks/generate.py N OUT_FILE [--seed S] [--format jsonl|text] [--files K]

Records stream to disk one at a time, so memory stays flat in N. Text comes from word lists:
a seeded `random.Random` first fills pools of sentences, then each record picks from them, so
a million records take well under a minute. Every abstract names a coined method whose stem
is a bijection of the record number, so no two abstracts are ever equal; ids hash the content.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

VERSION = 2  # bump when the output for a given seed changes (benchmark caches are keyed by it)
HEADER = "BENCH 2025 paper list"
NAME = "\x00"  # placeholder for the paper's coined method name inside pooled sentences
POOL_SIZE = 3000
ABSTRACT_CHARS = 1200
BUFFER_BYTES = 1 << 20

# Word lists (kept compact: one list, many words a line).
# fmt: off
SYLLABLES = (
    "ka", "lo", "mi", "ner", "vo", "tra", "zen", "qui", "dex", "ral", "syn", "ph", "gor", "tal",
    "vex", "mo", "ri", "sha", "plu", "cor", "fen", "bi", "dra", "lux", "ne", "os", "tur", "wel",
    "ya", "xi", "gra", "hel", "ion", "jo", "kor", "lim", "mar", "nox", "pra", "quo",
)
NAME_SUFFIXES = (
    "Net", "Former", "GAN", "Diff", "Flow", "GNN", "LM", "RL", "Mixer", "Opt", "",
)
FIELDS = (
    "computer vision", "natural language processing", "reinforcement learning", "graph learning",
    "speech recognition", "robotics", "computational biology", "recommender systems",
    "time-series forecasting", "federated learning", "causal inference", "optimization",
    "generative modeling", "autonomous driving", "medical imaging", "program synthesis",
    "drug discovery", "climate modeling",
)
TASKS = (
    "image classification", "object detection", "semantic segmentation", "machine translation",
    "question answering", "text summarization", "link prediction", "node classification",
    "molecule generation", "protein folding", "anomaly detection", "video understanding",
    "3D reconstruction", "code generation", "tabular prediction", "out-of-distribution detection",
    "continual learning", "domain adaptation", "few-shot learning", "long-context reasoning",
    "retrieval-augmented generation", "motion planning", "speech synthesis", "visual grounding",
)
ADJECTIVES = (
    "scalable", "efficient", "robust", "lightweight", "principled", "unified", "adaptive",
    "hierarchical", "sparse", "equivariant", "contrastive", "self-supervised", "modular",
    "training-free", "provably convergent", "memory-efficient", "interpretable", "multimodal",
    "differentiable", "uncertainty-aware", "privacy-preserving", "data-efficient",
)
ARCHITECTURES = (
    "transformer", "diffusion model", "graph neural network", "state-space model",
    "mixture-of-experts", "variational autoencoder", "normalizing flow", "policy network",
    "convolutional network", "retrieval module", "language model", "neural operator",
    "energy-based model", "kernel method", "Bayesian network", "world model",
)
ISSUES = (
    "quadratic memory cost", "poor calibration", "distribution shift", "catastrophic forgetting",
    "high sample complexity", "exposure bias", "mode collapse", "over-smoothing",
    "slow convergence", "label noise", "spurious correlations", "limited context length",
    "hallucination", "reward hacking", "privacy leakage", "error accumulation",
)
NOUNS = (
    "representations", "gradients", "attention maps", "latent codes", "token embeddings",
    "reward signals", "feature statistics", "posterior samples", "graph structure",
    "loss landscapes", "activation outliers", "KV caches", "decision boundaries",
    "training dynamics", "pseudo-labels", "prompts", "trajectories", "spectral filters",
)
VERBS = (
    "aligns", "compresses", "regularizes", "decouples", "calibrates", "distills", "reweights",
    "prunes", "routes", "denoises", "retrieves", "factorizes", "stabilizes", "aggregates",
)
DATASETS = (
    "ImageNet", "CIFAR-10", "CIFAR-100", "COCO", "ADE20K", "GLUE", "SuperGLUE", "SQuAD", "MMLU",
    "GSM8K", "HumanEval", "WMT14", "LibriSpeech", "Kinetics-400", "ShapeNet", "OGB-Arxiv", "Cora",
    "PubMed", "MIMIC-III", "D4RL", "Atari", "nuScenes", "LAION-5B", "The Pile", "ScanNet", "ETTh1",
)
BASELINES = (
    "BERT", "RoBERTa", "GPT-4", "LLaMA-2", "T5", "ResNet-50", "ViT-B/16", "CLIP", "DINOv2",
    "Swin Transformer", "GCN", "GraphSAGE", "GAT", "PPO", "SAC", "DDPM", "Stable Diffusion",
    "Mamba", "LoRA", "Adam", "XGBoost", "U-Net", "NeRF", "Whisper",
)
METRICS = (
    "accuracy", "F1", "BLEU", "mIoU", "AUROC", "perplexity", "return", "recall@10",
)
ACRONYM_WORDS = (
    "Adaptive", "Bayesian", "Contrastive", "Dynamic", "Efficient", "Federated", "Gated",
    "Hierarchical", "Implicit", "Joint", "Kernel", "Latent", "Multi-scale", "Neural", "Orthogonal",
    "Progressive", "Quantized", "Recurrent", "Sparse", "Temporal", "Uncertainty", "Variational",
    "Weighted", "Cross-modal", "Token", "Graph", "Memory", "Policy", "Reward", "Attention",
    "Diffusion", "Prompt", "Feature", "Gradient", "Residual", "Spectral",
)
ACRONYM_HEADS = (
    "Alignment", "Calibration", "Distillation", "Encoding", "Fusion", "Learning", "Optimization",
    "Pruning", "Quantization", "Routing", "Sampling", "Tuning", "Search",
)
FIRST_NAMES = (
    "Wei", "Yuki", "Maria", "James", "Aisha", "Liam", "Sofia", "Chen", "Priya", "Lucas", "Elena",
    "Omar", "Hana", "Jonas", "Fatima", "Mateo", "Ines", "Kenji", "Zara", "Noah", "Ming", "Olga",
    "Ravi", "Chloe", "Tomás", "Amara", "Yusuf", "Lena", "Arjun", "Mei",
)
LAST_NAMES = (
    "Zhang", "Wang", "Garcia", "Smith", "Kim", "Müller", "Rossi", "Nguyen", "Patel", "Cohen",
    "Silva", "Ivanova", "Tanaka", "Kowalski", "Okafor", "Haddad", "Larsen", "Dubois", "Li", "Chen",
    "Liu", "Novak", "Singh", "Park", "Johnson", "Fernández", "Yilmaz", "Sato",
)
GITHUB_OWNERS = (
    "ml-lab", "deepmind-research", "visionlab", "nlp-group", "ai4science", "robotics-uni",
    "graphml", "open-research", "stat-ml", "fair-lab", "tsinghua-ml", "mila-iqia",
)
# fmt: on
# Formats for a link in the abstract; `{url}` is followed by the trailing text shown.
CODE_SENTENCES = (
    "Code is available at {url}.",
    "Our code is released at {url}.git.",
    "The implementation is publicly available at \\href{{{url}}}{{GitHub}}.",
    "Code and models: {url}).",
    "Code: {bare}.",
    "See {url}, for code and data.",
)


@dataclass(frozen=True)
class Record:
    """One generated paper; `github` is a record field (None when absent or in the abstract)."""

    id: str
    title: str
    abstract: str
    authors: tuple[str, ...]
    github: str | None


def coined_stem(index: int, scale: int) -> str:
    """A pronounceable name unique to `index`: an affine bijection of it, spelled in syllables."""
    base = len(SYLLABLES)
    digits = 4
    while base**digits < scale:
        digits += 1
    modulus = base**digits
    value = (index * 7_919_993 + 104_729) % modulus  # 7,919,993 is prime, so coprime to 40**k
    parts = []
    for _ in range(digits):
        value, digit = divmod(value, base)
        parts.append(SYLLABLES[digit])
    return "".join(parts).capitalize()


def plural(noun: str) -> str:
    """`transformers`, but `mixture-of-experts` stays as it is."""
    return noun if noun.endswith("s") else noun + "s"


def acronym_pair(rng: random.Random) -> tuple[str, str]:
    """A long form and its acronym, e.g. ("Sparse Latent Routing", "SLR")."""
    words = [*rng.sample(ACRONYM_WORDS, rng.randint(1, 3)), rng.choice(ACRONYM_HEADS)]
    long_form = " ".join(words)
    return long_form, "".join(w[0].upper() for w in words)


def sentence_pools(rng: random.Random) -> dict[str, list[str]]:
    """Pools of filled sentences by role; NAME marks where the paper's method name goes."""
    templates = {
        "context": (
            lambda: (
                f"{rng.choice(TASKS).capitalize()} is a central problem in "
                f"{rng.choice(FIELDS)}, with applications ranging from {rng.choice(TASKS)} to "
                f"{rng.choice(TASKS)}."
            ),
            lambda: (
                f"Recent advances in {plural(rng.choice(ARCHITECTURES))} have transformed "
                f"{rng.choice(FIELDS)}, yet {rng.choice(TASKS)} remains challenging."
            ),
            lambda: (
                f"{plural(rng.choice(ARCHITECTURES)).capitalize()} such as {rng.choice(BASELINES)} "
                f"achieve strong results on {rng.choice(DATASETS)}, but their {rng.choice(NOUNS)} "
                f"are poorly understood."
            ),
        ),
        "problem": (
            lambda: (
                f"However, existing methods suffer from {rng.choice(ISSUES)} and "
                f"{rng.choice(ISSUES)}, which limits their use in {rng.choice(FIELDS)}."
            ),
            lambda: (
                f"We identify {rng.choice(ISSUES)} as a key bottleneck: prior work "
                f"{rng.choice(VERBS)[:-1]}s {rng.choice(NOUNS)} without accounting for "
                f"{rng.choice(ISSUES)}."
            ),
            lambda: (
                f"Unfortunately, {rng.choice(BASELINES)} and its variants require "
                f"$O(n^{rng.randint(2, 3)})$ time in the sequence length $n$."
            ),
        ),
        "propose": (
            lambda: (
                f"In this paper, we propose **{NAME}**, a {rng.choice(ADJECTIVES)} "
                f"{rng.choice(ARCHITECTURES)} for {rng.choice(TASKS)}."
            ),
            lambda: (
                f"We introduce $\\texttt{{{NAME}}}$, a {rng.choice(ADJECTIVES)} framework "
                f"that {rng.choice(VERBS)} {rng.choice(NOUNS)}."
            ),
            lambda: (
                f"To address this, we present {NAME}, which {rng.choice(VERBS)} "
                f"{rng.choice(NOUNS)} with a {rng.choice(ADJECTIVES)} {rng.choice(ARCHITECTURES)}."
            ),
            lambda: (
                f"We propose {NAME}, a {{\\em {rng.choice(ADJECTIVES)}}} approach to "
                f"{rng.choice(TASKS)}."
            ),
        ),
        "method": (
            lambda: (
                f"{NAME} {rng.choice(VERBS)} {rng.choice(NOUNS)} across layers and "
                f"{rng.choice(VERBS)} {rng.choice(NOUNS)} at inference time."
            ),
            lambda: (
                f"Concretely, we model the data as a graph $G = (V, E)$ and learn "
                f"{rng.choice(NOUNS)} that are invariant to {rng.choice(ISSUES)}."
            ),
            lambda: (
                f"Our analysis shows a convergence rate of $O(1/\\sqrt{{T}})$ under "
                f"standard assumptions, matching the lower bound for {rng.choice(TASKS)}."
            ),
            lambda: (
                f"Unlike {rng.choice(BASELINES)}, it {rng.choice(VERBS)} "
                f"{rng.choice(NOUNS)} without additional supervision."
            ),
        ),
        "results": (
            lambda: (
                f"Extensive experiments on {rng.choice(DATASETS)} show that {NAME} outperforms "
                f"{rng.choice(BASELINES)} by {rng.randint(2, 40)}.{rng.randint(0, 9)}\\% in "
                f"{rng.choice(METRICS)}."
            ),
            lambda: (
                f"Compared with {rng.choice(BASELINES)} on {rng.choice(DATASETS)}, our "
                f"method reduces memory usage by {rng.randint(20, 90)}\\% while improving "
                f"{rng.choice(METRICS)}."
            ),
            lambda: (
                f"On {rng.choice(DATASETS)}, {NAME} reaches state-of-the-art "
                f"{rng.choice(METRICS)} without task-specific tuning."
            ),
            lambda: (
                f"Experiments on {rng.randint(3, 12)} benchmarks show consistent gains of "
                f"{rng.randint(2, 30)}\\% in {rng.choice(METRICS)} over strong baselines."
            ),
            lambda: (
                f"{NAME} improves {rng.choice(METRICS)} by {rng.randint(2, 30)}.{rng.randint(0, 9)}"
                f"\\% over the prior state of the art across {rng.randint(2, 9)} tasks."
            ),
        ),
        "closing": (
            lambda: (
                f"Our findings highlight the role of {rng.choice(NOUNS)} in "
                f"{rng.choice(TASKS)} and open new directions for {rng.choice(FIELDS)}."
            ),
            lambda: (
                f"We hope this work encourages {rng.choice(ADJECTIVES)} approaches to "
                f"{rng.choice(TASKS)}."
            ),
        ),
        "filler": (
            lambda: (
                f"We further study how {rng.choice(NOUNS)} interact with "
                f"{rng.choice(NOUNS)}, and find that {rng.choice(ISSUES)} is largely explained by "
                f"{rng.choice(NOUNS)}."
            ),
            lambda: (
                f"Ablations confirm that each component contributes, in particular the "
                f"{rng.choice(ADJECTIVES)} treatment of {rng.choice(NOUNS)}."
            ),
            lambda: (
                f"These results suggest that {rng.choice(ADJECTIVES)} "
                f"{plural(rng.choice(ARCHITECTURES))} are a promising direction for "
                f"{rng.choice(FIELDS)}."
            ),
            lambda: (
                f"We also release a benchmark for {rng.choice(TASKS)} with "
                f"{rng.randint(3, 40)} subtasks, on which existing methods degrade by "
                f"{rng.randint(5, 60)}\\%."
            ),
            lambda: (
                f"Theoretically, we show that {rng.choice(NOUNS)} of "
                f"{plural(rng.choice(ARCHITECTURES))} concentrate around a low-dimensional "
                f"manifold $\\mathcal{{M}} \\subset \\mathbb{{R}}^d$."
            ),
            lambda: (
                f"Finally, we discuss limitations, including {rng.choice(ISSUES)} when "
                f"{rng.choice(NOUNS)} are scarce."
            ),
        ),
    }
    return {
        role: [rng.choice(makers)() for _ in range(POOL_SIZE)] for role, makers in templates.items()
    }


def acronym_sentences(rng: random.Random) -> list[str]:
    """A pool of sentences that define an acronym as `Long Form (LF)` and then use it."""
    pool = []
    for _ in range(POOL_SIZE):
        long_form, short = acronym_pair(rng)
        pool.append(
            f"At its core is {long_form} ({short}), which {rng.choice(VERBS)} "
            f"{rng.choice(NOUNS)}; {short} adds negligible overhead."
        )
    return pool


class Generator:
    """Deterministic record factory: the same seed gives the same records, in order."""

    def __init__(self, seed: int, scale: int):
        self.rng = random.Random(seed)
        self.scale = scale
        self.pools = sentence_pools(self.rng)
        self.pools["acronym"] = acronym_sentences(self.rng)
        # Padding: filler sentences, and one time in four a method sentence.
        self.pools["padding"] = self.pools["filler"] * 3 + self.pools["method"]

    def record(self, index: int) -> Record:
        """The record with this number."""
        rng = self.rng
        name = coined_stem(index, self.scale) + rng.choice(NAME_SUFFIXES)
        target = rng.randint(ABSTRACT_CHARS - 260, ABSTRACT_CHARS + 140)  # ends ~1,200 on average
        github = self._github(name) if rng.random() < 0.25 else None
        link_in_abstract = github is not None and rng.random() < 0.5
        abstract = self._abstract(name, target, github if link_in_abstract else None)
        title = self._title(name)
        authors = tuple(
            f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(rng.randint(1, 8))
        )
        digest = hashlib.blake2b(f"{title}\n{abstract}".encode(), digest_size=8).hexdigest()
        field_link = None if link_in_abstract else github
        return Record(f"bench-{digest}", title, abstract, authors, field_link)

    def _abstract(self, name: str, target: int, link: str | None) -> str:
        """Sentences in a paper's usual order, padded with filler up to about `target` chars."""
        rng, pools = self.rng, self.pools
        parts = [rng.choice(pools[role]) for role in ("context", "problem", "propose")]
        parts += [rng.choice(pools["acronym"]), rng.choice(pools["method"])]
        parts.append(rng.choice(pools["results"]))
        length = sum(len(p) + 1 for p in parts)
        tail = [rng.choice(pools["closing"])] if rng.random() < 0.5 else []
        if link:
            tail.append(rng.choice(CODE_SENTENCES).format(url=link, bare=link[len("https://") :]))
        length += sum(len(p) + 1 for p in tail)
        while length < target:
            filler = rng.choice(pools["padding"])
            parts.append(filler)
            length += len(filler) + 1
        return " ".join(parts + tail).replace(NAME, name)

    def _title(self, name: str) -> str:
        """A title that names the method two times in three."""
        rng = self.rng
        pattern = rng.randrange(3)
        adjective = rng.choice(ADJECTIVES).capitalize()
        models = plural(rng.choice(ARCHITECTURES)).title()
        task = rng.choice(TASKS).title()
        if pattern == 0:
            return f"{name}: {adjective} {models} for {task}"
        if pattern == 1:
            return f"Towards {adjective} {task} with {name}"
        return f"On the {rng.choice(NOUNS).title()} of {models} under {rng.choice(ISSUES).title()}"

    def _github(self, name: str) -> str:
        """A GitHub repository URL for this paper."""
        return f"https://github.com/{self.rng.choice(GITHUB_OWNERS)}/{name}"

    def records(self, count: int) -> Iterator[Record]:
        """The first `count` records, one at a time."""
        for index in range(count):
            yield self.record(index)


def jsonl_line(record: Record) -> str:
    """One JSON Lines row; `github` only when the record has the field."""
    data: dict[str, object] = {
        "id": record.id,
        "title": record.title,
        "abstract": record.abstract,
        "authors": list(record.authors),
    }
    if record.github:
        data["github"] = record.github
    return json.dumps(data, ensure_ascii=False) + "\n"


def text_block(record: Record) -> str:
    """One abstract of the plain-text list; a field link is appended as a sentence."""
    if record.github:
        return f"{record.abstract} Code is available at {record.github}.\n\n"
    return record.abstract + "\n\n"


def output_paths(out: Path, files: int, fmt: str) -> list[Path]:
    """The file to write, or K numbered files inside the folder `out`."""
    if files == 1:
        out.parent.mkdir(parents=True, exist_ok=True)
        return [out]
    out.mkdir(parents=True, exist_ok=True)
    suffix = "jsonl" if fmt == "jsonl" else "txt"
    return [out / f"part-{i:03d}.{suffix}" for i in range(files)]


def generate(
    count: int, out: Path, *, seed: int = 1, fmt: str = "jsonl", files: int = 1
) -> list[Path]:
    """Write `count` records to `out` (split into `files` contiguous parts); return the paths."""
    paths = output_paths(out, files, fmt)
    records = Generator(seed, max(count, 1)).records(count)
    render = jsonl_line if fmt == "jsonl" else text_block
    for part, path in enumerate(paths):
        share = (count * (part + 1)) // files - (count * part) // files
        with path.open("w", encoding="utf-8", buffering=BUFFER_BYTES) as handle:
            if fmt == "text":
                handle.write(HEADER + "\n\n")
            for _ in range(share):
                handle.write(render(next(records)))
    return paths


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of records")
    parser.add_argument("out", type=Path, help="output file (a folder with --files K > 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--format", dest="fmt", choices=("jsonl", "text"), default="jsonl")
    parser.add_argument("--files", type=int, default=1, help="split into K files in a folder")
    args = parser.parse_args(argv)
    if args.n < 0 or args.files < 1:
        parser.error("N must be >= 0 and K >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Generate the records and say where they went."""
    args = parse_args(argv)
    paths = generate(args.n, args.out, seed=args.seed, fmt=args.fmt, files=args.files)
    size = sum(p.stat().st_size for p in paths)
    print(
        f"wrote {args.n:,} records, {size / 1e6:,.1f} MB, to {len(paths)} file(s) under {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A small deterministic corpus generator for reliability tests (plain-text list format)."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "graph neural network attention transformer diffusion policy gradient kernel sparse "
    "retrieval language vision reward robust causal federated privacy benchmark dataset "
    "quantization pruning distillation contrastive embedding latent variational bayesian "
    "optimal transport convex stochastic adaptive memory cache token context alignment"
).split()
NAMES = ("Net", "Former", "GAN", "Bench", "VQ", "Flow", "Mix", "Diff")


def abstract(rng: random.Random, number: int) -> str:
    """One unique abstract with a named method, an acronym and sometimes a code link."""
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 120)))
    name = f"{rng.choice(WORDS).capitalize()}{rng.choice(NAMES)}{number}"
    text = f"We propose **{name}**, a novel method for {words}. Paper number {number}."
    if number % 4 == 0:
        text += f" Code is available at https://github.com/lab{number % 97}/{name.lower()}."
    return text


def write_corpus(folder: Path, files: int, per_file: int, seed: int = 7) -> int:
    """Write `files` lists of `per_file` abstracts each; returns the number of abstracts."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    number = 0
    for index in range(files):
        lines = [f"BENCH 2025 paper list (part {index + 1})", ""]
        for _ in range(per_file):
            number += 1
            lines += [abstract(rng, number), ""]
        (folder / f"part_{index + 1:03d}.txt").write_text("\n".join(lines), "utf-8")
    return number

"""Derive the packaged list of known dataset and benchmark names (`etl/data/methods/datasets.txt`)
from the dataset names of the Papers with Code archive (CC BY-SA 4.0).

    python tools/known_names.py PWC_DATASETS_TXT > etl/data/methods/datasets.txt

The archive's list is noisy: splits (`COCO test-dev`), remarks in parentheses, leaderboard paths,
author names and ordinary words (`Travel`, `Breakfast`). What is kept: names of at most four
words, without their split or remark, that are not ordinary English: a single word is kept when
it is shaped like a coined name (capitals inside, digits, all capitals) or rare in English and
is not a short form of three capitals or fewer; a phrase when one of its words is coined.
Word frequencies come from the `wordfreq` package (installed only to run this script:
`pip install wordfreq`).
"""

from __future__ import annotations

import re
import sys

from wordfreq import zipf_frequency

from etl.transform.methods.tokens import STRONG, method_key, shape
from etl.transform.methods.vocabulary import GENERIC

HEADER = """\
# Dataset and benchmark names, one a line: evidence of a name's kind (COCO, GLUE, CelebA,
# PASCAL VOC are datasets or benchmarks, not methods) and of where a list that lost its commas
# splits (`KITTI nuScenes Waymo`). Compared by method key (case, spaces, hyphens ignored).
#
# Derived by tools/known_names.py from the dataset names of the Papers with Code archive,
# whose data is published under CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/);
# this filtered list is shared under the same licence.
"""
SPLITS = re.compile(
    r"(?i)[\s_-]+(?:test|val|valid|validation|dev|train|test-dev|test-std|testa|testb|"
    r"val2017|test2017|full|small|large|clean|other|mini)$"
)
ALLOWED = re.compile(r"^[A-Za-z0-9][\w+.&'’/-]*(?: [\w+.&'’/-]+){0,3}$")
ORDINARY = 3.0  # zipf frequency at or above which a word is ordinary English


def clean(name: str) -> str | None:
    """A name without its remark or split, or None when it is no name to ship."""
    name = re.sub(r"\s*\([^()]*\)\s*", " ", name).split(" - ")[0].split(",")[0].strip()
    for _ in range(2):
        name = SPLITS.sub("", name).strip()
    if not ALLOWED.match(name) or not 3 <= len(name) <= 40 or "et al" in name:
        return None
    if method_key(name) in GENERIC or name.replace(" ", "").isdigit():
        return None
    return name


def coined(word: str) -> bool:
    """Shaped like a coined name, or rare in English."""
    if shape(word) == STRONG:
        return True
    return word[:1].isupper() and zipf_frequency(word.lower(), "en") < ORDINARY


def keep(name: str) -> bool:
    """Not an ordinary word or phrase, nor a short form of three capitals or fewer (`SGD` is a
    dialogue dataset in the archive and an optimizer everywhere else)."""
    words = name.split(" ")
    if len(words) == 1:
        short = name.isupper() and len(name) <= 3
        return coined(words[0]) and not short
    return any(coined(w) for w in words) and not all(w.islower() for w in words)


def main(path: str) -> None:
    """Print the curated list."""
    seen: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            name = clean(line.strip())
            if name and keep(name):
                seen.setdefault(method_key(name), name)
    print(HEADER)
    for name in sorted(seen.values(), key=str.casefold):
        print(name)


if __name__ == "__main__":
    main(sys.argv[1])

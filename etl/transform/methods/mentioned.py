"""Mentioned artifacts: names of other work a paper uses or compares with.

Runs of strong and title words (`Grounding DINO`, `SWE-bench Lite`, `LLaMA-3.1 8B`), a run of
title words that is not a generic class (`Direct Preference Optimization`), a single title word
only where the context says it is a name (`like Adam`, `such as scVI or Harmony`), and acronyms
defined in the text that name a technique rather than a field, task or class (`Rotary Position
Embedding (RoPE)` yes; `reinforcement learning (RL)`, `LLMs` no). Never: sentence-initial
capitals, generic acronyms of a field, metrics, units, numbers, hardware, citations, URL pieces,
and the paper's own names again as mentions.
"""

from __future__ import annotations

import re
from itertools import compress

from etl.transform.acronyms import singular_word
from etl.transform.methods.base import Reading
from etl.transform.methods.kinds import KIND_OF_WORD, kind_of_name, mention_kind
from etl.transform.methods.tokens import ADJ, NUM, STRONG, TITLE, shape
from etl.transform.methods.vocabulary import (
    COORDINATORS,
    CUE_BEFORE,
    CUE_PAIRS,
    HARDWARE_NOUNS,
    NAME_NOUNS,
    TASK_HEADS,
    TITLE_GENERIC_HEADS,
)

# An acronym in the plural, undefined: a class (`DPPs`, `k-DPPs`), like `LLMs`.
PLURAL_CLASS_RE = re.compile(r"^(?:[a-z]-)?[A-Z]{2,}s$")
LABEL_RE = re.compile(r"^[A-Z]\d$")


class Mentioned(Reading):
    """The rules for mentioned names."""

    def _defined_mentions(self) -> None:
        """Acronyms defined in the text that name a technique, model or measure in use."""
        for d in self.definitions:
            if self._known(d.acronym) or self._known(d.expansion):
                continue
            if self._judged(d):
                self._add(d.acronym, "mentioned", kind_of_name(d.expansion), (d.expansion,))

    def _mentioned(self) -> None:
        """Runs of name-shaped words that are not generic, initial capitals or the paper's own."""
        t = self.t
        masked = self.masked
        n, shapes, words, lower, initial = t.n, t.shapes, t.words, t.lower, t.initial
        done = -1
        for i in compress(range(n), t.name_shaped):
            if i <= done or masked[i]:
                continue
            if shapes[i] == ADJ:
                self._adjective_root(i)
                continue
            if (
                shapes[i] == TITLE
                and (initial[i] or i < t.heading_end)
                and (
                    i + 1 == n
                    or (
                        shapes[i + 1] not in (STRONG, TITLE, NUM)
                        and words[i + 1] != "!"
                        and lower[i + 1] not in NAME_NOUNS
                    )
                )
            ):
                # A lone capitalised word that starts a sentence or is in the heading: _chunk
                # gives (i, i) (nothing can extend it) and _judge_chunk returns at once.
                done = i
                continue
            first, last = self._chunk(i, mask=True)
            if last >= first:
                self._judge_chunk(first, last)
                done = last

    def _judge_chunk(self, first: int, last: int) -> None:
        """Decide whether a run of name words (or each name of a run that lost its commas) is
        a mentioned artifact."""
        t = self.t
        lists = last > first and STRONG in t.shapes[first : last + 1]  # a list lost its commas?
        parts = self._segments(first, last) if lists else [(first, last)]
        for part_first, part_last in parts:
            self._judge_name(part_first, part_last, listed=len(parts) > 1)

    def _judge_name(self, first: int, last: int, listed: bool) -> None:
        """Decide whether a run of name words is a mentioned artifact."""
        t = self.t
        words = t.words[first : last + 1]
        shapes = t.shapes[first : last + 1]
        if "!" in words:
            shapes = [s for w, s in zip(words, shapes, strict=True) if w != "!"]
            words = [w for w in words if w != "!"]
        if STRONG not in shapes and (t.initial[first] or first < t.heading_end):
            return  # the same early return as below, before the costlier checks
        name = t.span(first, last)
        if self._is_excluded(name) or self._followed_by(last, HARDWARE_NOUNS):
            return
        if last + 2 < t.n and t.lower[last + 1] == "et" and t.lower[last + 2] == "al":
            return
        if STRONG in shapes:
            if (
                t.initial[first]
                and shapes[0] == TITLE
                and len(words) > 1
                and STRONG not in shapes[:1]
            ):
                return
            if len(words) == 1 and self._defined_generic(words[0]):  # the one word is strong
                return
            if len(words) == 1 and self._known(words[0].rstrip("s")):
                return
            if len(words) == 1 and (PLURAL_CLASS_RE.match(name) or self._label(name)):
                return  # `DPPs`, `k-DPPs`: a class in the plural; `C1`, `C2`: labels
            self._add(name, "mentioned", mention_kind(self.t, first, last, name))
            return
        titles = [w for w, s in zip(words, shapes, strict=True) if s == TITLE]
        if t.initial[first] or first < t.heading_end:
            return
        if len(titles) >= 2:
            head = singular_word(titles[-1].split("-")[-1].lower())
            if head in TITLE_GENERIC_HEADS or (head in TASK_HEADS and shapes[-1] == TITLE):
                return
            self._add(name, "mentioned", mention_kind(self.t, first, last, name))
            return
        if self._named_by_kind(first, last):
            if t.words[last + 1][0].isupper():  # the Anomaly Transformer: the kind is named too
                last += 1
                name = t.span(first, last)
            self._add(name, "mentioned", mention_kind(self.t, first, last, name))
        elif (
            len(words) > 1
            or listed
            or self._cued(first)
            or self._listed_with_name(first, last)
            or self._known_dataset(first, last)
        ):
            self._add(name, "mentioned", mention_kind(self.t, first, last, name))

    def _label(self, name: str) -> bool:
        """`C1` beside `C2` or `C3`: labels of a list (a lone `T5` stays a name)."""
        if not LABEL_RE.match(name):
            return False
        return sum(LABEL_RE.match(w) is not None and w[0] == name[0] for w in self.t.words) > 1

    def _adjective_root(self, i: int) -> None:
        """`BadNets-style`, `LASER-based`: the name before an adjective suffix is a mention."""
        t = self.t
        word = t.words[i]
        root, _, suffix = word.rpartition("-")
        if not root or self._is_excluded(root):
            return
        root_shape = shape(root)
        if root_shape == STRONG and not self._defined_generic(root):
            self._add(root, "mentioned", mention_kind(self.t, i, i, root))
        elif root_shape == TITLE and suffix == "style" and not t.initial[i]:
            self._add(root, "mentioned", "model")

    def _named_by_kind(self, first: int, last: int) -> bool:
        """`the Adam optimizer`, `the Pile dataset`: a capitalised word between `the` and a kind."""
        t = self.t
        return (
            first > 0
            and t.lower[first - 1] == "the"
            and last + 1 < t.n
            and t.lower[last + 1] in KIND_OF_WORD
            and t.lower[last + 1] not in {"test", "split", "head", "layer", "block"}
        )

    def _cued(self, first: int) -> bool:
        """A single capitalised word right after `like`, `such as`, `over`, `compared with` ..."""
        t = self.t
        if first < 1:
            return False
        if t.lower[first - 1] in CUE_BEFORE:
            return True
        return first >= 2 and (t.lower[first - 2], t.lower[first - 1]) in CUE_PAIRS

    def _listed_with_name(self, first: int, last: int) -> bool:
        """`scVI or Harmony`, `Cora, PubMed, Chameleon, Squirrel`: a capitalised word in a list
        (of names separated by commas, `and`, `or`) that holds a strong name."""
        t = self.t
        for step, start in ((-1, first - 1), (1, last + 1)):
            j, items = start, 0
            while 0 <= j < t.n and items < 8:
                gap = j
                while 0 <= j < t.n and t.lower[j] in COORDINATORS:
                    j += step
                # after the first item, the words of a run whose commas were lost need none
                if (j == gap and not items) or not 0 <= j < t.n or self.masked[j]:
                    break
                if t.shapes[j] == STRONG:
                    return not self._defined_generic(t.words[j])
                if t.shapes[j] != TITLE:
                    break
                j += step
                items += 1
        return False

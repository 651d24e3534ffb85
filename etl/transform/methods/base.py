"""What the finder knows of one text while it reads it: tokens, acronym definitions, emphasis,
the artifacts found so far, and the name runs (`chunks`) both readings share."""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from etl.models import Acronym, MethodMention
from etl.transform.acronyms import Definition, acronym_definitions, singular_word
from etl.transform.methods.kinds import CLASS_NOUNS, known_dataset
from etl.transform.methods.tokens import (
    NUM,
    SIZE_RE,
    STRONG,
    TITLE,
    UNIT_RE,
    Text,
    generic_key,
    method_key,
)
from etl.transform.methods.vocabulary import (
    FIELD_HEADS,
    FUNCTION_WORDS,
    GENERIC,
    GENERIC_HEADS,
    INITIAL_STOPWORDS,
    LOWERCASE_GENERIC_HEADS,
    MEASURE_HEADS,
    NAME_HEADS,
    NAME_NOUNS,
    ORGANISATIONS,
    TASK_HEADS,
    UNIT_WORDS,
)

# Task heads of acronym expansions; `classification` also ends names of losses and methods
# (`Connectionist Temporal Classification (CTC)`).
DEFINED_TASK_HEADS = TASK_HEADS - {"classification"}


class Reading:
    """One text being read: its tokens and definitions, and the artifacts found so far."""

    def __init__(self, text: str, emphasized: list[str], acronyms: tuple[Acronym, ...]):
        self.t = Text(text)
        self.definitions = acronym_definitions(text)
        self.expansions = {a.acronym: a.expansion for a in acronyms}
        for d in self.definitions:
            self.expansions.setdefault(d.acronym, d.expansion)
        self.emphasis = _emphasis_starts(text, emphasized)
        self.by_short_start = {d.short_start: d for d in self.definitions}
        self.by_long_start_token: dict[int, Definition] = {}  # token where the long form starts
        for d in self.definitions:
            index = self._token_at(d.long_start)
            if index is not None:
                self.by_long_start_token.setdefault(index, d)
        # acronym -> whether the text's definition names an artifact (decided once per text)
        self.defined: dict[str, bool] = {}
        self.judged: dict[Definition, bool] = {}  # _is_defined_mention, read once per definition
        for d in self.definitions:
            self.defined[d.acronym] = self.defined.get(d.acronym, False) or self._judged(d)
        self.masked = _masked_tokens(self.t, self.definitions)
        self.unmasked = [False] * self.t.n
        self.found: dict[str, MethodMention] = {}
        self.keys: dict[str, str] = {}  # every key of a found artifact -> its first key
        self.bases: set[str] = set()

    def _first_seen(self, mention: MethodMention) -> int:
        """Where a name (or one of its aliases) first appears: mentions come in reading order."""
        text = self.t.text
        first = len(text)
        for name in (mention.name, *mention.aliases):
            at = text.find(name)
            if 0 <= at < first:
                first = at
        return first

    # -- bookkeeping -----------------------------------------------------------------------

    def _add(self, name: str, role: str, kind: str, aliases: tuple[str, ...] = ()) -> None:
        """Record an artifact unless one of its spellings is already known."""
        name = name.strip(" ,.;:\"'“”")
        if not name or not (name[0].isalpha() or any(c.isalpha() for c in name)):
            return
        keys: list[str] = []
        kept: list[str] = []
        for spelling in (name, *aliases):
            key = method_key(spelling)
            if key and key not in keys:
                keys.append(key)
                kept.append(spelling)
        if not self.keys.keys().isdisjoint(keys):
            return
        base = method_key(_without_version(name))
        if role == "mentioned" and base in self.bases:
            return  # PostgreSQL ... PostgreSQL 16
        if kind not in ("dataset", "benchmark") and known_dataset(name):
            kind = "dataset"  # COCO, GLUE, CelebA: whatever the sentence suggests
        mention = MethodMention(name, kind, role, name, tuple(kept[1:]), tuple(keys))
        self.found[keys[0]] = mention
        for key in keys:
            self.keys[key] = keys[0]
        self.bases.add(base)

    def _known(self, name: str) -> bool:
        """A spelling of an artifact found already."""
        return method_key(name) in self.keys

    # -- introduced ------------------------------------------------------------------------
    def _paren_definition(self, i: int) -> Definition | None:
        """The definition whose short form is inside the parenthesis at token `i`."""
        if i + 1 < self.t.n:
            return self.by_short_start.get(self.t.starts[i + 1])
        return None

    def _judged(self, d: Definition) -> bool:
        """`_is_defined_mention` (which reads only the text), remembered."""
        judged = self.judged.get(d)
        if judged is None:
            judged = self.judged[d] = self._is_defined_mention(d)
        return judged

    def _is_defined_mention(self, d: Definition) -> bool:
        """A defined acronym naming an artifact, not a field, task, class or passing quantity."""
        if generic_key(d.acronym) in GENERIC or generic_key(d.short) in GENERIC:
            return False
        if not d.acronym[:1].isalnum():
            return False
        words = d.long.replace("–", " ").split()
        content = _content_words(d.long)
        head_written = content[-1].split("-")[-1]
        head = head_written.lower()
        plural = d.short != d.acronym or (
            len(content) == len(words) and singular_word(head_written) != head_written
        )
        if plural or self._followed_by_plural(d):
            return False
        singular_head = singular_word(head)
        if singular_head in GENERIC_HEADS or singular_head in DEFINED_TASK_HEADS:
            return False
        titled = sum(w[:1].isupper() for w in words[1:]) >= max(1, len(words) - 2)
        if not titled and singular_head in LOWERCASE_GENERIC_HEADS:
            return False
        if singular_head in MEASURE_HEADS:
            return self._reused(d) or d.long_start in self.emphasis
        return True

    def _names_a_task(self, d: Definition) -> bool:
        """A definition of a generic acronym, or of a task or a field (`Simultaneous
        Localization and Mapping (SLAM)`, `out-of-distribution (OOD)`)."""
        if generic_key(d.acronym) in GENERIC:
            return True
        words = _content_words(d.long)
        if any(w[:1].isupper() for w in words[1:]):
            return False  # a capitalised long form names: `Many-Shot Adaptive Pseudo-Labeling`
        head = singular_word(words[-1].split("-")[-1].lower())
        return head in FIELD_HEADS or head in DEFINED_TASK_HEADS

    def _followed_by_plural(self, d: Definition) -> bool:
        """`pointwise information (PI) measures`: the acronym qualifies a plural noun."""
        i = self._token_at_or_after(d.end)
        if i is None:
            return False
        return self.t.lower[i] in CLASS_NOUNS

    def _reused(self, d: Definition) -> bool:
        """The acronym appears again after its definition."""
        return bool(re.search(rf"(?<![\w-]){re.escape(d.acronym)}(?![\w])", self.t.text[d.end :]))

    def _defined_generic(self, token: str) -> bool:
        """A token that the text defines as an acronym of a generic field, task or class."""
        token = token[:-1] if token.endswith("s") and token[:-1] in self.expansions else token
        return token in self.expansions and not self.defined.get(token, False)

    def _defined_mention(self, token: str) -> bool:
        """A token that the text defines as an acronym naming an artifact (`RoPE`)."""
        return self.defined.get(token, False)

    def _chunk(self, i: int, mask: bool = False) -> tuple[int, int]:
        """The run of name words starting at `i`: titles and strong names, then a version."""
        t = self.t
        masked = self.masked if mask else self.unmasked
        n, shapes, words, initial = t.n, t.shapes, t.words, t.initial
        first = i
        j = i
        while (
            j < n
            and not masked[j]
            and (shapes[j] in (STRONG, TITLE) or (words[j] == "!" and self._brand_bang(j)))
        ):
            if j > first and initial[j] and words[j - 1] != "!":
                break
            j += 1
            if self._parenthesised_word(j):
                j += 3  # `Local (Stochastic) Gradient Descent`: the name goes on
        last = j - 1
        if last < first:
            return first, last
        if j < n and not masked[j] and t.lower[j] in NAME_HEADS and words[j][0].isupper():
            last = j  # `Vision Transformers`: a capitalised family noun ends the name
            j += 1
        if first > 0 and t.lower[first - 1] in ORGANISATIONS and self._joined(first - 1):
            first -= 1  # `Google Research Football`: a maker's name starts the name
        if j < t.n and t.shapes[j] == NUM and not masked[j] and self._version_follows(j):
            last = j
            j += 1
        if j < t.n and t.lower[j] in NAME_NOUNS:
            last = j
        # a sentence-initial ordinary word before a name: `Using ZebraLogic`
        while (
            first < last
            and t.initial[first]
            and t.shapes[first] == TITLE
            and (self._ordinary_initial(first))
        ):
            first += 1
        return first, last

    def _parenthesised_word(self, j: int) -> bool:
        """`( Word )` at token `j`, with a name word right after it."""
        t = self.t
        return (
            j + 3 < t.n
            and t.words[j] == "("
            and t.shapes[j + 1] == TITLE
            and t.words[j + 2] == ")"
            and t.shapes[j + 3] in (STRONG, TITLE)
            and not self.masked[j]
        )

    def _joined(self, i: int) -> bool:
        """Token `i` is a capitalised word one space before the next token."""
        t = self.t
        return t.words[i][:1].isupper() and t.starts[i + 1] == t.ends[i] + 1

    def _known_dataset(self, first: int, last: int) -> bool:
        """Tokens `first`..`last` spell a known dataset or benchmark name."""
        return known_dataset(self.t.span(first, last))

    def _segments(self, first: int, last: int) -> list[tuple[int, int]]:
        """A run of names whose commas were lost (`KITTI nuScenes Waymo`, `CIFAR10 CIFAR100`)
        split into its names: known names, longest first, and single words; the run itself
        when it is one known name or when fewer than two of its parts are known names (or
        coined names sharing a stem, `ResNet18 ResNet50`)."""
        t = self.t
        if first == last or self._known_dataset(first, last):
            return [(first, last)]
        parts: list[tuple[int, int]] = []
        evidence = 0
        k = first
        while k <= last:
            end = next(
                (m for m in range(min(last, k + 3), k - 1, -1) if self._known_dataset(k, m)), None
            )
            if end is not None:
                evidence += 1
            elif t.shapes[k] == NUM:
                return [(first, last)]  # a version or a size belongs to the name before it
            elif k > first and t.shapes[k] == STRONG and _same_stem(t.words[k - 1], t.words[k]):
                evidence += 2  # both words are names
            parts.append((k, end if end is not None else k))
            k = parts[-1][1] + 1
        return parts if evidence >= 2 else [(first, last)]

    def _brand_bang(self, j: int) -> bool:
        """`Yahoo! R6A`: an exclamation mark inside a name."""
        t = self.t
        return (
            0 < j < t.n - 1
            and t.shapes[j - 1] == TITLE
            and t.shapes[j + 1] == STRONG
            and t.starts[j] == t.ends[j - 1]
        )

    def _version_follows(self, j: int) -> bool:
        """A number right after a name is its version or size, unless a unit or `%` follows."""
        t = self.t
        if j + 1 < t.n and (t.words[j + 1] in {"%", "×"} or t.lower[j + 1] in UNIT_WORDS):
            return False
        return t.starts[j] == t.ends[j - 1] + 1

    def _ordinary_initial(self, i: int) -> bool:
        """A sentence-initial capitalised word that is an ordinary word, not part of a name."""
        low = self.t.lower[i]
        if low in INITIAL_STOPWORDS or low.endswith(("ing", "ed", "ly")):
            return True
        return self.t.writes_in_lower_case(low)

    def _followed_by(self, last: int, nouns: frozenset[str]) -> bool:
        """The token after `last` is one of `nouns`."""
        return last + 1 < self.t.n and self.t.lower[last + 1] in nouns

    def _is_excluded_generic(self, name: str) -> bool:
        """A generic word, or an acronym the text defines as a field, task or class."""
        return generic_key(name) in GENERIC or self._defined_generic(name)

    def _is_excluded(self, name: str) -> bool:
        """Generic words and the paper's own names are never mentions."""
        return generic_key(name) in GENERIC or self._known(name)

    # -- positions -------------------------------------------------------------------------

    def _token_at(self, offset: int) -> int | None:
        """The token starting exactly at a character offset."""
        starts = self.t.starts
        index = bisect_left(starts, offset)
        return index if index < len(starts) and starts[index] == offset else None

    def _token_at_or_after(self, offset: int) -> int | None:
        """The first token starting at or after a character offset."""
        index = bisect_left(self.t.starts, offset)
        return index if index < self.t.n else None

    def _token_ending(self, offset: int) -> int | None:
        """The token ending exactly at a character offset."""
        index = bisect_left(self.t.starts, offset) - 1
        return index if index >= 0 and self.t.ends[index] == offset else None


def _emphasis_starts(text: str, spans: list[str]) -> dict[int, tuple[str, int]]:
    """Where emphasised spans occur in the cleaned text: start -> (span, end)."""
    found: dict[int, tuple[str, int]] = {}
    for span in dict.fromkeys(spans):
        if len(span) < 2:
            continue
        start = text.find(span)
        while start >= 0:
            end = start + len(span)
            if (start == 0 or not text[start - 1].isalnum()) and (
                end == len(text) or not text[end].isalnum()
            ):
                found.setdefault(start, (span, end))
            start = text.find(span, end)
    return found


def _masked_tokens(t: Text, definitions: tuple[Definition, ...]) -> list[bool]:
    """Tokens inside acronym definitions: the definition itself decides what they name."""
    masked = [False] * t.n
    for d in definitions:
        index = bisect_left(t.starts, d.start)
        while index < t.n and t.starts[index] < d.end:
            masked[index] = True
            index += 1
    return masked


def _content_words(long: str) -> list[str]:
    """A long form's words before its first function word (`Web` of `Web of Things`)."""
    words = long.replace("–", " ").split()
    for index, word in enumerate(words):
        if word.lower() in FUNCTION_WORDS and index:
            return words[:index]
    return words


def _same_stem(a: str, b: str) -> bool:
    """`CIFAR10` and `CIFAR100`, `ResNet18` and `ResNet50`: one stem, different numbers."""
    stem_a, stem_b = STEM_RE.match(a), STEM_RE.match(b)
    return bool(stem_a and stem_b and stem_a.group(1) == stem_b.group(1) and a != b)


STEM_RE = re.compile(r"^([A-Za-z]{3,})-?\d")


@lru_cache(maxsize=4096)
def _without_version(name: str) -> str:
    """`PostgreSQL 16` -> `PostgreSQL`, `LLaVA-1.5-13B` -> `LLaVA-1.5`: a version or size."""
    head, _, tail = name.rpartition(" ")
    if head and UNIT_RE.match(tail):
        return head
    head, _, tail = name.rpartition("-")
    return head if head and SIZE_RE.match(tail) else name

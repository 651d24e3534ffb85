"""Introduced artifacts: the names a paper gives to what it makes.

A cue (`we propose`, `this paper introduces`, `our proposed`, `X introduces`, `called`/`named`/
`namely`, `X, a novel ...`, `our X`, an emphasised strong name) followed by a name;
`Long Form (SF)` gives the short form as the name and the long form as an alias.
"""

from __future__ import annotations

from itertools import compress

from etl.transform.acronyms import Definition, singular_word
from etl.transform.methods.kinds import (
    KIND_OF_WORD,
    LIST_NOUNS,
    kind_after,
    kind_before,
    kind_from,
    kind_of_name,
)
from etl.transform.methods.mentioned import Mentioned
from etl.transform.methods.tokens import ADJ, LOWER, PUNCT, STRONG, TITLE, method_key, shape
from etl.transform.methods.vocabulary import (
    ADVERBS,
    ARTICLES,
    COMPONENT_VERBS,
    INTRO_VERBS,
    NAMING_WORDS,
    NEW_WORDS,
    OBJECT_STOPS,
    OF_NOUNS,
    RELATIVE_VERBS,
    SUBJECT_DETERMINERS,
    SUBJECT_NOUNS,
    TASK_HEADS,
)

PASSIVE_AUXILIARIES = frozenset({"is", "are", "was", "were"})
CLAUSE_ENDS = frozenset({".", "?", "!", ";", ":"})
# Words before a name in a list of parts that make it someone else's: `based on Tacotron 2`.
OTHERS_WORK = frozenset({"on", "from", "of", "with", "using", "than", "like", "by"})
COMPONENT_NOUNS = frozenset(
    "component components module modules design designs part parts block blocks branch "
    "branches stage stages".split()
)
PASSIVE_VERBS = frozenset(
    {"proposed", "introduced", "designed", "presented", "developed", "devised"}
)


class Introduced(Mentioned):
    """The rules for introduced names."""

    def _introduced(self) -> None:
        """Every cue of the text read in order, then a leading `Name:` and emphasised names."""
        t = self.t
        n = t.n
        lower = t.lower
        candidates: list[int] = []  # in order, each once
        for hit in compress(range(n), t.cues):
            if lower[hit] != ",":
                candidates.append(hit)
            # a strong name (or a capitalised word inside a sentence) before a comma, three
            # tokens or more from the end (once: an all-capital trigger word is strong too)
            elif (
                hit and hit + 2 < n and candidates[-1:] != [hit - 1] and self._may_be_named(hit - 1)
            ):
                candidates.append(hit - 1)
        for i in candidates:
            low = t.lower[i]
            if low in INTRO_VERBS and self._has_subject(i):
                self._object(i + 1, kind_before(self.t, i))
            elif low in PASSIVE_VERBS and i > 1 and t.lower[i - 1] in PASSIVE_AUXILIARIES:
                self._passive_subject(i - 1)
            elif (
                low == "put"
                and i + 1 < t.n
                and t.lower[i + 1] == "forward"
                and self._has_subject(i)
            ):
                self._object(i + 2, None)
            elif low in NAMING_WORDS and t.words[i] == low:  # not `Long Short Term Memory`
                self._named(i)
            elif low in COMPONENT_VERBS:
                if self._own_components(i):
                    self._components(i)
            elif low == "our" and i + 1 < t.n and t.shapes[i + 1] == STRONG:
                first, last = self._chunk(i + 1)
                if last >= first and not self._defined_generic(t.words[first]):
                    self._add_intro(first, last, None)
            elif t.shapes[i] in (STRONG, TITLE) and self._appositive_intro(i):
                start = self._run_start(i) if t.shapes[i] == TITLE else i
                first, last = self._chunk(start)
                if first == start:
                    self._add_intro(first, last, kind_after(t, last + 1) or kind_before(t, i))
        if t.n > 2 and t.shapes[0] == STRONG and t.words[1] == ":":
            self._add_intro(0, 0, None)  # a title `Name: what it does`
        for start, (span, _) in self.emphasis.items():
            at = self._token_at(start)
            if at is None:
                continue
            i = at
            if (
                t.shapes[i] == STRONG
                and t.ends[i] - t.starts[i] == len(span)
                and not self._defined_generic(t.words[i])
                and not self._defined_mention(t.words[i])
            ):
                self._add_intro(i, i, None)

    def _run_start(self, i: int) -> int:
        """Where the run of capitalised words ending at `i` starts (`Siamese Survival Prognosis
        Network, a novel ...`), past an ordinary sentence-initial word."""
        t = self.t
        j = i
        while j > 0 and t.shapes[j - 1] in (STRONG, TITLE) and not t.initial[j]:
            j -= 1
        if j < i and t.initial[j] and self._ordinary_initial(j):
            j += 1
        return j

    def _may_be_named(self, i: int) -> bool:
        """A strong name, or a capitalised word inside a sentence (`Our method, Kestrel, ...`)."""
        shape = self.t.shapes[i]
        return shape == STRONG or (shape == TITLE and not self.t.initial[i])

    def _appositive_intro(self, i: int) -> bool:
        """`X, a new benchmark`, `a new dataset, X,`, `X, a corpus that we generate`."""
        t = self.t
        if i + 1 >= t.n or t.words[i + 1] != ",":
            return False
        if i + 3 < t.n and t.lower[i + 2] in ARTICLES and t.lower[i + 3] in NEW_WORDS:
            return True
        if i >= 2 and t.words[i - 1] == "," and t.lower[i - 2] in KIND_OF_WORD:
            # `a new drift-heavy dataset, X,` or `our (new) benchmark, X,`
            window = t.lower[max(0, i - 9) : i - 2]
            if "our" in window[-4:] or any(
                w in NEW_WORDS and window[k - 1] in ARTICLES for k, w in enumerate(window) if k
            ):
                return True
        for j in range(i + 2, min(t.n, i + 16)):
            if t.shapes[j] in (STRONG, TITLE) or t.words[j] in {".", ";", "("}:
                return False
            if t.lower[j] in {"we", "our"} and j + 1 < t.n and t.lower[j + 1] in RELATIVE_VERBS:
                return True
        return False

    def _has_subject(self, verb: int) -> bool:
        """`we propose`, `this paper introduces`, `our proposed`, `ProtoLens introduces`."""
        t = self.t
        j = verb - 1
        while j >= 0 and t.lower[j] in ADVERBS:
            j -= 1
        if j < 0:
            return False
        word = t.lower[j]
        if word == "we":
            return True
        if word == "and":  # `we analyze X and propose Y`: the subject of the first verb
            for k in range(j - 1, max(-1, j - 17), -1):
                if t.words[k] in CLAUSE_ENDS:
                    break
                if t.lower[k] == "we":
                    return True
        if t.lower[verb] == "proposed" and word in {"our", "the"}:
            return True
        if word in SUBJECT_NOUNS and j > 0 and t.lower[j - 1] in SUBJECT_DETERMINERS:
            return True
        return t.shapes[j] == STRONG and self._known(t.words[j]) and t.lower[verb].endswith("s")

    def _object(self, i: int, kind: str | None) -> None:
        """The name an intro verb introduces, if its object phrase has one."""
        t = self.t
        skipped: list[str] = []
        limit = min(t.n, i + 14)
        while i < limit:
            word, low, kind_of = t.words[i], t.lower[i], t.shapes[i]
            if i in self.by_long_start_token:
                outer = self._outer_definition(self.by_long_start_token[i])
                self._add_definition(outer, kind or kind_from(skipped))
                return
            if kind_of == PUNCT:
                # `two algorithms, A and B`; `two new datasets: A and B`
                if word in {",", ":"} and skipped and skipped[-1] in LIST_NOUNS:
                    i += 1
                    continue
                if word in '“"' and self._quoted(i, kind or kind_from(skipped)):
                    return  # `we propose a "X"`: the quoted name
                if word in "“\"'‘":
                    i += 1
                    continue
                if word == "(" and self._paren_definition(i) is not None:
                    definition = self._paren_definition(i)
                    assert definition is not None
                    if definition.long_start >= t.starts[i - len(skipped)]:
                        self._add_definition(definition, kind or kind_from(skipped))
                elif word == "(":
                    self._paren_name(i, kind or kind_from(skipped))
                return
            if t.starts[i] in self.emphasis:
                span, end = self.emphasis[t.starts[i]]
                last = self._token_ending(end)
                if last is not None and (kind_of in (STRONG, TITLE) or skipped[-1:] == ["called"]):
                    self._add_intro(i, last, kind or kind_from(skipped), written=span)
                    self._list_continues(last + 1, kind or kind_from(skipped))
                    return
            if kind_of in (STRONG, TITLE):
                first, last = self._chunk(i)
                if last < first or self._names_follow(last + 1):
                    return  # `a U-Net architecture named PolarSeg`: the named one is new
                self._add_intro(first, last, kind or kind_from(skipped))
                self._list_continues(last + 1, kind or kind_from(skipped))
                return
            if low in OBJECT_STOPS or (
                low == "of" and (not skipped or skipped[-1] not in OF_NOUNS)
            ):
                self._paren_name_ahead(i, kind or kind_from(skipped))
                return
            if low in NAMING_WORDS:
                return  # `_named` reads what follows
            skipped.append(low)
            i += 1

    def _task_run(self, first: int, last: int) -> bool:
        """`Object Segmentation`, `Implicit Sentiment Analysis`: capitalised words naming a task
        or a field, not an artifact."""
        t = self.t
        if last <= first or any(t.shapes[k] != TITLE for k in range(first, last + 1)):
            return False
        return singular_word(t.lower[last].split("-")[-1]) in TASK_HEADS

    def _own_components(self, cue: int) -> bool:
        """`Our framework consists of three components`, `It contains two modules`: the parts
        of the paper's own artifact are listed after the cue."""
        t = self.t
        start = cue
        while start > 0 and not t.boundaries[start - 1]:
            start -= 1
        subject = t.lower[start:cue]
        if not ({"our", "we", "it"} & set(subject) or self.found):
            return False
        ahead = t.lower[cue + 1 : cue + 8]
        return any(w in COMPONENT_NOUNS for w in ahead) or any(
            w in COMPONENT_NOUNS for w in subject
        )

    def _components(self, cue: int) -> None:
        """The named parts listed from `cue` to the end of the sentence (and of the numbered
        sentences after it: `(2) ...`, `(3) ...`): acronym definitions and capitalised runs of
        two words or more are introduced modules."""
        t = self.t
        k = cue + 1
        while k < t.n:
            numbered_next = k + 3 < t.n and t.words[k + 1] == "(" and t.words[k + 2].isdigit()
            if t.words[k] in {".", "?", "!"} and not numbered_next:
                return
            if k in self.by_long_start_token:
                d = self.by_long_start_token[k]
                self._add_definition(d, "module")
                end = self._token_at_or_after(d.end)
                k = end if end is not None and end > k else k + 1
                continue
            if t.shapes[k] in (STRONG, TITLE) and not t.initial[k] and not self.masked[k]:
                first, last = self._chunk(k)
                words = sum(t.shapes[m] in (STRONG, TITLE) for m in range(first, last + 1))
                if words > 1 and (first == 0 or t.lower[first - 1] not in OTHERS_WORK):
                    self._add_intro(first, last, "module")
                k = max(last, k) + 1
                continue
            k += 1

    def _passive_subject(self, aux: int) -> None:
        """`an Audio-Bridged Temporal Interaction module is proposed`: the name of a kind noun
        right before `is proposed`."""
        t = self.t
        j = aux - 1
        if j < 1 or t.lower[j] not in KIND_OF_WORD:
            return
        j -= 1
        if t.shapes[j] not in (STRONG, TITLE) or self.masked[j]:
            return
        last = j
        j = self._run_start(last)
        if j == last and t.shapes[j] == TITLE and t.initial[j]:
            return  # `The network is designed ...`: no name
        self._add_intro(j, last, kind_before(t, aux + 1))

    def _paren_name(self, i: int, kind: str | None) -> bool:
        """`a novel end-to-end model (CROG)`: a coined name alone in parentheses right after the
        object, which is not an acronym the text defines, is the object's name."""
        t = self.t
        if (
            i + 2 < t.n
            and t.words[i] == "("
            and t.shapes[i + 1] == STRONG
            and t.words[i + 2] == ")"
            and self._paren_definition(i) is None
            and not self._is_excluded_generic(t.words[i + 1])
        ):
            self._add_intro(i + 1, i + 1, kind)
            return True
        return False

    def _paren_name_ahead(self, i: int, kind: str | None) -> None:
        """`a method with tensor factorization (TensorFMVC)`: the object's coined name may come
        after a short prepositional phrase, before the clause ends."""
        t = self.t
        for j in range(i, min(t.n, i + 10)):
            if t.words[j] == "(":
                self._paren_name(j, kind)
                return
            if t.shapes[j] in (PUNCT, STRONG) or t.lower[j] in {"which", "that", "and"}:
                return

    def _quoted(self, i: int, kind: str | None) -> bool:
        """`we propose a "cross-interaction decoupling architecture"`: a quoted name of at most
        six words."""
        t = self.t
        closing = "”" if t.words[i] == "“" else '"'
        for j in range(i + 1, min(t.n, i + 8)):
            if t.words[j] == closing:
                inside = range(i + 1, j)
                if j > i + 1 and all(t.shapes[k] != PUNCT or t.words[k] in "'’" for k in inside):
                    noun = KIND_OF_WORD.get(t.lower[j - 1])
                    self._add(t.span(i + 1, j - 1), "introduced", kind or noun or "method")
                    return True
                return False
        return False

    def _names_follow(self, i: int) -> bool:
        """A naming word (`named`, `called`) within the few lowercase words from token `i`."""
        t = self.t
        for k in range(i, min(t.n, i + 4)):
            if t.lower[k] in NAMING_WORDS:
                return True
            if t.shapes[k] != LOWER:
                return False
        return False

    def _outer_definition(self, d: Definition) -> Definition:
        """`Ground-to-Aerial (G2A) image synthesis (GP-G2A)`: the later short form that holds
        this one names the whole."""
        for other in self.definitions:
            near = d.end <= other.short_start <= d.end + 60
            if near and d.acronym in other.acronym and other.acronym != d.acronym:
                return other
        return d

    def _named(self, i: int) -> None:
        """`called X`, `named X`, `namely X`: X is the paper's name for what it describes."""
        t = self.t
        j = i + 1
        if t.lower[i] == "denoted" and j < t.n and t.lower[j] in {"as", "by"}:
            j += 1
        if j + 1 < t.n and t.lower[j] == "the" and t.words[j + 1] in '“"':
            j += 1  # `called the "X"`
        if j < t.n and t.words[j] in '“"' and self._quoted(j, kind_before(t, i)):
            return
        for k in range(j, min(t.n, j + 6)):  # `called label-noise robust GANs (rGANs)`
            if k in self.by_long_start_token:
                self._add_definition(self.by_long_start_token[k], kind_before(t, i))
                return
            if t.shapes[k] == PUNCT:
                break
        while j < t.n and t.words[j] in "“\"'‘":
            j += 1
        if j >= t.n:
            return
        kind = kind_before(self.t, i)
        if t.starts[j] in self.emphasis:
            span, end = self.emphasis[t.starts[j]]
            last = self._token_ending(end)
            if last is not None:
                self._add_intro(j, last, kind, written=span)
                return
        if t.shapes[j] in (STRONG, TITLE) and not t.initial[j]:
            first, last = self._chunk(j)
            first, last = self._segments(first, last)[0]
            if last >= first and not (t.lower[i] == "namely" and self._known_dataset(first, last)):
                self._add_intro(first, last, kind)  # `namely COCO`: existing data, not new
        elif t.shapes[j] in (LOWER, ADJ) and "-" in t.words[j] and t.lower[i] != "namely":
            self._add_intro(j, j, kind)  # `an operator that we dub g-softsort`

    def _list_continues(self, i: int, kind: str | None) -> None:
        """`PDI-CP and JDI-CP`: further names listed right after an introduced one."""
        t = self.t
        while i + 1 < t.n and t.words[i] in {",", "and"}:
            j = i + 1
            if t.lower[j] == "and":
                j += 1
            if j >= t.n or t.shapes[j] != STRONG:
                return
            first, last = self._chunk(j)
            if last < first:
                return
            self._add_intro(first, last, kind)
            i = last + 1

    def _add_intro(
        self, first: int, last: int, kind: str | None, written: str | None = None
    ) -> None:
        """An introduced name, with its long form when the text gives one right after it."""
        t = self.t
        name = written or t.span(first, last)
        if self._is_excluded(name) or self._task_run(first, last):
            return
        if not written and "/" in name and first == last:
            parts = name.split("/")  # `our DWV/IWV`: two names (`AB/BA` is one)
            if all(shape(p) == STRONG and len(p) > 2 for p in parts):
                for part in parts:
                    self._add(part, "introduced", kind or kind_of_name(part))
                self.keys.setdefault(method_key(name), method_key(parts[0]))  # not a mention
                return
        definition = self.by_long_start_token.get(first)
        if definition is not None and not written:
            self._add_definition(definition, kind)
            return
        definition = self.by_short_start.get(t.starts[first])
        if definition is not None and definition.acronym.rstrip("s") == name.rstrip("s"):
            self._add_definition(definition, kind)
            return
        if last + 3 < t.n and t.words[last + 1] == "(" and t.words[last + 3] == ")":
            inner = last + 2
            if t.shapes[inner] == STRONG:  # Rate-Constrained Training (BackSlash)
                after = kind or kind_after(self.t, last + 4) or kind_of_name(name)
                self._add(t.words[inner], "introduced", after, (name,))
                return
        self._add(name, "introduced", kind or kind_after(self.t, last + 1) or kind_of_name(name))

    def _add_definition(self, d: Definition, kind: str | None) -> None:
        """An introduced acronym: `Core Context Aware (CCA) Attention` becomes `CCA-Attention`."""
        t = self.t
        if self._names_a_task(d):
            return  # `we propose a method for zero-shot sketch-based image retrieval (ZS-SBIR)`
        end_token = self._token_at_or_after(d.end)
        name, alias = d.acronym, d.expansion
        if end_token is not None and t.shapes[end_token] == TITLE and not t.initial[end_token]:
            word = t.words[end_token]
            joined = f"{d.acronym}-{word}"
            name = joined if joined in t.text else f"{d.acronym} {word}"
            alias = f"{d.expansion} {word}"
            for part in (d.acronym, d.expansion):  # claimed: not a mention of their own
                self.keys.setdefault(method_key(part), method_key(name))
        after = kind_after(self.t, end_token) if end_token is not None else None
        self._add(name, "introduced", kind or after or kind_of_name(alias), (alias,))
        for inner in self.definitions:  # `... Ground-to-Aerial (G2A) image synthesis (GP-G2A)`
            if inner is not d and d.long_start <= inner.long_start and inner.end <= d.short_start:
                for part in (inner.acronym, inner.expansion):  # part of the name, not a mention
                    self.keys.setdefault(method_key(part), method_key(name))

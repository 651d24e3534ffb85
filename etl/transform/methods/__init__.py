"""Named artifacts (methods, models, benchmarks, datasets ...) a paper introduces or mentions.

The text is read once as tokens with shapes (`tokens`); then the paper's own names are found
(`introduced`), then the names of other work (`mentioned`), each given a kind (`kinds`). The
word lists are data files (`vocabulary`, `etl/data/methods/`).
"""

from __future__ import annotations

from dataclasses import replace

from etl.models import Acronym, MethodMention
from etl.transform.methods.introduced import Introduced
from etl.transform.methods.titles import title_names
from etl.transform.methods.tokens import generic_key, method_key
from etl.transform.methods.vocabulary import GENERIC

__all__ = ["find_methods", "method_key"]


def find_methods(
    text: str, emphasized: list[str], acronyms: tuple[Acronym, ...], title: str | None = None
) -> tuple[MethodMention, ...]:
    """Introduced and mentioned artifacts of a cleaned abstract and its title, one mention per
    artifact (the title is read as a title: see `titles`)."""
    if not text and not title:
        return ()
    finder = _Finder(text, emphasized, acronyms)
    finder.read()
    if title:
        finder.read_title(title)
    return finder.in_order()


# One line of classes (Reading, Mentioned, Introduced, _Finder), the order the methods were
# always looked up in: compiled classes (mypyc) take a single base.
class _Finder(Introduced):
    """One pass over a text: introduced names first, then mentioned ones."""

    def read(self) -> None:
        """The text's own artifacts first, then the ones it mentions."""
        self._introduced()
        self._defined_mentions()
        self._mentioned()

    def in_order(self) -> tuple[MethodMention, ...]:
        """The artifacts found so far, in reading order."""
        return tuple(sorted(self.found.values(), key=self._first_seen))

    def read_title(self, title: str) -> None:
        """The title's own artifact is introduced (even if the abstract only mentions it); the
        coined names it mentions are added unless the abstract named them."""
        own, mentions = title_names(title)
        if own is not None and generic_key(own.name) not in GENERIC:
            key = self.keys.get(method_key(own.name))
            if key is None:
                self._add(own.name, "introduced", own.kind)
            elif self.found[key].role == "mentioned":
                self.found[key] = replace(self.found[key], role="introduced")
        for name, kind in mentions:
            if not self._is_excluded(name):
                self._add(name, "mentioned", kind)

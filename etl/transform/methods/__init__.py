"""Named artifacts (methods, models, benchmarks, datasets ...) a paper introduces or mentions.

The text is read once as tokens with shapes (`tokens`); then the paper's own names are found
(`introduced`), then the names of other work (`mentioned`), each given a kind (`kinds`). The
word lists are data files (`vocabulary`, `etl/data/methods/`).
"""

from __future__ import annotations

from etl.models import Acronym, MethodMention
from etl.transform.methods.introduced import Introduced
from etl.transform.methods.mentioned import Mentioned
from etl.transform.methods.tokens import method_key

__all__ = ["find_methods", "method_key"]


def find_methods(
    text: str, emphasized: list[str], acronyms: tuple[Acronym, ...]
) -> tuple[MethodMention, ...]:
    """Introduced and mentioned artifacts of a cleaned text, one mention per artifact."""
    if not text:
        return ()
    return _Finder(text, emphasized, acronyms).run()


class _Finder(Introduced, Mentioned):
    """One pass over a text: introduced names first, then mentioned ones."""

    def run(self) -> tuple[MethodMention, ...]:
        """Every artifact found, in reading order."""
        self._introduced()
        self._defined_mentions()
        self._mentioned()
        return tuple(sorted(self.found.values(), key=self._first_seen))

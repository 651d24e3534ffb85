"""The works a paper cites, as keys: a reference's id made the identity key the cited paper
would have (etl.transform.ids), so an edge finds that paper whichever source it came from.

A reference that gives no usable id (Crossref's `unstructured` text, an id that is not one of
its kind) is kept by its text: `ref:` and a hash of the text with its case and punctuation
folded, with the text itself. A paper's references to itself (a key of its own) are dropped,
and each cited work is kept once.
"""

from __future__ import annotations

from collections.abc import Iterable
from hashlib import sha256

from etl.models import ReferenceValues
from etl.transform.ids import content_key, source_keys

MAX_REFERENCE_CHARS = 2_000  # of a reference's text kept; the hash is of the whole text
TEXT_KIND = "text"


def reference_values(
    references: Iterable[tuple[str, str]], own_keys: Iterable[str]
) -> tuple[ReferenceValues, ...]:
    """(key, text or None) for each work cited, once, in the order given; none of the
    paper's own keys."""
    own = set(own_keys)
    found: dict[str, ReferenceValues] = {}
    for kind, value in references:
        value = value.strip()
        if not value:
            continue
        keys = source_keys([(kind, value)]) if kind != TEXT_KIND else []
        text: str | None = None
        if keys:
            key = keys[0]
        else:
            written = value if kind == TEXT_KIND else f"{kind}: {value}"
            hashed = text_key(written)
            if hashed is None:
                continue
            key, text = hashed, written[:MAX_REFERENCE_CHARS]
        if key not in own:
            found.setdefault(key, (key, text))
    return tuple(found.values())


def text_key(text: str) -> str | None:
    """`ref:` and a hash of a reference's words (case, accents and punctuation folded), or
    None for text without a word."""
    words = content_key(text)
    if not words:
        return None
    return "ref:" + sha256(words.encode("utf-8")).hexdigest()[:24]

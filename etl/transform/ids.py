"""Deterministic ids and content hashes, so reruns and duplicates never create new rows."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any


def content_key(text: str) -> str:
    """Text reduced to what identifies it: case, accents, markup residue and spacing ignored."""
    folded = unicodedata.normalize("NFKD", text).casefold()
    return re.sub(r"[\W_]+", "", folded)


def paper_id(abstract: str, title: str | None) -> str:
    """A stable paper id from the cleaned abstract, or from the title when there is none."""
    basis = content_key(abstract) or "title:" + content_key(title or "")
    return "p" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:16]


def content_hash(value: Any) -> str:
    """A short hash of frozen dataclasses and plain data (their repr is deterministic)."""
    return hashlib.sha256(repr(value).encode("utf-8")).hexdigest()[:24]

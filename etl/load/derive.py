"""A paper from all its sightings: the one rule that decides what a paper shows.

Each sighting (a file and a position in it) keeps the values its record gave (`PaperRows`,
stored as JSON in `paper_sources.record`). A paper is derived from the sightings it has now,
whatever order they arrived in, as OpenAlex derives a work from its locations:

- the **preferred sighting** is the one that ranks first by: its standing (a main-track
  acceptance, or a list that says nothing of status, before a workshop paper, before a
  preprint, before a rejection or withdrawal), then one that names a venue, then the richer
  record (more of title, substantive abstract, authors, links, keywords, listed terms and
  external ids; then the longer abstract), then the later year; remaining ties are broken by
  the record's content hash and then its venue and status as values, never by load order;
- **venue, year and status** are the preferred sighting's;
- **title**, **authors** (with their homepages), **keywords** come from the first sighting, in
  that order, that has them; an author's homepage missing there is taken from another sighting
  that lists the same name in the same place;
- the **abstract**, and everything the transform found in the text (methods, acronyms, topics,
  tasks), come from the first sighting with a substantive abstract (else the first with any);
- **links**, **identity keys** and **listed terms** are the union of all sightings' (a link's
  `found_in` from the first sighting that gives it); **extra fields** are merged, the earlier
  sighting's value winning where two give one field;
- the paper's **id** is the id its strongest sighting would give a paper of its own (an external
  id before an abstract before a title; then the smaller id), so a paper is named the same
  whichever record came first; it changes only when the sighting it came from leaves or
  changes what it is named by (a DOI arrives, the abstract it was named by is revised), never
  with a title.

Pure: plain data in, plain data out. The writer calls `derive` whenever a paper's sightings
change or one leaves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from hashlib import sha256
from typing import Any

from etl.models import LinkValues, PaperRows

# Kinds of external id in the order a paper's id is taken from them (etl.transform.ids).
EXTERNAL_ORDER = ("doi:", "arxiv:", "openreview:", "openalex:", "s2:", "s2corpus:", "dblp:", "pwc:")
ABSTRACT_BASIS, TEXT_BASIS, TITLE_BASIS = len(EXTERNAL_ORDER), len(EXTERNAL_ORDER) + 1, 99
PREPRINT_VENUES = frozenset({"arxiv", "corr"})
REFUSED_MARKS = ("reject", "withdr", "desk")


def standing(venue: str | None, status: str | None) -> int:
    """0 accepted (or not said), 1 workshop, 2 preprint, 3 rejected or withdrawn."""
    said = (status or "").lower()
    if any(mark in said for mark in REFUSED_MARKS):
        return 3
    if "preprint" in said or (venue or "").lower() in PREPRINT_VENUES:
        return 2
    if "workshop" in said or "workshop" in (venue or "").lower():
        return 1
    return 0


def _has_abstract(record: PaperRows) -> bool:
    """Whether a record's abstract is substantive (the transform gave it an `abs:` key)."""
    return any(key.startswith("abs:") for key in record.keys)


def richness(record: PaperRows) -> tuple[int, int]:
    """How much a record says: the fields it fills, then the length of its abstract."""
    filled = (
        record.title is not None,
        _has_abstract(record),
        bool(record.authors),
        bool(record.links),
        record.keywords is not None,
        bool(record.listed),
        any(key.startswith(EXTERNAL_ORDER) for key in record.keys),
    )
    return sum(filled), len(record.abstract_raw)


def preference(record: PaperRows) -> tuple[Any, ...]:
    """Sort key of a sighting: the preferred one sorts first (see the module's rule)."""
    filled, length = richness(record)
    return (
        standing(record.venue, record.status),
        record.venue is None,
        -filled,
        -length,
        -(record.year or 0),
        record.content_hash,
        record.venue or "",
        record.status or "",
    )


def id_basis(record: PaperRows) -> int:
    """How strong the id a record gives is: its first external id's kind, else its abstract,
    else its short text, else its title (as etl.transform.ids derives it)."""
    for key in record.keys:
        for rank, prefix in enumerate(EXTERNAL_ORDER):
            if key.startswith(prefix):
                return rank
    if _has_abstract(record):
        return ABSTRACT_BASIS
    if any(key.startswith("text:") for key in record.keys):
        return TEXT_BASIS
    return TITLE_BASIS


def paper_id(sightings: Sequence[PaperRows]) -> str:
    """The id of the paper these sightings are: the id its strongest sighting gives."""
    return min((id_basis(r), r.id) for r in sightings)[1]


def paper_hash(sightings: Sequence[PaperRows]) -> str:
    """What the paper's derived values depend on, as one hash (a lone record's own hash)."""
    hashes = sorted({r.content_hash for r in sightings})
    if len(hashes) == 1:
        return hashes[0]
    return sha256("|".join(hashes).encode("ascii")).hexdigest()[:24]


def derive(sightings: Sequence[PaperRows]) -> PaperRows:
    """The paper its sightings make (a lone sighting makes itself, its id unchanged)."""
    if not sightings:
        raise ValueError("a paper needs at least one sighting")
    if len(sightings) == 1:
        return sightings[0]
    ranked = sorted(sightings, key=preference)
    best = ranked[0]
    titled = next((r for r in ranked if r.title is not None), best)
    text = next(
        (r for r in ranked if _has_abstract(r)),
        next((r for r in ranked if r.abstract), best),
    )
    with_authors = next((r for r in ranked if r.authors), best)
    return best._replace(
        id=paper_id(ranked),
        title=titled.title,
        title_raw=titled.title_raw,
        abstract=text.abstract,
        abstract_raw=text.abstract_raw,
        keywords=next((r.keywords for r in ranked if r.keywords is not None), None),
        extra=_merged_extra(ranked),
        method_names=text.method_names,
        content_hash=paper_hash(ranked),
        authors=with_authors.authors,
        author_homepages=_homepages(with_authors, ranked),
        links=_links([text, *ranked]),
        methods=text.methods,
        acronyms=text.acronyms,
        topics=text.topics,
        tasks=text.tasks,
        keys=tuple(dict.fromkeys(key for r in ranked for key in r.keys)),
        listed=_listed(ranked),
    )


def _links(ranked: Sequence[PaperRows]) -> tuple[LinkValues, ...]:
    """Every link any sighting gives, once, as the first sighting giving it has it."""
    found: dict[str, LinkValues] = {}
    for record in ranked:
        for link in record.links:
            found.setdefault(link[0], link)
    return tuple(found.values())


def _listed(ranked: Sequence[PaperRows]) -> tuple[tuple[str, str, str | None], ...]:
    """Every term any sighting lists, once, as the first sighting listing it says."""
    found: dict[tuple[str, str], tuple[str, str, str | None]] = {}
    for record in ranked:
        for term in record.listed:
            found.setdefault(term[:2], term)
    return tuple(found.values())


def _homepages(chosen: PaperRows, ranked: Sequence[PaperRows]) -> tuple[str | None, ...]:
    """The chosen authors' homepages, a missing one taken from another sighting that lists
    the same name in the same place."""
    pages: list[str | None] = list(chosen.author_homepages) or [None] * len(chosen.authors)
    for slot, name in enumerate(chosen.authors):
        if pages[slot] is not None:
            continue
        for other in ranked:
            if (
                slot < len(other.author_homepages)
                and slot < len(other.authors)
                and other.authors[slot] == name
                and other.author_homepages[slot] is not None
            ):
                pages[slot] = other.author_homepages[slot]
                break
    return tuple(pages) if any(page is not None for page in pages) else ()


def _merged_extra(ranked: Sequence[PaperRows]) -> str | None:
    """The sightings' extra fields in one object, the preferred sighting's value winning."""
    given = [r.extra for r in ranked if r.extra]
    if len(given) <= 1:
        return given[0] if given else None
    merged: dict[str, Any] = {}
    for extra in reversed(given):
        value = json.loads(extra)
        if isinstance(value, dict):
            merged.update(value)
    return json.dumps(merged, ensure_ascii=False)

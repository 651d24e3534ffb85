"""Which stored paper a record describes: identity keys resolved against `paper_keys`.

The transform gives each record its keys (etl.transform.ids.identity_keys): external ids
(`doi:`, `arxiv:`, `openreview:`, `openalex:`, `s2:`, `s2corpus:`, `dblp:`, `pwc:`), `abs:`
for a substantive abstract, `title:`, `bib:` for a title with its first author (family name
and initial) and year, and `text:` for a record with neither. A record is the stored paper
that

1. shares an external id with it; else, unless both have an external id of one kind (two
   OpenReview ids, two DOIs) and they differ,
2. shares its substantive abstract, whatever their titles (a corrected title, or a list of
   bare abstracts, names the same paper); else
3. shares its title, where their first authors and years do not differ (when both give them,
   the record is the paper only if they share a `bib:` key: the first author's family name
   with a compatible initial, years at most one apart) and their abstracts do not differ
   (when both have a substantive one, the record is the paper only if they share a `bib:`
   key and the abstracts share at least ABSTRACT_OVERLAP of their words: a preprint and its
   proceedings version, not two papers that happen to share a title). Two records with
   different titles and no shared id or abstract are two papers.

Within one file, an external id shared by records with different titles is not taken as
theirs (a proceedings-wide DOI on every record): such records stay apart.

A record known only by a short text (no title, no id, no substantive abstract) is the paper
known only by that same text: a rerun finds it again, and it joins nothing else.

A record that matches no paper is a new paper, with the id the transform derived (from the
first external id, else the abstract, else the title); should another paper already hold that
id, `-2`, `-3` ... is appended. Keys are looked up in set-based queries per batch; records of
the same batch are matched to each other the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import partial

from sqlalchemy import Connection, select

from etl.load import schema as s
from etl.load.known import StoredRows
from etl.models import PaperRows

EXTERNAL_PREFIXES = (
    "doi:",
    "arxiv:",
    "openreview:",
    "openalex:",
    "s2:",
    "s2corpus:",
    "dblp:",
    "pwc:",
)


def matches(
    record_keys: Sequence[str],
    paper_keys: set[str],
    similar: Callable[[], bool] = lambda: True,
) -> bool:
    """Whether a record with these keys is the paper holding `paper_keys` (rules above);
    `similar` tells whether their two substantive abstracts share enough words, asked only
    when the rules need it."""
    if any(k in paper_keys and k.startswith(EXTERNAL_PREFIXES) for k in record_keys):
        return True
    for prefix in EXTERNAL_PREFIXES:  # two OpenReview ids (or DOIs ...): two papers
        mine = [k for k in record_keys if k.startswith(prefix)]
        if mine and any(k.startswith(prefix) for k in paper_keys):
            return False
    if any(k.startswith("text:") for k in (*record_keys, *paper_keys)):
        # a short text without title or id: only the same text, known by nothing else, is it
        return set(record_keys) == paper_keys
    abstracts = _shared("abs:", record_keys, paper_keys)
    if abstracts:
        return True
    if not _shared("title:", record_keys, paper_keys):
        return False  # no title in common (or one of them has none)
    bib = _shared("bib:", record_keys, paper_keys)
    if bib is False:
        return False  # different first authors or years
    if abstracts is None:
        return True
    return bool(bib) and similar()  # two different abstracts: a revision, or two papers


# Two substantive abstracts of one title and first author are one paper's versions (a preprint
# and its proceedings version) when this share of the shorter one's words are in the other;
# the measure and its threshold: docs/identity-and-reruns.md, benchmarks/HISTORY.md.
ABSTRACT_OVERLAP = 0.3
WORD_RE = re.compile(r"[^\W\d_]{4,}")


def abstract_words(abstract: str) -> set[str]:
    """The words of an abstract that say something (four letters or more), in lower case."""
    return set(WORD_RE.findall(abstract.lower()))


def similar_abstracts(one: str, other: str) -> bool:
    """Whether two abstracts share ABSTRACT_OVERLAP of the shorter one's words."""
    mine, theirs = abstract_words(one), abstract_words(other)
    if not mine or not theirs:
        return False
    return len(mine & theirs) / min(len(mine), len(theirs)) >= ABSTRACT_OVERLAP


def _shared(prefix: str, record_keys: Sequence[str], paper_keys: set[str]) -> bool | None:
    """Whether the record and the paper share a key of a kind; None unless both have one."""
    mine = [k for k in record_keys if k.startswith(prefix)]
    if not mine:
        return None
    theirs = {k for k in paper_keys if k.startswith(prefix)}
    if not theirs:
        return None
    return not theirs.isdisjoint(mine)


class IdentityResolver:
    """Gives each record of a batch the id of the paper it describes (stored or new)."""

    def __init__(
        self, connection: Connection, stored: StoredRows, source_id: int = 0, run_id: int = 0
    ):
        self.connection = connection
        self.stored = stored
        self.source_id, self.run_id = source_id, run_id
        self.here: set[str] = set()  # papers this source's records were resolved to so far
        # The keys this batch's records gave the papers they were resolved to; those of
        # earlier batches are read back from their sightings when needed (rarely).
        self.given: dict[str, set[str]] = {}
        self.abstracts: dict[str, str] = {}  # of the papers this batch's records are

    def resolve(self, papers: Sequence[PaperRows]) -> tuple[list[str], dict[str, str]]:
        """The id of the paper each record is (stored, or new), and the papers found to be
        one (absorbed id -> surviving id): a record that is two papers joins them, unless
        they hold two ids of one kind or two different titles, so the papers a set of
        records makes does not depend on the order they came in.

        A record with an abstract can join a paper of its title only if that paper has no
        abstract (else it shares the abstract, and is found by it, or its `bib:` key, or the
        abstracts differ), so for its title only such papers are fetched: a title many papers
        share (a generic one, or a generated corpus's) does not make every record of it walk
        them all.
        """
        keys = {k for p in papers for k in p.keys}
        bare = _bare_title_keys(papers)
        owners, keysets = self.stored.papers_by_keys(
            self.connection, keys, {p.id for p in papers}, bare
        )
        resolved: list[str] = []
        merged: dict[str, str] = {}
        self.given = {}
        created: set[str] = set()  # papers this batch's records make
        self.abstracts = {}
        for paper in papers:
            found = self._matches(paper, owners, keysets)
            if found:  # a stored paper survives a merge rather than one of this batch
                found.sort(key=lambda pid: pid in created)
                survivor = found[0]
                for other in found[1:]:
                    if not _conflict(keysets[survivor], keysets[other]):
                        self._absorb(other, survivor, owners, keysets)
                        merged[other] = survivor
            else:
                survivor = paper.id
                suffix = 1
                # the computed ids' papers were fetched; a suffixed id is looked up
                while survivor in keysets or (
                    suffix > 1 and self.stored.has_paper(self.connection, survivor)
                ):
                    suffix += 1
                    survivor = f"{paper.id}-{suffix}"
                created.add(survivor)
            self.given[survivor] = self._given_here(survivor) | set(paper.keys)
            self.here.add(survivor)
            self.abstracts.setdefault(survivor, paper.abstract)
            keysets[survivor].update(paper.keys)
            for key in paper.keys:
                if survivor not in owners[key]:
                    owners[key].append(survivor)
            resolved.append(survivor)
        final = {old: _surviving(old, merged) for old in merged}
        return [final.get(found, found) for found in resolved], final

    def _absorb(
        self,
        other: str,
        survivor: str,
        owners: dict[str, list[str]],
        keysets: dict[str, set[str]],
    ) -> None:
        """Make one paper of two in what the resolver knows."""
        for key in keysets[other]:
            holders = owners.get(key, [])
            if other in holders:
                holders.remove(other)
            if survivor not in holders:
                holders.append(survivor)
        keysets[survivor] |= keysets.pop(other)
        if other in self.here:
            self.here.add(survivor)
        self.given.setdefault(survivor, set()).update(self.given.pop(other, set()))
        self.abstracts.pop(other, None)

    def _matches(
        self, paper: PaperRows, owners: dict[str, list[str]], keysets: dict[str, set[str]]
    ) -> list[str]:
        """Every paper (external ids first, then abstract, then title) this record is.

        Papers sharing the record's title are tried first for an external id. One file does
        not list a paper twice under two titles: a key (an id, an abstract) that another
        record of the file gave a paper under another title is not theirs alone (a
        proceedings DOI on every record), and does not merge them.
        """
        keys = paper.keys
        titles = {k for k in keys if k.startswith("title:")}
        found: list[str] = []
        for key in keys:
            candidates = owners.get(key, [])
            if key.startswith(EXTERNAL_PREFIXES):
                candidates = sorted(candidates, key=lambda pid: not titles & keysets[pid])
            for paper_id in candidates:
                if paper_id in found:
                    continue
                theirs = {k for k in keysets[paper_id] if k.startswith("title:")}
                if titles and theirs and not titles & theirs and key in self._given_here(paper_id):
                    continue
                similar = partial(self._similar, paper.abstract, paper_id)
                if matches(keys, keysets[paper_id], similar):
                    found.append(paper_id)
        return found

    def _given_here(self, paper_id: str) -> set[str]:
        """The keys this source's records (of this run) gave a paper."""
        if paper_id not in self.here:
            return set()
        given = self.given.get(paper_id)
        if given is None:
            ps, p = s.paper_sources.c, s.papers.c
            query = (
                select(ps.record)
                .join_from(s.paper_sources, s.papers, p.pk == ps.paper_pk)
                .where(p.id == paper_id, ps.source_id == self.source_id, ps.run_id == self.run_id)
            )
            given = {
                key
                for (record,) in self.connection.execute(query)
                for key in json.loads(record)["keys"]
            }
            self.given[paper_id] = given
        return given

    def _similar(self, abstract: str, paper_id: str) -> bool:
        """Whether an abstract shares enough words with a paper's (stored or of this batch)."""
        other = self.abstracts.get(paper_id)
        if other is None:
            query = select(s.papers.c.abstract).where(s.papers.c.id == paper_id)
            other = self.connection.execute(query).scalar() or ""
        return similar_abstracts(abstract, other)


def _conflict(one: set[str], other: set[str]) -> bool:
    """Whether two papers' keys keep them apart though one record is both: different ids of
    one kind, or different titles (one file listing one abstract under two titles)."""
    for prefix in (*EXTERNAL_PREFIXES, "title:"):
        mine = {k for k in one if k.startswith(prefix)}
        theirs = {k for k in other if k.startswith(prefix)}
        if mine and theirs and mine.isdisjoint(theirs):
            return True
    return False


def _surviving(paper_id: str, merged: dict[str, str]) -> str:
    """The paper a merged one ended in (merges may chain)."""
    while paper_id in merged:
        paper_id = merged[paper_id]
    return paper_id


def _bare_title_keys(papers: Sequence[PaperRows]) -> set[str]:
    """Title keys that only records with an abstract key hold in this batch."""
    keys = FileKeys()
    keys.add(papers)
    return keys.bare


class FileKeys:
    """The identity keys of a whole file's records, gathered batch by batch before any is
    written (PostgreSQL locks them all at once: etl.load.locks), with the title keys that
    only records with an abstract key hold (`bare`: see IdentityResolver.resolve)."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self._titles_with_abstract: set[str] = set()
        self._titles_without: set[str] = set()

    def add(self, papers: Sequence[PaperRows]) -> None:
        """Gather the keys of a batch's records."""
        for paper in papers:
            self.keys.update(paper.keys)
            titles = [k for k in paper.keys if k.startswith("title:")]
            if any(k.startswith("abs:") for k in paper.keys):
                self._titles_with_abstract.update(titles)
            else:
                self._titles_without.update(titles)

    @property
    def bare(self) -> set[str]:
        """Title keys that only records with an abstract key hold."""
        return self._titles_with_abstract - self._titles_without

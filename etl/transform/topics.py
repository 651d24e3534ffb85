"""Topics from a taxonomy: a hierarchy of areas and topics, each with the terms that signal it."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from etl.errors import TaxonomyError
from etl.models import Topic, TopicHit

MAX_TOPICS = 3


@dataclass(frozen=True)
class Taxonomy:
    """Topics with compiled term patterns; built once per run and shared by every transform."""

    topics: tuple[Topic, ...]
    patterns: tuple[tuple[str, str, re.Pattern[str]], ...]  # (slug, term, pattern)


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Read a taxonomy TOML file (the packaged default when no path is given) and check it."""
    if path is None:
        data = resources.files("etl.data").joinpath("taxonomy.toml").read_text("utf-8")
        where = "default taxonomy"
    else:
        where = str(path)
        try:
            data = Path(path).read_text("utf-8")
        except OSError as exc:
            raise TaxonomyError(f"{where}: cannot read: {exc.strerror or exc}") from exc
    try:
        document = tomllib.loads(data)
    except tomllib.TOMLDecodeError as exc:
        raise TaxonomyError(f"{where}: not valid TOML: {exc}") from exc
    return build_taxonomy(document.get("topic"), where)


def build_taxonomy(entries: object, where: str = "taxonomy") -> Taxonomy:
    """Validate `[[topic]]` entries and compile their terms."""
    if not isinstance(entries, list) or not entries:
        raise TaxonomyError(f"{where}: no [[topic]] entries")
    topics: list[Topic] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not entry.get("slug") or not entry.get("name"):
            raise TaxonomyError(f"{where}: topic #{number} needs a slug and a name")
        terms = entry.get("terms", [])
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise TaxonomyError(f"{where}: topic {entry['slug']!r}: terms must be a list of strings")
        topics.append(Topic(str(entry["slug"]), str(entry["name"]), entry.get("parent"), tuple(terms)))
    slugs = [t.slug for t in topics]
    if len(set(slugs)) != len(slugs):
        duplicate = next(s for s in slugs if slugs.count(s) > 1)
        raise TaxonomyError(f"{where}: topic {duplicate!r} is defined twice")
    for topic in topics:
        if topic.parent is not None and topic.parent not in slugs:
            raise TaxonomyError(f"{where}: topic {topic.slug!r} has unknown parent {topic.parent!r}")
    patterns = tuple(
        (topic.slug, term, term_pattern(term)) for topic in topics for term in topic.terms
    )
    return Taxonomy(tuple(topics), patterns)


def term_pattern(term: str) -> re.Pattern[str]:
    """Whole-word match; plurals accepted; hyphens and spaces interchangeable; acronyms exact."""
    words = [re.escape(w) for w in re.split(r"[\s-]+", term.strip()) if w]
    body = r"[\s-]+".join(words)
    acronym = term.upper() == term and any(c.isalpha() for c in term)
    flags = 0 if acronym else re.IGNORECASE
    return re.compile(rf"(?<![\w-]){body}(?:s|es)?(?![\w])", flags)


def assign_topics(text: str, taxonomy: Taxonomy) -> tuple[TopicHit, ...]:
    """The best topics of a text, each scored by the distinct terms that matched."""
    evidence: dict[str, list[str]] = {}
    for slug, term, pattern in taxonomy.patterns:
        if pattern.search(text):
            evidence.setdefault(slug, []).append(term)
    scored = [
        (slug, sum(1.0 + 0.5 * (len(term.split()) - 1) for term in terms), terms)
        for slug, terms in evidence.items()
    ]
    leaves = {t.slug for t in taxonomy.topics if t.parent is not None}
    ranked = sorted(scored, key=lambda s: (-(s[0] in leaves), -s[1], s[0]))
    best = [s for s in ranked if s[0] in leaves][:MAX_TOPICS] or ranked[:1]
    return tuple(TopicHit(slug, round(score, 2), tuple(terms)) for slug, score, terms in best)

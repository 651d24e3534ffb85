"""OpenReview notes, API v2 (every field under `content.X.value`) or v1 (plain values):
submissions are papers; replies (reviews, comments, decisions: notes of another note's forum)
are not, and are rejected as such.

Venue and year come from `content.venue` (`ICLR 2024 poster`, `Submitted to ICLR 2024`),
else from `venueid` / `domain` (`ICLR.cc/2024/Conference`); the status from a decision among
the note's replies when they are included (`details`), else from `venueid`
(`.../Rejected_Submission`), else from the rest of the venue string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from etl.extract.records import (
    as_dict,
    as_list,
    build,
    is_author,
    text,
    unmapped,
    venue_of,
    year_of,
    year_of_epoch_ms,
)
from etl.models import RawRecord, Reject, SourceFile

SITE = "https://openreview.net"
CONTENT_MAPPED = {
    "title",
    "abstract",
    "authors",
    "authorids",
    "keywords",
    "venue",
    "venueid",
    "pdf",
    "code",
    "supplementary_material",
}
# What a venue id's last part says of a submission.
VENUEID_STATUS = {
    "rejected_submission": "Reject",
    "withdrawn_submission": "Withdrawn",
    "desk_rejected_submission": "Desk Reject",
}
VENUE_SUFFIX_RE = re.compile(r"(?i)\.(cc|org|net|com|io|edu|ai)$")


def map_record(
    value: dict[str, Any], source: SourceFile, position: int, raw: Callable[[], str]
) -> RawRecord | Reject:
    """A RawRecord from one submission note; a Reject for a reply."""
    note_id = text(value.get("id"))
    forum = text(value.get("forum")) or note_id
    if note_id and forum and note_id != forum:
        reason = "an OpenReview reply (review, comment or decision), not a submission"
        return Reject(source.path, position, reason, raw())
    content = {k: _value(v) for k, v in as_dict(value.get("content")).items()}
    authors = [a for a in (text(x) for x in as_list(content.get("authors"))) if a]
    author_ids = [text(x) or "" for x in as_list(content.get("authorids"))]
    kept = [(a, i) for a, i in zip(authors, author_ids + [""] * len(authors), strict=False)]
    kept = [(a, i) for a, i in kept if is_author(a)]
    profiles = tuple(_profile(i) for _, i in kept)
    venue, year, status = _venue(content, value)
    extra = unmapped(value, ("id", "forum", "content"))
    extra.update(unmapped(content, CONTENT_MAPPED))
    if any(i and not _profile(i) for i in author_ids):
        extra["authorids"] = author_ids  # e-mail addresses: kept as given, not as links
    return build(
        source,
        position,
        raw,
        title=text(content.get("title")),
        abstract=text(content.get("abstract")),
        authors=[a for a, _ in kept],
        author_links=(("openreview profile", profiles),) if any(profiles) else (),
        keywords=[k for k in (text(x) for x in _listed(content.get("keywords"))) if k],
        links=[
            ("openreview", f"{SITE}/forum?id={forum}" if forum else ""),
            ("pdf", _absolute(content.get("pdf"))),
            ("code", _absolute(content.get("code"))),
            ("supplementary", _absolute(content.get("supplementary_material"))),
        ],
        status=status,
        venue=venue,
        year=year or year_of_epoch_ms(value.get("pdate")) or year_of_epoch_ms(value.get("cdate")),
        ids=[("openreview", forum or "")],
        extra=extra,
    )


def _value(field: Any) -> Any:
    """A content field's value: v2 wraps each in `{"value": ...}`."""
    if isinstance(field, dict) and "value" in field:
        return field["value"]
    return field


def _listed(value: Any) -> list[Any]:
    """A list field, or a comma-joined string of one (v1 keywords)."""
    if isinstance(value, str):
        return value.split(",")
    return as_list(value)


def _profile(author_id: str) -> str:
    """An author's profile page from an OpenReview id (`~First_Last1`); "" for e-mails."""
    return f"{SITE}/profile?id={author_id}" if author_id.startswith("~") else ""


def _absolute(value: Any) -> str:
    """A link as OpenReview writes it (`/pdf/abc.pdf` on its own site) made absolute."""
    link = text(value) or ""
    return SITE + link if link.startswith("/") else link


def _venue(
    content: dict[str, Any], note: dict[str, Any]
) -> tuple[str | None, int | None, str | None]:
    """Venue, year and status of a submission (see the module's docstring)."""
    venue_id = text(content.get("venueid")) or text(note.get("domain")) or ""
    venue, year, rest = venue_of(text(content.get("venue")))
    if venue is None or year is None:
        from_id, id_year, _ = venue_of(_venue_from_id(venue_id or _invitation(note)))
        venue, year = venue or from_id, year or id_year
    status = _decision(note) or VENUEID_STATUS.get(venue_id.rsplit("/", 1)[-1].lower()) or rest
    return venue, year, status


def _venue_from_id(venue_id: str) -> str:
    """`ICLR.cc/2024/Conference` -> `ICLR 2024`: the group's first part and its year."""
    parts = [p for p in venue_id.split("/") if p and not p.startswith("-")]
    if not parts:
        return ""
    name = VENUE_SUFFIX_RE.sub("", parts[0])
    years = [p for p in parts[1:] if year_of(p)]
    return f"{name} {years[0]}" if years else name


def _invitation(note: dict[str, Any]) -> str:
    """The submission's invitation (v1 `invitation`, v2 the first of `invitations`)."""
    return text(note.get("invitation")) or next(
        (t for t in (text(i) for i in as_list(note.get("invitations"))) if t), ""
    )


def _decision(note: dict[str, Any]) -> str | None:
    """The decision among the note's replies (`details.replies` or `directReplies`)."""
    details = as_dict(note.get("details"))
    for reply in [*as_list(details.get("replies")), *as_list(details.get("directReplies"))]:
        reply = as_dict(reply)
        invitations = [text(reply.get("invitation")) or ""]
        invitations += [text(i) or "" for i in as_list(reply.get("invitations"))]
        if any(i.endswith("Decision") for i in invitations):
            decision = text(_value(as_dict(reply.get("content")).get("decision")))
            if decision:
                return decision
    return None

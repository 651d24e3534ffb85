"""Links: every URL in text or record fields, normalised and classified.

Kinds: `code` (repositories on GitHub, GitLab, Bitbucket, Codeberg and Hugging Face, including
Hugging Face datasets and Spaces), `project` (`*.github.io` and other project pages), `paper`
(arXiv, OpenReview, DOI, proceedings), `data` (Zenodo, Kaggle ...) and `other`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from etl.models import Link
from etl.transform.clean import (
    HREF_RE,
    URL_ANCHORS,
    URL_CMD_RE,
    URL_RE,
    anchored_finditer,
    sub_matches,
    trim_url,
)
from etl.transform.ids import arxiv_key, doi_key, ordered_external

# Schemeless repository links such as `GitHub.com/owner/repo` in running text, and those
# behind a mistyped scheme (`htps://github.com/...`, `https//github.com/...`): the well-formed
# URLs are found, and blanked, before this pattern runs.
SCHEMELESS_RE = re.compile(
    r"(?i)(?<![\w.@-])(?:github\.com|gitlab\.com|bitbucket\.org|huggingface\.co)/"
    r"[^\s<>\"'`{}|\\^\[\]\u3000-\u303f\uff00-\uffef]+"
)
CODE_HOSTS = {
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "huggingface.co",
    "codeberg.org",
    "raw.githubusercontent.com",
}
SCHEMELESS_HINTS = ("github.com/", "gitlab.com/", "bitbucket.org/", "huggingface.co/")
GITLAB_ROUTES = {
    "-",
    "tree",
    "blob",
    "raw",
    "issues",
    "merge_requests",
    "wikis",
    "commits",
    "releases",
    "tags",
    "pipelines",
}
HF_PAGES = {
    "papers",
    "models",
    "datasets",
    "spaces",
    "learn",
    "tasks",
    "organizations",
    "join",
    "chat",
    "posts",
    "new",
}
GIT_SUFFIX_RE = re.compile(r"(?i)\.git$")
# Link targets inside markup a field may hold: Markdown links and images, HTML anchors.
MARKDOWN_TARGET_RE = re.compile(
    r"\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
# `https: //github.com/...`: a space a PDF's line break left after the scheme.
SPLIT_SCHEME_RE = re.compile(r"(?i)\b(https?):\s+//(?=\w)")
HTML_HREF_RE = re.compile(r"""(?i)<a\s[^>]*?href\s*=\s*["']([^"']+)["']""")
# `git@github.com:owner/repo(.git)` and `github.com:owner/repo`: a repository, written the
# way git writes a remote.
GIT_REMOTE_RE = re.compile(
    r"(?i)(?<![\w./-])(?:git@)?(github\.com|gitlab\.com|bitbucket\.org|codeberg\.org|huggingface\.co)"
    r":/?([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)"
)
# Where a field holding several links is cut: `;`, `|`, a new line, `, `, or a space before
# a new URL. What is left between cuts is one link, spaces and all.
FIELD_SPLIT_RE = re.compile(r"\s*[;|\n]\s*|,\s+|\s+(?=(?:https?://|www\.|git@))", re.I)
URL_START_RE = re.compile(r"(?i)^(?:https?://|www\.|[a-z0-9-]+(?:\.[a-z0-9-]+)+/)")
# Words that may continue a URL after a space (`.../Deconfounded VG`): no brackets, quotes or
# colons, which start a remark instead (`.../repo (official)`).
URL_CONTINUATION_RE = re.compile(r"[\w./~+-]+")
REPO_PART_RE = re.compile(r"[A-Za-z0-9._-]+")
HOST_LABEL_RE = re.compile(r"[^\W_](?:[\w-]*[^\W_])?")
PAPER_HOSTS = {
    "arxiv.org",
    "openreview.net",
    "doi.org",
    "dx.doi.org",
    "aclanthology.org",
    "proceedings.mlr.press",
    "proceedings.neurips.cc",
    "papers.nips.cc",
    "openaccess.thecvf.com",
    "ieeexplore.ieee.org",
    "dl.acm.org",
    "link.springer.com",
    "semanticscholar.org",
    "www.semanticscholar.org",
    "biorxiv.org",
    "www.biorxiv.org",
    "medrxiv.org",
    "ojs.aaai.org",
    "ijcai.org",
    "www.ijcai.org",
}
DATA_HOSTS = {
    "zenodo.org",
    "figshare.com",
    "kaggle.com",
    "www.kaggle.com",
    "data.mendeley.com",
    "dataverse.harvard.edu",
    "physionet.org",
}
# First path segments on code hosts that are site pages, not owners of repositories.
NOT_OWNERS = {
    "features",
    "about",
    "orgs",
    "topics",
    "marketplace",
    "sponsors",
    "pricing",
    "login",
    "explore",
    "settings",
    "search",
    "collections",
    "apps",
    "site",
    "docs",
    "blog",
}
PAPER_FIELDS = {
    "pdf",
    "pdfurl",
    "pdflink",
    "arxiv",
    "arxivurl",
    "arxivlink",
    "openreview",
    "openreviewurl",
    "forum",
    "paperurl",
    "doi",
    "doiurl",
    "site",
    "oa",
    "urlpaper",
}
# Fields whose paper links identify the paper (the abstract may cite other papers' links).
IDENTITY_FIELDS = PAPER_FIELDS | {"id", "key", "url", "link", "openreviewid", "forumid", "arxivid"}
PROJECT_FIELDS = {"project", "projectpage", "projecturl", "homepage", "website", "webpage", "page"}
DATA_FIELDS = {"data", "dataset", "dataseturl"}
ARXIV_ID_RE = re.compile(
    r"^(?:arxiv:)?(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[A-Z]{2})?/\d{7})$", re.I
)
DOI_RE = re.compile(r"^(?:doi:)?(10\.\d{4,9}/\S+)$", re.I)
# Identifiers as a record gives them for itself (see `external_ids`).
ARXIV_NEW_ID_RE = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5})(?:v\d+)?$", re.I)
ARXIV_URL_RE = re.compile(r"^https://arxiv\.org/abs/(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})")
OPENREVIEW_URL_RE = re.compile(
    r"^https://openreview\.net/(?:forum|pdf)\?(?:.*&)?id=([A-Za-z0-9_-]+)"
)
DOI_URL_RE = re.compile(r"^https://(?:dx\.)?doi\.org/(10\.\d{4,9}/\S+)", re.I)
# Compiled once: `re.sub(pattern, ...)` looks its pattern up in re's cache at every call.
GLUED_COMMAND_RE = re.compile(r"\\[A-Za-z]+$")
SCHEME_RE = re.compile(r"(?i)^[a-z][a-z0-9+.-]*://")
SLASHES_RE = re.compile(r"/{2,}")
ARXIV_PDF_RE = re.compile(r"^/pdf/(.+?)(?:\.pdf)?$")
OPENREVIEW_ID_RE = re.compile(r"[A-Za-z0-9_-]{6,}")
NOT_ALNUM_RE = re.compile(r"[^a-z0-9]")


def find_urls(raw: str) -> list[str]:
    """URLs as written in a text, in order: `\\href`/`\\url` targets, bare and schemeless links."""
    found: list[tuple[int, str]] = []
    text = raw
    if ": //" in text:
        text = SPLIT_SCHEME_RE.sub(r"\1://", text)
    if "\\" in text:
        for pattern in (HREF_RE, URL_CMD_RE):
            if pattern.search(text):
                found.extend((m.start(), m.group(1).strip()) for m in pattern.finditer(text))
                text = pattern.sub(_blank, text)
    if "://" in text or "www." in text or "WWW." in text:
        matches = anchored_finditer(URL_RE, text, URL_ANCHORS)
        if matches:
            found.extend((m.start(), trim_url(m.group(0))) for m in matches)
            text = sub_matches(text, matches, _blank)
    if ".co" in text or ".org" in text:  # git remotes: `git@github.com:o/r`, `github.com:o/r`
        remotes = list(GIT_REMOTE_RE.finditer(text))
        found.extend((m.start(), f"https://{m.group(1)}/{m.group(2)}") for m in remotes)
        text = sub_matches(text, remotes, _blank)
    lowered = text.lower() if "/" in text else ""  # each hint ends with a slash
    if lowered and any(host in lowered for host in SCHEMELESS_HINTS):
        matches = anchored_finditer(SCHEMELESS_RE, text, ("/",))  # every hint has a slash
        found.extend((m.start(), trim_url(m.group(0))) for m in matches)
    found.sort(key=lambda item: item[0])
    return [url for _, url in found if url]


def _blank(match: re.Match[str]) -> str:
    """Spaces in place of a match, so later patterns cannot see it but positions stay."""
    return " " * len(match.group(0))


def links_from_text(raw: str, found_in: str) -> list[Link]:
    """Normalised links of every URL in a text."""
    return [link for url in find_urls(raw) if (link := make_link(url, found_in)) is not None]


def make_link(written: str, found_in: str, field: str | None = None) -> Link | None:
    """A normalised, classified link, or None if the text is not a usable URL."""
    url = expand_identifier(written.strip(), field)
    url = trim_url(url.replace("\\_", "_").replace("\\%", "%").replace("\\#", "#"))
    if not url or any(c.isspace() for c in url):
        return None
    url = GLUED_COMMAND_RE.sub("", url)  # a LaTeX command glued to the end
    if not SCHEME_RE.match(url):
        url = "https://" + url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # `[::1` or a port that is not a number
        return None
    host = (parts.hostname or "").lower().rstrip(".")
    if not _valid_host(host) or parts.scheme.lower() not in {"http", "https"}:
        return None
    if host.startswith("www.") and host[4:] in CODE_HOSTS | {"arxiv.org", "openreview.net"}:
        host = host[4:]
    path = SLASHES_RE.sub("/", parts.path)
    if host in CODE_HOSTS:
        return _code_link(host, path, parts.query, found_in)
    if host == "arxiv.org":
        path = ARXIV_PDF_RE.sub(r"/abs/\1", path)
    clean = _tidy(urlunsplit(("https", _netloc(host, port), path, parts.query, "")))
    return Link(url=clean, host=host, kind=classify(host, path, field), found_in=found_in)


def _netloc(host: str, port: int | None) -> str:
    return f"{host}:{port}" if port and port not in (80, 443) else host


def _code_link(host: str, path: str, query: str, found_in: str) -> Link:
    """A link on a code host: a repository (owner/name split out), or a page of the site."""
    segments = [s for s in path.split("/") if s]
    if host == "huggingface.co":
        return _hugging_face_link(segments, found_in)
    if host == "raw.githubusercontent.com":
        host = "github.com"
    if host == "gitlab.com":
        # gitlab.com/group/sub/repo/-/tree/main: groups nest, routes start at `-`
        cut = next((k for k, seg in enumerate(segments) if seg in GITLAB_ROUTES), len(segments))
        segments = segments[:cut]
        depth = len(segments)
    else:
        depth = 2
    if len(segments) >= 2 and segments[0].lower() not in NOT_OWNERS:
        if "%20" in segments[0] or "%20" in segments[depth - 1]:
            return _spaced_code_link(host, segments[:depth], found_in)
        owner, name = segments[0], _repo_name(segments[depth - 1])
        repo_path = "/".join([*segments[: depth - 1], name])
        if name and REPO_PART_RE.fullmatch(owner):
            return Link(f"https://{host}/{repo_path}", host, "code", found_in, owner, name)
    url = f"https://{host}/" + "/".join(segments)
    return Link(_tidy(url), host, "other", found_in)


def _spaced_code_link(host: str, segments: list[str], found_in: str) -> Link:
    """A repository path written with spaces (`github.com/o/Deconfounded VG`): kept whole,
    spaces percent-encoded in the URL, as written in owner and name (never cut at a space)."""
    words = [GIT_SUFFIX_RE.sub("", unquote(seg)).strip() for seg in segments]
    owner, name = words[0], words[-1]
    url = f"https://{host}/" + "/".join(quote(word) for word in words)
    return Link(url, host, "code", found_in, owner, name)


def _hugging_face_link(segments: list[str], found_in: str) -> Link:
    """Model, dataset and Space repositories are code; paper pages are papers."""
    host = "huggingface.co"
    prefix: list[str] = []
    if segments[:1] in (["datasets"], ["spaces"]):
        prefix, segments = segments[:1], segments[1:]
    elif segments[:1] == ["papers"] and len(segments) >= 2:
        return Link(f"https://{host}/papers/{segments[1]}", host, "paper", found_in)
    if len(segments) >= 2 and (prefix or segments[0].lower() not in NOT_OWNERS | HF_PAGES):
        owner, name = segments[0], _repo_name(segments[1])
        if name and REPO_PART_RE.fullmatch(owner):
            url = f"https://{host}/" + "/".join([*prefix, owner, name])
            return Link(url, host, "code", found_in, owner, name)
    url = f"https://{host}/" + "/".join([*prefix, *segments])
    return Link(_tidy(url), host, "other", found_in)


def _valid_host(host: str) -> bool:
    """A host name (`github.com`, `x.github.io`) or an IPv4 address, nothing else."""
    labels = host.split(".")
    if len(labels) < 2 or not all(HOST_LABEL_RE.fullmatch(label) for label in labels):
        return False
    return labels[-1].isalpha() or all(label.isdigit() for label in labels)


def _tidy(url: str) -> str:
    """No trailing slash or sentence punctuation, however they alternate (`/x.io/https://`)."""
    while True:
        tidy = trim_url(url.rstrip("/"))
        if tidy == url:
            return url
        url = tidy


def _repo_name(segment: str) -> str:
    """A repository name as code hosts allow it: letters, digits, `.`, `_`, `-`, no `.git`."""
    match = REPO_PART_RE.match(segment)
    return GIT_SUFFIX_RE.sub("", match.group(0).rstrip(".")).rstrip(".") if match else ""


def expand_identifier(value: str, field: str | None) -> str:
    """Turn a bare arXiv id, DOI or OpenReview id from a record field into a URL."""
    if field is None or "://" in value or ("/" in value and not DOI_RE.match(value)):
        return value
    if field.startswith("arxiv") and (m := ARXIV_ID_RE.match(value)):
        return f"https://arxiv.org/abs/{m.group(1)}"
    if (m := DOI_RE.match(value)) and ("doi" in field or field in PAPER_FIELDS):
        return f"https://doi.org/{m.group(1)}"
    if field.startswith(("openreview", "forum")) and OPENREVIEW_ID_RE.fullmatch(value):
        return f"https://openreview.net/forum?id={value}"
    return value


def classify(host: str, path: str, field: str | None) -> str:
    """The kind of a non-code-host link: project page, paper, data or other."""
    if host.endswith(".github.io") or host.endswith(".gitlab.io") or host == "sites.google.com":
        return "project"
    if host in PAPER_HOSTS or host.endswith(".arxiv.org") or path.lower().endswith(".pdf"):
        return "paper"
    if host in DATA_HOSTS:
        return "data"
    if field in PAPER_FIELDS:
        return "paper"
    if field in PROJECT_FIELDS:
        return "project"
    if field in DATA_FIELDS:
        return "data"
    return "other"


def field_urls(value: str) -> list[str]:
    """The URLs written in a record field: Markdown and HTML link targets, git remotes, and
    each `;`-, `|`- or line-separated piece, a piece with spaces inside one URL kept whole."""
    value = value.strip()
    if "](" in value or "href" in value.lower():
        targets = [m.group(1) for m in MARKDOWN_TARGET_RE.finditer(value)]
        targets += [m.group(1) for m in HTML_HREF_RE.finditer(value)]
        return [t for t in targets if not t.startswith(("/", "#", "mailto:"))]
    urls: list[str] = []
    for piece in FIELD_SPLIT_RE.split(value):
        piece = piece.strip()
        if not piece:
            continue
        first, *rest = piece.split()
        if not rest:
            urls.extend(find_urls(piece) if GIT_REMOTE_RE.search(piece) else [piece])
        elif URL_START_RE.match(first) and all(URL_CONTINUATION_RE.fullmatch(w) for w in rest):
            urls.append("%20".join(piece.split()))
        else:
            urls.extend(find_urls(piece))
    return urls


def collect_links(
    raw_texts: dict[str, str],
    fields: tuple[tuple[str, str], ...],
    silent: list[str] | None = None,
    other_fields: tuple[tuple[str, str], ...] = (),
) -> tuple[Link, ...]:
    """All links of a record, one per URL, preferring the record field where one was found.

    `fields` are link fields; `other_fields` (`bibtex`, ...) give code repositories only. The
    names of link fields that gave no link at all are added to `silent`.
    """
    by_url: dict[str, Link] = {}
    for name, value in fields:
        key = _field_key(name)
        found = False
        for url in field_urls(value):
            link = make_link(url, name, field=key)
            if link is not None:
                by_url.setdefault(link.url, link)
                found = True
        if not found and silent is not None:
            silent.append(name)
    for where, text in raw_texts.items():
        for link in links_from_text(text, where):
            by_url.setdefault(link.url, link)
    for name, value in other_fields:
        for link in links_from_text(value, name):
            if link.kind == "code":
                by_url.setdefault(link.url, link)
    return tuple(by_url.values())


def external_ids(links: tuple[Link, ...], record_id: str | None) -> tuple[str, ...]:
    """The DOI, arXiv and OpenReview ids a record gives for itself (in its id or paper-link
    fields, never in its text), as identity keys: `doi:`, `arxiv:`, `openreview:`."""
    found: list[str] = []
    if record_id:
        if m := DOI_RE.match(record_id.strip()):
            found.append(doi_key(m.group(1)) or "")
        elif m := ARXIV_NEW_ID_RE.match(record_id.strip()):
            found.append("arxiv:" + m.group(1))
    for link in links:
        if link.kind != "paper" or _field_key(link.found_in) not in IDENTITY_FIELDS:
            continue
        if key := _identity_key(link.url):
            found.append(key)
    return ordered_external(k for k in found if k)


def _identity_key(url: str) -> str | None:
    """The identity key a normalised paper URL carries, if any."""
    if m := ARXIV_URL_RE.match(url):
        return arxiv_key(m.group(1))
    if m := OPENREVIEW_URL_RE.match(url):
        return "openreview:" + m.group(1)
    if m := DOI_URL_RE.match(url):
        return doi_key(m.group(1))
    return None


@lru_cache(maxsize=256)  # a source's records repeat its few field names
def _field_key(name: str) -> str:
    """Field names compared without case or punctuation."""
    return NOT_ALNUM_RE.sub("", name.lower())

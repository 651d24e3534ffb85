"""Links: every URL in text or record fields, normalised and classified (code, project, paper, data)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from etl.models import Link
from etl.transform.clean import HREF_RE, URL_CMD_RE, URL_RE, trim_url

# Schemeless repository links such as `GitHub.com/owner/repo` in running text.
SCHEMELESS_RE = re.compile(
    r"(?i)(?<![\w./@-])(?:github\.com|gitlab\.com|bitbucket\.org|huggingface\.co)/[^\s<>\"'`{}|\\^\[\]]+"
)
CODE_HOSTS = {"github.com", "gitlab.com", "bitbucket.org", "huggingface.co", "codeberg.org"}
PAPER_HOSTS = {
    "arxiv.org", "openreview.net", "doi.org", "dx.doi.org", "aclanthology.org",
    "proceedings.mlr.press", "proceedings.neurips.cc", "papers.nips.cc",
    "openaccess.thecvf.com", "ieeexplore.ieee.org", "dl.acm.org", "link.springer.com",
    "semanticscholar.org", "www.semanticscholar.org", "biorxiv.org", "www.biorxiv.org",
    "medrxiv.org", "ojs.aaai.org", "ijcai.org", "www.ijcai.org",
}
DATA_HOSTS = {"zenodo.org", "figshare.com", "kaggle.com", "www.kaggle.com", "data.mendeley.com",
              "dataverse.harvard.edu", "physionet.org"}
# First path segments on code hosts that are site pages, not owners of repositories.
NOT_OWNERS = {
    "features", "about", "orgs", "topics", "marketplace", "sponsors", "pricing", "login",
    "explore", "settings", "search", "collections", "apps", "site", "docs", "blog",
}
PAPER_FIELDS = {"pdf", "pdfurl", "pdflink", "arxiv", "arxivurl", "arxivlink", "openreview",
                "openreviewurl", "forum", "paperurl", "doi", "doiurl"}
PROJECT_FIELDS = {"project", "projectpage", "projecturl", "homepage", "website", "webpage", "page"}
DATA_FIELDS = {"data", "dataset", "dataseturl"}
ARXIV_ID_RE = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[A-Z]{2})?/\d{7})$",
                         re.I)
DOI_RE = re.compile(r"^(?:doi:)?(10\.\d{4,9}/\S+)$", re.I)


def find_urls(raw: str) -> list[str]:
    """URLs as written in a text: `\\href` and `\\url` targets, bare and schemeless links."""
    found: list[str] = []
    rest = HREF_RE.sub(lambda m: found.append(m.group(1).strip()) or " ", raw)  # type: ignore[func-returns-value]
    rest = URL_CMD_RE.sub(lambda m: found.append(m.group(1).strip()) or " ", rest)  # type: ignore[func-returns-value]
    found.extend(trim_url(m.group(0)) for m in URL_RE.finditer(rest))
    rest = URL_RE.sub(" ", rest)
    found.extend(trim_url(m.group(0)) for m in SCHEMELESS_RE.finditer(rest))
    return [u for u in found if u]


def links_from_text(raw: str, found_in: str) -> list[Link]:
    """Normalised links of every URL in a text."""
    return [link for url in find_urls(raw) if (link := make_link(url, found_in)) is not None]


def make_link(written: str, found_in: str, field: str | None = None) -> Link | None:
    """A normalised, classified link, or None if the text is not a usable URL."""
    url = expand_identifier(written.strip(), field)
    url = trim_url(url.replace("\\_", "_").replace("\\%", "%").replace("\\#", "#"))
    url = re.sub(r"\\[A-Za-z]+$", "", url)  # a LaTeX command glued to the end
    if not re.match(r"(?i)^[a-z][a-z0-9+.-]*://", url):
        url = "https://" + url
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    host = (parts.hostname or "").lower().rstrip(".")
    if not host or "." not in host or parts.scheme.lower() not in {"http", "https"}:
        return None
    if host.startswith("www.") and host[4:] in CODE_HOSTS | {"arxiv.org", "openreview.net"}:
        host = host[4:]
    path = re.sub(r"/{2,}", "/", parts.path)
    if host in CODE_HOSTS:
        return _code_link(host, path, parts.query, found_in)
    if host == "arxiv.org":
        path = re.sub(r"^/pdf/(.+?)(?:\.pdf)?$", r"/abs/\1", path)
    clean = urlunsplit(("https", _netloc(host, parts.port), path.rstrip("/") or "", parts.query, ""))
    return Link(url=clean, host=host, kind=classify(host, path, field), found_in=found_in)


def _netloc(host: str, port: int | None) -> str:
    return f"{host}:{port}" if port and port not in (80, 443) else host


def _code_link(host: str, path: str, query: str, found_in: str) -> Link:
    """A link on a code host: a repository (owner/name split out), a dataset, or a page."""
    segments = [s for s in path.split("/") if s]
    if host == "huggingface.co" and segments[:1] in (["datasets"], ["spaces"]):
        kind = "data" if segments[0] == "datasets" else "project"
        owner_repo = segments[1:3]
        url = "https://huggingface.co/" + "/".join(segments[:3])
        if len(owner_repo) == 2:
            return Link(url, host, kind, found_in, owner_repo[0], owner_repo[1])
        return Link(url, host, "other", found_in)
    if host == "gitlab.com" and "-" in segments:
        segments = segments[: segments.index("-")]  # gitlab.com/group/sub/repo/-/tree/main
    depth = len(segments) if host == "gitlab.com" else 2
    if len(segments) >= 2 and segments[0].lower() not in NOT_OWNERS:
        owner, name = segments[0], re.sub(r"(?i)\.git$", "", segments[depth - 1])
        repo_path = "/".join([*segments[: depth - 1], name])
        if name:
            return Link(f"https://{host}/{repo_path}", host, "code", found_in, owner, name)
    url = f"https://{host}/" + "/".join(segments)
    return Link(url.rstrip("/"), host, "other", found_in)


def expand_identifier(value: str, field: str | None) -> str:
    """Turn a bare arXiv id, DOI or OpenReview id from a record field into a URL."""
    if field is None or "://" in value or "/" in value and not DOI_RE.match(value):
        return value
    if field.startswith("arxiv") and (m := ARXIV_ID_RE.match(value)):
        return f"https://arxiv.org/abs/{m.group(1)}"
    if (m := DOI_RE.match(value)) and ("doi" in field or field in PAPER_FIELDS):
        return f"https://doi.org/{m.group(1)}"
    if field.startswith(("openreview", "forum")) and re.fullmatch(r"[A-Za-z0-9_-]{6,}", value):
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


def collect_links(raw_texts: dict[str, str], fields: tuple[tuple[str, str], ...]) -> tuple[Link, ...]:
    """All links of a record, one per URL, preferring the record field where one was found."""
    by_url: dict[str, Link] = {}
    for name, value in fields:
        link = make_link(value, name, field=_field_key(name))
        if link is not None:
            by_url.setdefault(link.url, link)
    for where, text in raw_texts.items():
        for link in links_from_text(text, where):
            by_url.setdefault(link.url, link)
    return tuple(by_url.values())


def _field_key(name: str) -> str:
    """Field names compared without case or punctuation."""
    return re.sub(r"[^a-z0-9]", "", name.lower())

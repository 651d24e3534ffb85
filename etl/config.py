"""Where the database is: `--db`, else ETL_DATABASE_URL, else sqlite:///papers.db here.

SQLAlchemy is imported only when a URL is parsed: the CLI imports this module, and the
transform's worker processes import the CLI (see etl/cli.py), so it stays light.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

from etl.errors import DatabaseError, not_utf8, shown_bytes

DEFAULT_DATABASE_URL = "sqlite:///papers.db"
ENV_VAR = "ETL_DATABASE_URL"
BUSY_TIMEOUT_VAR = "ETL_BUSY_TIMEOUT"
DEFAULT_BUSY_TIMEOUT_SECONDS = 30.0
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
URL_RE = re.compile(r"^(?P<scheme>[A-Za-z][\w+.-]*)://(?P<rest>.*)$", re.S)
PASSWORD_PARAM_RE = re.compile(r"(?i)\b(password|passwd|pwd|sslpassword)=[^&\s]*")

# Every password seen in a URL (or given for a role) this process: `scrub` removes them from
# any message, whatever library wrote it.
_SECRETS: set[str] = set()


def busy_timeout_seconds() -> float:
    """How long SQLite waits for another connection's lock: ETL_BUSY_TIMEOUT, else 30 s."""
    given = os.environ.get(BUSY_TIMEOUT_VAR, "")
    try:
        return max(0.0, float(given)) if given else DEFAULT_BUSY_TIMEOUT_SECONDS
    except ValueError as exc:
        raise DatabaseError(f"{BUSY_TIMEOUT_VAR} must be a number of seconds") from exc


def resolve_database_url(given: str | None = None) -> str:
    """The database URL to use, with `postgresql://` mapped to the psycopg 3 driver.

    A bare path must name a database file (`.db`, `.sqlite`, `.sqlite3`, or an existing file):
    anything else is refused rather than created.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    url = given or os.environ.get(ENV_VAR) or DEFAULT_DATABASE_URL
    if not_utf8(url):
        raise DatabaseError(f"the database URL is not valid UTF-8: {mask_url(shown_bytes(url))}")
    if not URL_RE.match(url) and not url.startswith("sqlite:"):
        url = _path_url(url)
    url = _quote_userinfo(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseError(f"not a database URL: {mask_url(url)}") from exc
    if parsed.password:
        remember_secret(str(parsed.password))
    for key, value in parsed.query.items():
        if PASSWORD_PARAM_RE.match(f"{key}="):
            for item in (value,) if isinstance(value, str) else value:
                remember_secret(item)
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in {"sqlite", "postgresql"}:
        raise DatabaseError(
            f"unsupported database {parsed.get_backend_name()!r}: use sqlite:///FILE.db "
            "or postgresql+psycopg://USER@HOST/DB"
        )
    return parsed.render_as_string(hide_password=False)


SQLITE_HEADER = b"SQLite format 3\x00"


def _path_url(path: str) -> str:
    """A SQLite URL for a bare path that names a database file; an error for anything else."""
    if path.lower().endswith(SQLITE_SUFFIXES) or _holds_sqlite(Path(path)):
        return f"sqlite:///{path}"
    if Path(path).is_file():
        # an empty or other file (`--db list.json`, arguments swapped) would become a database
        raise DatabaseError(
            f"{path[:200]!r} is a file but not a SQLite database: give a path ending in .db, "
            ".sqlite or .sqlite3, or sqlite:///FILE to use it anyway"
        )
    raise DatabaseError(
        f"{path[:200]!r} is neither a database URL nor a database file: give "
        "sqlite:///FILE.db, a path ending in .db, .sqlite or .sqlite3, "
        "or postgresql+psycopg://USER@HOST/DB"
    )


def _holds_sqlite(path: Path) -> bool:
    """A file that starts as every SQLite database does."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _quote_userinfo(url: str) -> str:
    """Percent-encode a password holding `@`, `/`, `?` or `#`, so no part of it is read as host.

    The user information ends at the last `@` before the database path; URLs written by
    hand often leave the password's own `@` unescaped.
    """
    match = URL_RE.match(url)
    if not match or "@" not in match["rest"]:
        return url
    rest = match["rest"]
    at = rest.rfind("@")
    userinfo, host = rest[:at], rest[at + 1 :]
    if ":" not in userinfo or "/" in userinfo.split(":", 1)[0]:
        return url
    user, password = userinfo.split(":", 1)
    if not re.search(r"[@/?#]", password):
        return url
    remember_secret(password)
    return f"{match['scheme']}://{user}:{quote(password, safe='')}@{host}"


def remember_secret(secret: str) -> None:
    """Keep a password so that `scrub` can remove it (and its %-encoded form) from messages."""
    if secret and secret != "***":
        _SECRETS.update({secret, quote(secret, safe="")})


def scrub(message: str) -> str:
    """A message with every known password, and any `password=` value, replaced by ***."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        message = message.replace(secret, "***")
    return mask_url_text(message)


def mask_url_text(text: str) -> str:
    """Text with the password of any URL in it, and `password=` values, replaced by ***."""
    text = PASSWORD_PARAM_RE.sub(lambda m: f"{m.group(1)}=***", text)
    return re.sub(
        r"\b([A-Za-z][\w+.-]*://[^:/@\s]*):[^\s]*@(?=[^@\s]*$|[^@\s]*\s)",
        r"\1:***@",
        text,
    )


def mask_url(url: str) -> str:
    """The URL with any password (in the user information or the query) replaced by ***."""
    return mask_url_text(_quote_userinfo(url) if "@" in url else url)


def stored_url(url: str) -> str:
    """The URL with no credentials at all (no password, no query options), for the runs table."""
    from sqlalchemy.engine import URL, make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return "<unparseable database URL>"
    bare = URL.create(
        parsed.drivername, parsed.username, None, parsed.host, parsed.port, parsed.database
    )
    return bare.render_as_string(hide_password=True)

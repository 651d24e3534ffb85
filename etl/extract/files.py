"""Finding input files and fingerprinting them: paths, formats, checksums, encodings."""

from __future__ import annotations

import codecs
import errno
import glob
import hashlib
import io
import os
import re
import stat
import zipfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

from etl.errors import SourceError
from etl.extract.compressed import (
    ARCHIVE_SUFFIXES,
    STREAM_SUFFIXES,
    WIDE_ENCODINGS,
    container_stat,
    is_compressed,
    member_location,
    open_bytes,
    open_validated_text,
    split_member,
    zip_members,
)

FORMATS_BY_SUFFIX = {
    ".txt": "text",
    ".text": "text",
    ".md": "text",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "csv",
    ".bib": "bibtex",
    ".bibtex": "bibtex",
    ".xml": "dblp",
}
# Files a folder search loads: the formats above, compressed or not, and zip archives.
LOADED_SUFFIXES = frozenset(FORMATS_BY_SUFFIX) | frozenset(STREAM_SUFFIXES) | ARCHIVE_SUFFIXES
CHUNK = 1 << 20
# An XML declaration's encoding (DBLP's dump declares ISO-8859-1).
XML_ENCODING_RE = re.compile(rb"""^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def discover(paths: Sequence[str]) -> tuple[list[Path], list[Path]]:
    """Expand files, folders and globs into (supported files, unsupported files in folders)."""
    found = discover_all(paths)
    return found.files, found.unsupported


@dataclass(frozen=True)
class Discovery:
    """What the given paths hold: files to load, what a folder held that is not loaded, and
    paths that cannot be read (each that source's failure, never the run's)."""

    files: list[Path]
    unsupported: list[Path]
    skipped: list[tuple[Path, str]]  # (path, why): links leaving their folder, linked folders
    failed: list[tuple[Path, str]] = field(default_factory=list)  # (path, why): loops, denied


def discover_all(paths: Sequence[str]) -> Discovery:
    """Expand files, folders and globs. A folder is searched without leaving it: a link to a
    file outside it, or to a folder, is skipped and listed; a link named by the user (as a
    path or by a glob) is followed. A path that cannot be read (a link loop, a folder or link
    without permission, a named pipe or device named by the user) is listed as failed."""
    found = Discovery([], [], [], [])
    for given in paths:
        path = Path(given)
        kind, why = _kind(path)
        if kind == "folder":
            _walk(path, found)
        elif kind == "file":
            found.files.append(path)
        elif kind == "missing" and glob.has_magic(given):
            matches = sorted(Path(m) for m in glob.glob(given, recursive=True))
            files = [m for m in matches if _kind(m)[0] == "file"]
            if not files:
                raise SourceError(given, "no file matches this pattern")
            found.files.extend(files)
        elif kind == "missing":
            raise SourceError(given, "no such file or folder")
        else:
            found.failed.append((path, why))
    unique = list(dict.fromkeys(resolved(p) for p in found.files))
    loaded: list[Path] = []
    for path in unique:
        if zipfile.is_zipfile(path):
            _members(path, loaded, found.unsupported, found.skipped)
        else:
            loaded.append(path)
    return Discovery(loaded, found.unsupported, found.skipped, found.failed)


def _members(
    archive: Path, found: list[Path], unsupported: list[Path], skipped: list[tuple[Path, str]]
) -> None:
    """A zip archive's members, each a source (`ARCHIVE!/MEMBER`), sorted as a folder is."""
    try:
        names = zip_members(archive)
    except SourceError:
        found.append(archive)  # it fails alone, with its reason, when it is read
        return
    counts = Counter(names)
    for name in dict.fromkeys(names):
        location = member_location(archive, name)
        member = Path(location)
        if counts[name] > 1:  # zipfile opens the last of them by that name
            why = f"{counts[name]} members have this name: only the last is read"
            skipped.append((member, why))
        if str(member) != location:  # `./x`, `a//b`: a path would not name it
            skipped.append((member, f"a member name that cannot be addressed: {name!r}"))
        elif ".." in Path(name).parts:  # never read as a path, but the name would mislead
            skipped.append((member, "a member name leading out of the archive ('..'): not read"))
        elif any(part.startswith(".") for part in Path(name).parts):
            continue  # hidden, as in a folder
        elif content_suffix(name) in FORMATS_BY_SUFFIX:
            found.append(member)
        else:
            unsupported.append(member)


def content_suffix(location: str | Path) -> str:
    """The suffix that names a source's content: `x.jsonl.gz` and `a.zip!/x.jsonl` hold
    `.jsonl`."""
    name = Path(split_member(str(location))[1] or str(location))
    suffix = name.suffix.lower()
    if suffix in STREAM_SUFFIXES:
        suffix = Path(name.stem).suffix.lower()
    return suffix


def _kind(path: Path) -> tuple[str, str]:
    """What a path is, following links: `file`, `folder`, `missing`, or `unreadable` with why
    (a link loop, no permission to reach it, or not a regular file: a named pipe would block
    the run and a device never ends)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ENOENT and not path.is_symlink():
            return "missing", ""
        return "unreadable", _why(exc)
    if stat.S_ISDIR(mode):
        return "folder", ""
    if stat.S_ISREG(mode):
        return "file", ""
    what = "a named pipe" if stat.S_ISFIFO(mode) else "a device or socket"
    return "unreadable", f"not a regular file ({what}): not read"


def _why(exc: OSError) -> str:
    """Why a path cannot be followed or read, in words."""
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop: cannot be followed"
    if exc.errno == errno.ENOENT:
        return "a link to no file"
    return f"cannot be read: {exc.strerror or exc}"


def resolved(path: Path) -> Path:
    """The path with links resolved (as given when it cannot be)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a link loop
        return path.absolute()


def _walk(folder: Path, found: Discovery) -> None:
    """The files of a folder and its subfolders, links leaving it skipped (and listed); links
    that cannot be followed and folders that cannot be read fail as sources of their own."""
    root = resolved(folder)

    def unreadable(exc: OSError) -> None:
        reason = f"cannot read this folder: {exc.strerror or exc}"
        found.failed.append((Path(exc.filename or folder), reason))

    for directory, subdirs, names in os.walk(folder, onerror=unreadable):  # no linked folders
        here = Path(directory)
        for name in sorted(subdirs):
            if (here / name).is_symlink() and not name.startswith("."):
                found.skipped.append((here / name, "a link to a folder: not followed"))
        subdirs[:] = sorted(d for d in subdirs if not (here / d).is_symlink())
        for name in sorted(names):
            child = here / name
            if name.startswith("."):
                continue
            kind, why = _kind(child)
            if child.is_symlink():
                if kind == "missing" or why == "a link to no file":
                    found.skipped.append((child, "a link to no file"))
                    continue
                if kind == "unreadable" and not why.startswith("not a regular file"):
                    found.failed.append((child, why))
                    continue
                target = resolved(child)
                if not target.is_relative_to(root):
                    found.skipped.append((child, f"a link leaving the folder (to {target})"))
                    continue
                if kind == "folder":
                    found.skipped.append((child, "a link to a folder: not followed"))
                    continue
            if kind == "unreadable":
                if why.startswith("not a regular file"):
                    found.skipped.append((child, why))
                else:
                    found.failed.append((child, why))
            elif kind == "file":
                supported = child.suffix.lower() in LOADED_SUFFIXES
                (found.files if supported else found.unsupported).append(child)


def detect_encoding(head: bytes) -> str:
    """The codec for a file: UTF-32, UTF-16 or UTF-8 when a byte-order mark says so, the
    encoding an XML declaration names, else strict UTF-8. UTF-32's little-endian mark starts
    with UTF-16's, so it is looked for first."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if match := XML_ENCODING_RE.match(head.removeprefix(codecs.BOM_UTF8)):
        name = _charset(match.group(1).decode("ascii"))
        if name is not None and name not in ("utf-8", "utf-16", "utf-32"):
            return name
    return "utf-8-sig"  # for an unknown name, the XML parser names it


# Python codecs of text that are not character sets: they decode escapes or domain names,
# and fail on ordinary text (UnicodeError) instead of reading it.
NOT_CHARSETS = frozenset({"punycode", "idna", "unicode-escape", "raw-unicode-escape", "undefined"})


def _charset(name: str) -> str | None:
    """Python's name for a character set an XML declaration names, or None when Python has
    none by that name or it is not one: `hex`, `base64`, `rot13`, `zlib_codec` are codecs
    of bytes (or of text to text), `undefined` fails on anything, `punycode` on most text."""
    try:
        codec = codecs.lookup(name)
        b"<?xml".decode(codec.name, "replace")  # LookupError: a codec not of bytes to text
    except (LookupError, UnicodeError):
        return None
    return None if codec.name.replace("_", "-") in NOT_CHARSETS else codec.name


def fingerprint(path: Path) -> tuple[str, int, str]:
    """Checksum, size and encoding of a file; raise SourceError if it is not readable text.

    A file compressed as a whole is hashed as stored and its text checked while it is read,
    so that it is decompressed once; a zip member is hashed as its content, and checked here.
    The size is that of the file on disk (a member's archive), for the unchanged-file check.
    """
    location = str(path)
    try:
        if split_member(location)[1] is None and is_compressed(location):
            with open(location, "rb") as handle:
                checksum = _stored_digest(handle)
            with open_bytes(location) as content:
                head = content.read(CHUNK)
            if not head:
                raise SourceError(location, "the file is empty (once decompressed)")
            return checksum, container_stat(location).st_size, detect_encoding(head)
        with open_bytes(location) as handle:
            checksum, size, encoding = _checked_digest(handle, location)
        if split_member(location)[1] is not None:
            size = container_stat(location).st_size
    except OSError as exc:
        raise SourceError(location, f"cannot read: {exc.strerror or exc}") from exc
    return checksum, size, encoding


def _stored_digest(handle: BinaryIO) -> str:
    """SHA-256 of a binary stream's bytes."""
    digest = hashlib.sha256()
    while chunk := handle.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def _checked_digest(handle: BinaryIO, location: str) -> tuple[str, int, str]:
    """SHA-256, size and encoding of a text stream's bytes, checked to be text."""
    path = Path(location)
    digest = hashlib.sha256()
    size = 0
    head = handle.read(CHUNK)
    encoding = detect_encoding(head)
    checked = encoding in ("utf-8-sig", *WIDE_ENCODINGS)  # other codecs: an XML parser decodes
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    chunk = head
    while chunk:
        if checked and encoding not in WIDE_ENCODINGS and b"\x00" in chunk:
            offset = size + chunk.index(b"\x00")
            raise SourceError(location, f"looks like a binary file (NUL byte at offset {offset})")
        if checked:
            _decode_checked(decoder, chunk, size, path, encoding)
        digest.update(chunk)
        size += len(chunk)
        chunk = handle.read(CHUNK)
    if checked:
        _decode_checked(decoder, b"", size, path, encoding, final=True)
    if size == 0:
        raise SourceError(location, "the file is empty")
    return digest.hexdigest(), size, encoding


def _decode_checked(
    decoder: codecs.IncrementalDecoder,
    chunk: bytes,
    offset: int,
    path: Path,
    encoding: str,
    *,
    final: bool = False,
) -> None:
    """Decode a chunk to validate it, naming the byte offset of the first invalid byte."""
    try:
        decoder.decode(chunk, final)
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1]
        at = offset + exc.start - _pending_bytes(decoder, chunk, exc)
        name = WIDE_ENCODINGS.get(encoding, "UTF-8")
        raise SourceError(
            str(path),
            f"not valid {name} text: byte 0x{bad.hex()} at offset {at}; "
            "convert it to UTF-8 (UTF-8, or UTF-16 or UTF-32 with a byte-order mark, are "
            "accepted)",
        ) from exc


def _pending_bytes(
    decoder: codecs.IncrementalDecoder, chunk: bytes, exc: UnicodeDecodeError
) -> int:
    """Bytes before the chunk that the error's offsets count from (negative for a stripped BOM)."""
    return len(exc.object) - len(chunk)


def open_text(path: Path | str, encoding: str) -> TextIO:
    """Open a fingerprinted file as text, newlines left for the readers to handle; compressed
    content is decompressed (and checked) as it is read."""
    location = str(path)
    if split_member(location)[1] is not None or is_compressed(location):
        return open_validated_text(location, encoding)
    return io.open(location, encoding=encoding, errors="strict", newline="")  # noqa: UP020


def detect_format(path: Path, head: str) -> str:
    """The format of a file, from its suffix, else from its first characters."""
    fmt = FORMATS_BY_SUFFIX.get(content_suffix(path))
    if fmt in ("bibtex", "dblp"):
        fmt = None  # decided by content (etl.extract.shapes)
    if fmt == "json" and _looks_like_json_lines(head):
        return "jsonl"
    if fmt:
        return fmt
    stripped = head.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        return "jsonl" if _looks_like_json_lines(head) else "json"
    return "text"


def _looks_like_json_lines(head: str) -> bool:
    """True when the first two non-blank lines each start a JSON object."""
    lines = [line.strip() for line in head.splitlines() if line.strip()][:2]
    return len(lines) == 2 and all(ln.startswith("{") and ln.endswith("}") for ln in lines)


def read_head(path: Path | str, encoding: str, chars: int = 4096) -> str:
    """The first characters of a file, for format and header detection."""
    with open_text(path, encoding) as handle:
        return handle.read(chars)


def read_head_bytes(path: Path | str, size: int) -> bytes:
    """The first bytes of a file's (decompressed) content."""
    with open_bytes(str(path)) as handle:
        return handle.read(size)


def iter_lines(handle: TextIO) -> Iterator[tuple[int, str]]:
    """Numbered lines (1-based) with line endings removed."""
    for number, line in enumerate(handle, start=1):
        yield number, line.rstrip("\r\n")

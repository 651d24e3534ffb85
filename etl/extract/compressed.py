"""Compressed inputs read as the bytes they hold: gzip, bzip2, xz and zstandard streams, and
zip archives whose members are each a source of their own. Recognised by their first bytes,
never by their names, and always streamed: memory does not grow with what they hold.

A zip member is named `ARCHIVE!/MEMBER` (the archive's path, `!/`, the member's name in it).
"""

from __future__ import annotations

import atexit
import bz2
import codecs
import gzip
import io
import lzma
import os
import struct
import threading
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import zstandard

from etl.errors import SourceError
from etl.extract import limits

MEMBER_SEPARATOR = "!/"
# (first bytes, compression): how each kind of stream starts.
MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),  # an archive without members
)
STREAM_SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}
ARCHIVE_SUFFIXES = {".zip"}
# zstandard frames may ask for a window this large at most (its library default), so that a
# hostile frame cannot make the decompressor hold gigabytes.
ZSTD_MAX_WINDOW = 1 << 27
CHUNK = 1 << 16
# What a zip archive may hold: members (each a source, each its own transaction) and bytes of
# its central directory (read whole, before any member).
MAX_MEMBERS = 10_000
MAX_DIRECTORY_BYTES = 4 * 2**20
END_RECORD = 22  # bytes of a zip's end-of-central-directory record, without its comment
# liblzma allocates an xz stream's whole dictionary, as large as its header asks (up to
# 1.5 GB); xz -9 uses 64 MB.
XZ_MEMORY = 256 * 2**20
# Codecs whose text holds NUL bytes (a byte-order mark names them), with their names.
WIDE_ENCODINGS = {"utf-16": "UTF-16", "utf-32": "UTF-32"}
# A zip entry's general-purpose flag bit saying it is encrypted (zipfile would raise
# RuntimeError asking for a password).
ENCRYPTED_FLAG = 0x1
DAMAGED = (
    OSError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    zstandard.ZstdError,
    zipfile.BadZipFile,
    NotImplementedError,  # a zip member packed with a method Python does not read
)


def split_member(location: str) -> tuple[str, str | None]:
    """(archive path, member name) for `ARCHIVE!/MEMBER`; (location, None) for a plain path.
    A path that exists as given is plain, even with `!/` in it (a folder named `x!` beside a
    file `x`)."""
    start = 0
    if MEMBER_SEPARATOR in location and os.path.lexists(location):
        return location, None
    while (at := location.find(MEMBER_SEPARATOR, start)) >= 0:
        archive = location[:at]
        if os.path.isfile(archive):
            return archive, location[at + len(MEMBER_SEPARATOR) :]
        start = at + 1
    return location, None


def member_location(archive: Path, member: str) -> str:
    """How a zip member is named as a source."""
    return f"{archive}{MEMBER_SEPARATOR}{member}"


def container_stat(location: str) -> os.stat_result:
    """The stat of the file on disk that holds a source (a zip member's archive)."""
    return os.stat(split_member(location)[0])


def compression_of(head: bytes) -> str | None:
    """The compression a stream's first bytes name, or None for plain content."""
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return None


def is_tar(head: bytes) -> bool:
    """Whether (decompressed) content is a tar archive: `ustar` at offset 257."""
    return head[257:262] == b"ustar"


def zip_members(archive: Path) -> list[str]:
    """The names of an archive's file members, in the archive's order (folders and the
    resource forks macOS adds, `__MACOSX/`, left out). SourceError if it cannot be read, or
    holds more members than MAX_MEMBERS."""
    try:
        with _zip_file(str(archive)) as handle:
            infos = handle.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(str(archive), f"not a readable zip archive: {exc}") from exc
    if len(infos) > MAX_MEMBERS:
        raise SourceError(str(archive), _too_many(len(infos)))
    return [
        info.filename
        for info in infos
        if not info.is_dir() and not info.filename.startswith("__MACOSX/")
    ]


def _zip_file(archive: str) -> zipfile.ZipFile:
    """The archive opened, once its end record says its directory is within the bounds
    (zipfile reads the whole directory, a few hundred bytes held per member)."""
    members, size = _directory(archive)
    if members > MAX_MEMBERS or size > MAX_DIRECTORY_BYTES:
        raise SourceError(archive, _too_many(members, size))
    return zipfile.ZipFile(archive)


def _too_many(members: int, size: int | None = None) -> str:
    held = f" ({size:,} bytes of directory)" if size is not None else ""
    return (
        f"a zip archive of {members:,} members{held}: more than an archive may hold "
        f"({MAX_MEMBERS:,} members, {MAX_DIRECTORY_BYTES // 2**20}M of directory); unpack it "
        "into a folder to load its files"
    )


def _directory(archive: str) -> tuple[int, int]:
    """(members, bytes) of an archive's central directory, as its end record (or its ZIP64
    end record) says; (0, 0) when there is none, for zipfile to say what is wrong."""
    with open(archive, "rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        start = max(0, end - END_RECORD - 0xFFFF)  # the record, and a comment of 64 KB at most
        handle.seek(start)
        tail = handle.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < END_RECORD:
            return 0, 0
        fields = struct.unpack("<4s4H2LH", tail[at : at + END_RECORD])
        members, size = fields[4], fields[5]
        locator = tail[max(0, at - 20) : at]
        zip64 = len(locator) == 20 and locator[:4] == b"PK\x06\x07"
        if (members == 0xFFFF or size == 0xFFFFFFFF) and zip64:
            handle.seek(struct.unpack("<4sLQL", locator)[2])
            record = handle.read(56)
            if len(record) == 56 and record[:4] == b"PK\x06\x06":
                members, size = struct.unpack("<4sQ2H2L4Q", record)[7:9]
    return members, size


def is_compressed(location: str) -> bool:
    """Whether a source is read through a decompressor (a zip member, or a compressed file)."""
    archive, member = split_member(location)
    if member is not None:
        return True
    try:
        with open(archive, "rb") as handle:
            return compression_of(handle.read(8)) is not None
    except OSError:
        return False


def open_bytes(location: str) -> BinaryIO:
    """The content of a source as a binary stream: decompressed, a zip member opened. Reading
    it raises SourceError (naming the source) when the compressed data is damaged. `seek(0)`
    starts again from the beginning."""
    raw = _Decompressed(location, lambda: _open_content(location))
    return io.BufferedReader(raw, CHUNK)


def open_validated_text(location: str, encoding: str) -> io.TextIOWrapper:
    """A compressed source as text, its bytes checked as they are read: a NUL byte or bytes
    that are not valid text raise SourceError naming the offset in the decompressed content
    (a plain file is checked whole before it is read; a compressed one is not read twice)."""
    raw = _Decompressed(location, lambda: _open_content(location), encoding=encoding)
    return io.TextIOWrapper(io.BufferedReader(raw, CHUNK), encoding=encoding, newline="")


def _open_content(location: str) -> tuple[BinaryIO, int | None]:
    """Open a source's bytes and put the decompressor its first bytes name in front of them;
    with the stored size they expand from (None: read as stored)."""
    archive, member = split_member(location)
    deflated = False  # a zip member stored compressed
    if member is None:
        handle: BinaryIO = open(archive, "rb")  # noqa: SIM115 (returned open)
        stored = os.fstat(handle.fileno()).st_size
    else:
        handle, stored, deflated = _open_member(archive, member)
    try:
        kind = compression_of(_peek(handle, location))
        if kind == "zip" and member is not None:
            raise SourceError(location, "a zip archive inside a zip archive is not read")
        if kind == "zip":  # discovery lists a readable archive's members instead
            zip_members(Path(archive))  # raises why they cannot be listed
            raise SourceError(location, "a zip archive whose members cannot be listed (damaged?)")
        if kind is None:
            return handle, stored if deflated else None
        return _decompressor(kind, handle), stored
    except BaseException:
        handle.close()
        raise


def _open_member(archive: str, member: str) -> tuple[BinaryIO, int, bool]:
    """A zip member's (stored or deflated ...) content, from the archive kept open; with its
    size in the archive, and whether it is compressed there."""
    try:
        container = _open_archive(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(archive, f"not a readable zip archive: {exc}") from exc
    location = member_location(Path(archive), member)
    try:
        info = container.getinfo(member)
        if info.flag_bits & ENCRYPTED_FLAG:
            raise SourceError(location, "the member is encrypted (password-protected): not read")
        deflated = info.compress_type != zipfile.ZIP_STORED
        return container.open(member), info.compress_size, deflated  # type: ignore[return-value]
    except KeyError as exc:
        raise SourceError(location, "no such member") from exc
    except (*DAMAGED,) as exc:
        raise SourceError(location, f"cannot open: {exc}") from exc


# The archive whose members are being read, kept open: reading its central directory again
# for each member made an archive of N members take N² time. One at a time, per process.
_OPEN_ARCHIVE: dict[tuple[str, int, int, int, int], zipfile.ZipFile] = {}
_ARCHIVE_LOCK = threading.Lock()


def _open_archive(archive: str) -> zipfile.ZipFile:
    """The archive open for reading members; opened again when its file changed. Members
    opened from the one closed before still read (zipfile counts the handle's users)."""
    info = os.stat(archive)
    key = (archive, os.getpid(), info.st_ino, info.st_size, info.st_mtime_ns)
    with _ARCHIVE_LOCK:
        held = _OPEN_ARCHIVE.get(key)
        if held is None:
            _close_archives()
            held = _OPEN_ARCHIVE[key] = _zip_file(archive)
        return held


@atexit.register
def _close_archives() -> None:
    for held in _OPEN_ARCHIVE.values():
        held.close()
    _OPEN_ARCHIVE.clear()


def _peek(handle: BinaryIO, location: str) -> bytes:
    """The first bytes of a stream, the stream rewound. Reading a small zip member checks its
    CRC already, so damage found here is the source's failure too."""
    try:
        head = handle.read(8)
        handle.seek(0)
    except DAMAGED as exc:
        raise SourceError(location, f"the compressed data is damaged: {exc}") from exc
    return head


def _decompressor(kind: str, handle: BinaryIO) -> BinaryIO:
    """The decompressed stream of a compressed one (it closes the compressed one)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.BZ2File(handle)  # type: ignore[return-value]
    if kind == "xz":
        return io.BufferedReader(_XzStreams(handle), CHUNK)
    reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).stream_reader(
        _FramesChecked(handle),  # type: ignore[arg-type]
        read_across_frames=True,
        closefd=True,
    )
    return reader


class Refused(Exception):
    """Compressed data that asks for more memory than it may have to be decompressed."""


class _XzStreams(io.RawIOBase):
    """xz streams one after another (as lzma.LZMAFile reads them), each decoded within
    XZ_MEMORY: liblzma would otherwise allocate whatever dictionary a header asks for."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.decoder = self._decoder()
        self.streams = 1

    def readable(self) -> bool:
        return True

    def _decoder(self) -> lzma.LZMADecompressor:
        return lzma.LZMADecompressor(memlimit=XZ_MEMORY)

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._next(len(buffer))
        except lzma.LZMAError as exc:
            if "Memory usage limit" in str(exc):
                raise Refused(
                    f"an xz stream whose dictionary needs more than {XZ_MEMORY // 2**20}M to "
                    "decompress: not read"
                ) from exc
            raise
        buffer[: len(data)] = data
        return len(data)

    def _next(self, size: int) -> bytes:
        """The next decompressed bytes (b"" at the end of the last stream)."""
        while True:
            if self.decoder.eof:
                rest = self.decoder.unused_data or self.handle.read(CHUNK)
                if not rest:
                    return b""
                self.decoder = self._decoder()
                try:
                    data = self.decoder.decompress(rest, size)
                except lzma.LZMAError as exc:
                    if "Memory usage limit" in str(exc):
                        raise
                    return b""  # what follows the streams is not one: ignored, as LZMAFile does
            elif self.decoder.needs_input:
                raw = self.handle.read(CHUNK)
                if not raw:
                    raise EOFError("the input ends before the end of the xz stream")
                data = self.decoder.decompress(raw, size)
            else:
                data = self.decoder.decompress(b"", size)
            if data:
                return data

    def close(self) -> None:
        self.handle.close()
        super().close()


class _FramesChecked(io.RawIOBase):
    """Compressed zstandard bytes passed through to the decompressor, their frames followed:
    the zstandard reader takes input ending inside a frame for the end of the content, so a
    cut file would load part of its records as if whole. Reading past the end then raises."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.frames = _ZstdFrames()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        if data:
            self.frames.feed(data)
        elif not self.frames.complete:
            raise zstandard.ZstdError("the input ends inside a frame: the file is truncated")
        return data

    def close(self) -> None:
        self.handle.close()
        super().close()


class _ZstdFrames:
    """Where zstandard frames start and end in a stream of their bytes, from the headers of
    frames and blocks (RFC 8878), without decompressing: bytes are counted, never kept."""

    ZSTD_MAGIC = 0xFD2FB528
    SKIPPABLE_MAGIC = 0x184D2A50  # the low four bits are free

    def __init__(self) -> None:
        self.skip = 0  # bytes to pass over before the next header
        self.held = b""  # a header's bytes so far
        self.wanted = 4
        self.step: Callable[[int], None] | None = self._magic
        self.checksum = False

    @property
    def complete(self) -> bool:
        """Whether the bytes so far end between frames (or are not zstandard frames at all,
        which the decompressor reports itself)."""
        return self.step is None or (self.step == self._magic and not self.held and not self.skip)

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        while view and self.step is not None:
            if self.skip:
                passed = min(self.skip, len(view))
                self.skip -= passed
                view = view[passed:]
                continue
            taken = self.wanted - len(self.held)
            self.held += bytes(view[:taken])
            view = view[taken:]
            if len(self.held) == self.wanted:
                header, self.held = int.from_bytes(self.held, "little"), b""
                self.step(header)

    def _expect(self, size: int, step: Callable[[int], None]) -> None:
        self.wanted, self.step = size, step

    def _magic(self, magic: int) -> None:
        if magic == self.ZSTD_MAGIC:
            self._expect(1, self._descriptor)
        elif magic & ~0xF == self.SKIPPABLE_MAGIC:
            self._expect(4, self._skippable)
        else:
            self.step = None  # not a frame: the decompressor says so

    def _skippable(self, size: int) -> None:
        self.skip = size
        self._expect(4, self._magic)

    def _descriptor(self, descriptor: int) -> None:
        single_segment = descriptor >> 5 & 1
        content_size = (single_segment, 2, 4, 8)[descriptor >> 6]
        dictionary = (0, 1, 2, 4)[descriptor & 3]
        self.checksum = bool(descriptor >> 2 & 1)
        self.skip = (1 - single_segment) + dictionary + content_size  # window, ids, size
        self._expect(3, self._block)

    def _block(self, header: int) -> None:
        kind, size = header >> 1 & 3, header >> 3
        self.skip = 1 if kind == 1 else size  # an RLE block holds one byte
        if header & 1:  # the frame's last block
            self.skip += 4 * self.checksum
            self._expect(4, self._magic)
        else:
            self._expect(3, self._block)


class _Decompressed(io.RawIOBase):
    """A decompressed source as a raw stream: errors of the compressed data become
    SourceError, `seek(0)` reopens it, (given an encoding) its text is checked as it
    passes, so that a fault is named by its offset, and what it expands to is bounded
    (etl.extract.limits: `--max-expansion`, `--max-expanded-size`)."""

    def __init__(
        self,
        location: str,
        opener: Callable[[], tuple[BinaryIO, int | None]],
        encoding: str | None = None,
    ) -> None:
        self.location = location
        self.opener = opener
        self.encoding = encoding
        self.stream: BinaryIO | None = None
        self.offset = 0
        self.stored: int | None = None  # bytes the content expands from (None: not expanded)
        self.bound: int | None = None  # bytes it may expand to
        self.decoder: codecs.IncrementalDecoder | None = None
        self._open()

    def _open(self) -> None:
        if self.stream is not None:
            self.stream.close()
        self.stream, self.stored = self.opener()
        if self.stored is not None:
            self.bound = limits.current().expanded_bound(self.stored)
        self.offset = 0
        if self.encoding:
            self.decoder = codecs.getincrementaldecoder(self.encoding)("strict")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.offset

    def seek(self, offset: int, whence: int = 0) -> int:
        if (offset, whence) != (0, 0):
            raise io.UnsupportedOperation("a decompressed stream is only rewound")
        self._open()
        return 0

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        assert self.stream is not None
        try:
            # At most a chunk at a time: a failing read loses what it decompressed, and the
            # offset named then is where the last whole chunk ended.
            data = self.stream.read(min(len(buffer), CHUNK))
        except SourceError:
            raise
        except Refused as exc:
            raise SourceError(self.location, str(exc)) from exc
        except DAMAGED as exc:
            raise SourceError(
                self.location,
                f"the compressed data is damaged after {self.offset:,} bytes: {exc}",
            ) from exc
        if self.bound is not None and self.offset + len(data) > self.bound:
            raise SourceError(self.location, self._too_large())
        if self.decoder is not None:
            self._check(data)
        size = len(data)
        buffer[:size] = data
        self.offset += size
        return size

    def _too_large(self) -> str:
        """Why reading stops: the content expands past its bound (a decompression bomb)."""
        chosen = limits.current()
        return (
            f"the compressed data expands past {self.bound:,} bytes, the most a file of "
            f"{self.stored:,} bytes may hold (--max-expansion {chosen.expansion:,} times, "
            f"{limits.EXPANSION_FLOOR // 2**20}M at least; --max-expanded-size "
            f"{chosen.expanded_size:,} bytes): not read further"
        )

    def _check(self, data: bytes) -> None:
        """Raise SourceError at a NUL byte or at bytes that are not valid text."""
        assert self.decoder is not None
        if self.encoding not in WIDE_ENCODINGS and b"\x00" in data:
            at = self.offset + data.index(b"\x00")
            raise SourceError(self.location, f"looks like a binary file (NUL byte at offset {at})")
        try:
            self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            at = self.offset + exc.start - (len(exc.object) - len(data))
            bad = exc.object[exc.start : exc.start + 1]
            name = WIDE_ENCODINGS.get(self.encoding or "", "UTF-8")
            raise SourceError(
                self.location,
                f"not valid {name} text: byte 0x{bad.hex()} at offset {at} of the "
                "decompressed content",
            ) from exc

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None
        super().close()

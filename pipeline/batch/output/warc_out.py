"""``--warc-out DIR``: every HTTP exchange of a run as WARC/1.1 records (fastwarc writes them).

The files of one writer (a plain run, or one shard of a sharded run) are
``DIR/part-KKKKK-of-NNNNN-SSSSS.warc.gz``: the shard's name as its JSONL part has it (a plain
run is part 0 of 1) and a serial number; the next serial starts once a file has reached
``--warc-max-bytes``. Each file opens with a ``warcinfo`` record; each exchange is a
``request`` record and a ``response`` record (``WARC-Concurrent-To`` links them), each a gzip
member of its own, with block and payload digests (SHA-1), ``WARC-Truncated`` when the body is
short. The response block is the status line, the headers
and the body as received: still in its Content-Encoding (the payload digest covers those
bytes, as warcio and fastwarc verify it); the client removed the chunk framing, so a
``Transfer-Encoding`` header is kept as ``X-Crawler-Transfer-Encoding`` (Common Crawl's name
for it). The request is the one sent (without the credentials the credential scope withheld);
its credential headers (``Exchange.credentials``) are written as ``<redacted>``.

A pair of records goes to the file in one write, before the fetcher returns the page, so a
record in the JSONL never names a response the WARC lacks. A crash may leave one torn gzip
member at the end of the last file: opening the writer again (every shard run, and a plain
``--resume``) cuts the file back to its last whole pair.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yarl import URL

from pipeline.core.errors import PROG, OutputError, UsageError
from pipeline.core.extras import install_hint
from pipeline.fetch.archive import Exchange

if TYPE_CHECKING:
    from fastwarc.warc import WarcRecordType

DEFAULT_MAX_BYTES = 1_000_000_000  # a file is closed once it holds this much (Common Crawl's ~1 GB)
GZIP_LEVEL = 1  # far cheaper than level 6 for somewhat larger files (benchmarks/README.md)
_SERIAL = re.compile(r"-(\d{5,})\.warc\.gz$")
_SCAN_CHUNK = 1 << 20
_REDACTED = "<redacted>"
INSTALL_HINT = install_hint("warc")


def require_fastwarc(flag: str) -> None:
    """A one-line ``UsageError`` naming what to install when fastwarc is missing."""
    try:
        import fastwarc  # noqa: F401
    except ImportError:
        raise UsageError(f"{flag} needs fastwarc: {INSTALL_HINT}") from None


def warc_name(stem: str, serial: int) -> str:
    return f"{stem}-{serial:05d}.warc.gz"


def warc_files(directory: str | os.PathLike[str], stem: str) -> list[Path]:
    """The WARC files of writer ``stem`` in ``directory``, in serial order."""
    folder = Path(directory)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob(f"{stem}-*.warc.gz"):
        match = _SERIAL.search(path.name)
        if match and path.name == warc_name(stem, int(match.group(1))):
            found.append((int(match.group(1)), path))
    return [path for _, path in sorted(found)]


def clear_warc_files(directory: str | os.PathLike[str], stem: str) -> None:
    """Remove writer ``stem``'s files (a run that replaces an earlier one: ``--overwrite``)."""
    for path in warc_files(directory, stem):
        path.unlink(missing_ok=True)


def check_warc_out(directory: str, stem: str | None, *, resume: bool, overwrite: bool) -> None:
    """Refuse (``UsageError``) a ``--warc-out`` that is not a directory, or that holds the
    WARC files of writer ``stem`` (None: of any part) while the run neither continues them
    (``--resume``) nor replaces them (``--overwrite``)."""
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--warc-out {directory} is a file; it names a directory")
    if not folder.exists() and not folder.absolute().parent.is_dir():
        raise UsageError(f"cannot write --warc-out {directory}: no such directory "
                         f"{folder.absolute().parent}")
    if resume or overwrite or not folder.is_dir():
        return
    held = warc_files(folder, stem) if stem is not None else list(folder.glob("part-*.warc.gz"))
    if held:
        raise UsageError(f"--warc-out {directory} holds WARC files of an earlier run "
                         f"({held[0].name}, …): --resume continues them, --overwrite "
                         "replaces them")


def whole_members(path: Path) -> tuple[list[int], int]:
    """The end offsets of the whole gzip members at the start of ``path``, and the file's
    size: bytes past the last offset are a torn member (or not gzip at all). Inflated a
    chunk at a time, whatever a member holds."""
    ends: list[int] = []
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        offset = 0  # where ``data`` starts in the file
        while data := handle.read(_SCAN_CHUNK):
            while data:
                try:
                    inflater.decompress(data, _SCAN_CHUNK)
                    while inflater.unconsumed_tail and not inflater.eof:
                        inflater.decompress(inflater.unconsumed_tail, _SCAN_CHUNK)
                except zlib.error:
                    return ends, size
                if not inflater.eof:
                    offset += len(data)
                    break
                rest = inflater.unused_data
                offset += len(data) - len(rest)
                ends.append(offset)
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                data = rest
        return ends, size


def repair(path: Path) -> int:
    """Cut ``path`` back to its last whole record pair (the warcinfo record and then
    request/response pairs); returns the bytes cut off."""
    ends, size = whole_members(path)
    if len(ends) % 2 == 0:  # a request whose response was torn off goes too
        ends = ends[:-1]
    keep = ends[-1] if ends else 0
    if keep < size:
        with open(path, "r+b") as handle:
            handle.truncate(keep)
    return size - keep


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PROG)
    except PackageNotFoundError:
        return "unknown"


def _digest(data: bytes) -> bytes:
    return hashlib.sha1(data).digest()


def _head_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def request_block(exchange: Exchange) -> bytes:
    """The request as the fetcher sent it (credentials redacted)."""
    url = URL(exchange.url, encoded=True)
    host = url.host_port_subcomponent or ""
    lines = [f"{exchange.method} {url.raw_path_qs or '/'} HTTP/1.1", f"Host: {host}"]
    for name, value in exchange.request_headers.items():
        if name.lower() != "host":
            secret = name.lower() in exchange.credentials
            lines.append(f"{name}: {_REDACTED if secret else value}")
    return _head_bytes("\r\n".join(lines) + "\r\n\r\n")


def response_head(exchange: Exchange) -> bytes:
    """The status line and headers of the response, as received."""
    reason = f" {exchange.reason}" if exchange.reason else ""
    lines = [f"{exchange.version} {exchange.status}{reason}"]
    for name, value in exchange.headers:
        if name.lower() == "transfer-encoding":  # the body is kept without its chunk framing
            name = "X-Crawler-Transfer-Encoding"
        lines.append(f"{name}: {value}")
    return _head_bytes("\r\n".join(lines) + "\r\n\r\n")


class WarcWriter:
    """The WARC files of one writer: ``stem`` in ``directory``, rotated at ``max_bytes``
    (see the module docstring). :meth:`open` first (it repairs and continues the last file
    when one exists), then :meth:`keep` per exchange (the
    :class:`~pipeline.fetch.archive.ResponseArchive` port), then :meth:`close`.

    A failed write is kept (``failure``, an :class:`OutputError`) and the writer stops;
    :meth:`raise_failure` raises it for the run to stop before its next record.
    """

    def __init__(self, directory: str | os.PathLike[str], stem: str, *,
                 max_bytes: int = DEFAULT_MAX_BYTES, info: dict[str, str] | None = None) -> None:
        self.directory = Path(directory)
        self.stem = stem
        self.max_bytes = max_bytes
        self.info = info or {}
        self.failure: OutputError | None = None
        self.repaired = 0  # bytes of a torn record cut off when opened
        self._fd: int | None = None
        self._path: Path | None = None
        self._size = 0
        self._serial = -1
        self._info_id: str | None = None
        self._fastwarc: Any = None

    @property
    def files(self) -> list[Path]:
        """Every file of this writer so far (written or continued), in serial order."""
        return warc_files(self.directory, self.stem)

    def open(self) -> WarcWriter:
        """Continue the last file of this writer (its torn end cut off), or start the
        first; ``UsageError`` if the directory cannot be written."""
        import fastwarc.warc
        from fastwarc.stream_io import GzipWriter

        self._fastwarc = (fastwarc.warc, GzipWriter)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            existing = warc_files(self.directory, self.stem)
            if existing:
                last = existing[-1]
                self.repaired = repair(last)
                self._serial = int(_SERIAL.search(last.name).group(1))  # type: ignore[union-attr]
                self._open_file(last)
            else:
                self._next_file()
        except OSError as exc:
            raise UsageError(f"cannot write WARC files in {self.directory}: "
                             f"{exc.strerror or exc}") from exc
        return self

    def _open_file(self, path: Path) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(path, flags, 0o644)
        self._path = path
        self._size = os.fstat(self._fd).st_size
        if self._size == 0:
            self._write_info()

    def _next_file(self) -> None:
        self._close_file()
        self._serial += 1
        self._open_file(self.directory / warc_name(self.stem, self._serial))

    def _close_file(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _write_info(self) -> None:
        assert self._path is not None
        fields = {"software": f"{PROG}/{_version()} (fastwarc)",
                  "format": "WARC File Format 1.1",
                  "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
                                "warc-format/warc-1.1/", **self.info}
        block = "".join(f"{key}: {value}\r\n" for key, value in fields.items()).encode()
        warc = self._fastwarc[0]
        member, record_id = self._member(
            warc.WarcRecordType.warcinfo, block, datetime.now(UTC),
            [("WARC-Filename", self._path.name),
             ("Content-Type", "application/warc-fields")])
        self._info_id = record_id
        self._write(member)

    def _member(self, kind: WarcRecordType, block: bytes, date: datetime,
                headers: Sequence[tuple[str, str]],
                payload_digest: bytes | None = None) -> tuple[bytes, str]:
        """One record as a gzip member of its own, and its record id."""
        warc, gzip_writer = self._fastwarc
        record = warc.WarcRecord()
        record.init_headers(kind, content_length=len(block))
        record.record_date = date
        for name, value in headers:
            record.headers.append(name, value)
        record.set_bytes_content(block)
        buffer = io.BytesIO()
        stream = gzip_writer(buffer, compression_level=GZIP_LEVEL)
        record.write(stream, checksum_data=True, payload_digest=payload_digest)
        stream.close()
        return buffer.getvalue(), str(record.record_id)

    def keep(self, exchange: Exchange) -> None:
        """Write the exchange's request and response records (one write); never raises."""
        if self.failure is not None or self._fd is None:
            return
        try:
            if self._size >= self.max_bytes:
                self._next_file()
            self._write(self._pair(exchange))
        except OSError as exc:
            self.failure = OutputError(exc.errno, exc.strerror or str(exc),
                                       str(self._path or self.directory))

    def _pair(self, exchange: Exchange) -> bytes:
        warc = self._fastwarc[0]
        common = [("WARC-Target-URI", exchange.url)]
        if self._info_id:
            common.append(("WARC-Warcinfo-ID", self._info_id))
        response = [*common, ("Content-Type", "application/http; msgtype=response")]
        if exchange.truncated:
            response.append(("WARC-Truncated", exchange.truncated))
        answer, answer_id = self._member(
            warc.WarcRecordType.response, response_head(exchange) + exchange.body,
            exchange.sent, response, payload_digest=_digest(exchange.body))
        asked, _ = self._member(
            warc.WarcRecordType.request, request_block(exchange), exchange.sent,
            [*common, ("Content-Type", "application/http; msgtype=request"),
             ("WARC-Concurrent-To", answer_id)])
        return asked + answer

    def _write(self, data: bytes) -> None:
        """Append ``data`` whole, or cut off whatever part of it was written and raise."""
        assert self._fd is not None
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                count = os.write(self._fd, view[done:])
                if count <= 0:
                    raise OSError(5, "the WARC file accepted no bytes")
                done += count
        except OSError:
            with contextlib.suppress(OSError):  # whatever part of it reached the file
                os.ftruncate(self._fd, self._size)
            raise
        self._size += done

    def raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure

    def close(self) -> None:
        self._close_file()


"""``--input-format warc``: the ``response`` records of WARC files as the run's input.

The inputs are WARC files (``.warc`` or ``.warc.gz``, known by their first bytes, not their
names), directories (every ``*.warc`` and ``*.warc.gz`` below, in name order) and lists of
such paths (one a line; relative paths start at the list's folder). :func:`warc_items` reads
each file once, in order, and gives each ``response`` record over http(s) an item: its URL
is the record's ``WARC-Target-URI``, its ``index`` its position among those records of the
whole input, ``source`` says ``FILE@OFFSET`` (the offset of the record, or of its gzip
member) and ``locator`` where to read it back. Other records (``warcinfo``, ``request``,
``metadata``, ``revisit``, …, and responses of other schemes such as ``dns:``) are skipped.
A URL captured several times (a retried fetch archives each attempt) gives one item, its last
capture in input order, unless ``--warc-captures all`` asks for every one.
A file that cannot be read and a malformed or torn record give an item with a problem (an
error record); reading goes on at the next gzip member or ``WARC/`` line.

:class:`WarcRecords` is the :class:`~pipeline.fetch.local_files.LocalSource` that reads a
record back when it is extracted: no network; its body undone of its transfer and content
codings under the byte cap (``--max-bytes``), as a fetched body is. A redirect or an error
status is an ``http_status`` record, as when fetched.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from pipeline.batch.input.items import InputItem
from pipeline.core.errors import PipelineError
from pipeline.fetch.base import FetchError, FetchResult
from pipeline.fetch.inflate import decoder_for
from pipeline.fetch.media import parse_content_type

WARC_SUFFIXES = (".warc", ".warc.gz")
GZIP_MAGIC = b"\x1f\x8b"
_READ = 64 * 1024
_OPEN_FILES = 16  # WARC files a process keeps open while reading records back
_MAX_HEADER = 64 * 1024  # a record's WARC or HTTP headers (fastwarc's limit)
_RESYNC_WINDOW = 1 << 20
_MAX_LIST_BYTES = 64 << 20  # a list of WARC paths (Common Crawl's: ~10 MB for 90,000)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _is_warc(path: Path) -> bool:
    """Whether the file starts as a WARC does (plain, or gzip whose first bytes do)."""
    with open(path, "rb") as handle:
        head = handle.read(512)
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 16)
        except zlib.error:
            return False
    return head.startswith(b"WARC/")


def _list_paths(path: Path) -> list[str]:
    """The paths a list file names, one a line (blank lines and ``#`` comments skipped; a
    gzip-compressed list too, as Common Crawl's ``warc.paths.gz``); ``ValueError`` when it
    is not text."""
    with open(path, "rb") as handle:
        opener: Any = gzip.open if handle.read(2) == GZIP_MAGIC else open
    with opener(path, "rb") as handle:
        text = handle.read(_MAX_LIST_BYTES + 1)
    if len(text) > _MAX_LIST_BYTES or b"\0" in text:
        raise ValueError("not a WARC file, nor a list of them")
    try:
        lines = text.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError("not a WARC file, nor a list of them (not UTF-8 text)") from None
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def warc_files(inputs: Sequence[str]) -> Iterator[tuple[str, str | None]]:
    """Each WARC file the inputs name, as (path, problem): problem None for a WARC file, else
    why it cannot be read (the file is then an error record)."""
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            for found in sorted(path.rglob("*")):
                if found.name.lower().endswith(WARC_SUFFIXES) and found.is_file():
                    yield str(found), None
            continue
        try:
            warc = _is_warc(path)
        except OSError as exc:
            yield given, f"cannot read {given}: {exc.strerror or exc}"
            continue
        if warc:
            yield given, None
            continue
        base = path.parent
        try:
            named = _list_paths(path)
        except (OSError, EOFError, zlib.error, ValueError) as exc:
            yield given, f"cannot read {given}: {exc}"
            continue
        for line in named:
            entry = Path(line) if Path(line).is_absolute() else base / line
            try:
                if entry.is_dir():
                    yield from warc_files([str(entry)])
                elif not entry.is_file():
                    yield str(entry), f"no such WARC file: {entry}"
                else:
                    yield str(entry), None if _is_warc(entry) else f"not a WARC file: {entry}"
            except (OSError, ValueError) as exc:
                yield line, f"cannot read {line[:200]}: {exc}"


CAPTURES = ("last", "all")  # --warc-captures: which captures of a URL become items


def warc_items(inputs: Sequence[str], start: int = 0,
               captures: str = "last") -> Iterator[InputItem]:
    """The items of the WARC inputs (see the module docstring), numbered from ``start``:
    with ``captures`` ``last`` one per URL, its last response record in input order (a
    retried fetch archives each attempt: its final response is the last); ``all``: every
    response record."""
    found: Iterable[_Found] = _found(inputs)
    if captures == "last":
        found = _last_captures(found)
    index = start
    for path, offset, url, problem in found:
        if offset is None:  # a file that cannot be read
            yield InputItem(index, path, problem, {"source": path}, "invalid_url")
        else:
            source = f"{path}@{offset}"
            yield InputItem(index, url or source, problem, {"source": source},
                            "decode", locator=f"{os.path.abspath(path)}@{offset}")
        index += 1


_Found = tuple[str, int | None, str | None, str | None]  # path, offset, URL, problem


def _found(inputs: Sequence[str]) -> Iterator[_Found]:
    """Each response record and malformed stretch of the inputs, and each input that cannot
    be read (offset None), in order."""
    for path, problem in warc_files(inputs):
        if problem is not None:
            yield path, None, None, problem
            continue
        for offset, url, trouble in records(path):
            yield path, offset, url, trouble


def _last_captures(found: Iterable[_Found]) -> Iterator[_Found]:
    """``found`` without the response records whose URL a later one has. Every input is
    read before the first item (what is found is held: ~200 bytes a record)."""
    held = list(found)
    last = {url: n for n, (_, _, url, problem) in enumerate(held) if problem is None}
    return (entry for n, entry in enumerate(held)
            if entry[3] is not None or last.get(entry[2]) == n)


def _http_url(url: str | None) -> bool:
    return url is not None and url[:8].lower().startswith(("http://", "https://"))


def records(path: str) -> Iterator[tuple[int, str | None, str | None]]:
    """(offset, target URI, problem) of each http(s) ``response`` record of a WARC file and
    of each malformed stretch (one problem for it; reading resumes at the next gzip member or
    ``WARC/`` line found after it). A wrong Content-Length costs no other record: when what
    follows a record does not parse, or its length runs past the next record, reading resumes
    at the next record start after that record's own (as warcio does)."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        gzipped = handle.read(2) == GZIP_MAGIC
        position = 0
        reported = False  # the malformed stretch being skipped has its problem already
        while position < size:
            handle.seek(position)
            reading: int | None = position  # the record a failure now would be in
            offset = last = position
            overran: int | None = None  # where the record after one too long starts
            try:
                for record in ArchiveIterator(handle, parse_http=False,
                                              max_header_len=_MAX_HEADER):
                    reading = offset = record.stream_pos
                    if gzipped and (offset < last or (offset > position and not _member_at(
                            handle, offset))):
                        yield offset, None, ("this WARC file is gzipped whole, not record by "
                                             "record: its records cannot be read back (write "
                                             "it again with one gzip member per record, e.g. "
                                             "'warcio recompress')")
                        return
                    url = record.headers.get("WARC-Target-URI")
                    length = record.content_length
                    kind = record.record_type
                    if kind == WarcRecordType.unknown and "WARC-Type" not in record.headers:
                        yield offset, url, "malformed WARC record (no WARC-Type header)"
                    elif record.consume() < length:
                        overran = _next_start(handle, offset + 1, gzipped)
                        if overran is None:
                            yield offset, url, (f"torn WARC record: the file ends inside it "
                                                f"({length} bytes announced)")
                            return
                        yield offset, url, (f"malformed WARC record: its Content-Length "
                                            f"({length}) runs past the next record")
                        break
                    elif kind == WarcRecordType.response and _http_url(url):
                        yield offset, url, None
                    reported = False
                    reading = None
                    last = offset + 1
                if overran is not None:
                    position = overran
                    continue
                if offset > position or last > position:  # a record was read: what follows it?
                    tail = _after_last(handle, offset, gzipped, size)
                    if tail is not None:
                        yield tail, None, ("torn WARC record: the file ends inside it"
                                           if _starts_record(handle, tail, gzipped)
                                           else "bytes after the last WARC record")
                return
            except (OSError, ValueError) as exc:
                if reading is None:
                    # What follows the whole record at ``offset`` is no record (its
                    # Content-Length was short): go on at the next record start after it,
                    # which is reported if it does not parse either.
                    following = _next_start(handle, offset + 1, gzipped)
                    if following is None:
                        yield offset + 1, None, f"malformed WARC record: {exc}"
                        return
                    position = following
                    continue
                if not reported:
                    yield reading, None, f"malformed WARC record: {exc}"
                    reported = True
                following = _next_start(handle, reading + 1, gzipped)
                if following is None:
                    return
                position = following


def _after_last(handle: BinaryIO, offset: int, gzipped: bool, size: int) -> int | None:
    """Where the stretch after the last whole record starts when the file holds more than
    blank lines past it (a torn record the reader passed over without a word), else None:
    ``offset`` itself when the file ends inside that record's own gzip member."""
    handle.seek(offset)
    if gzipped:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        end = offset
        while not inflater.eof and (chunk := handle.read(_READ)):
            try:
                inflater.decompress(chunk, 1)  # the output is not wanted, only the end
                while inflater.unconsumed_tail and not inflater.eof:
                    inflater.decompress(inflater.unconsumed_tail, _READ)
            except zlib.error:
                return None  # the reader judged this record; nothing more to say
            end += len(chunk)
        if not inflater.eof:
            return offset  # the file ends inside the last record's own member
        end -= len(inflater.unused_data)
    else:
        head = handle.read(_MAX_HEADER)
        blank = head.find(b"\r\n\r\n")
        length = re.search(rb"\r\ncontent-length:[ \t]*(\d+)", head[:blank], re.IGNORECASE)
        if blank < 0 or length is None:
            return None
        end = offset + blank + 4 + int(length.group(1))
        if end > size:
            return offset
    handle.seek(end)
    rest = handle.read(_READ)
    return end if rest.strip(b"\r\n") and end < size else None


def _starts_record(handle: BinaryIO, offset: int, gzipped: bool) -> bool:
    handle.seek(offset)
    head = handle.read(16)
    return head.startswith(GZIP_MAGIC if gzipped else b"WARC/")


def _member_at(handle: BinaryIO, offset: int) -> bool:
    """Whether a gzip member starts at ``offset`` (the file position is kept)."""
    here = handle.tell()
    try:
        handle.seek(offset)
        return handle.read(2) == GZIP_MAGIC
    finally:
        handle.seek(here)


def _next_start(handle: BinaryIO, start: int, gzipped: bool) -> int | None:
    """Where the next record may start after a malformed one: the next gzip member (of a
    .warc.gz) or ``WARC/`` line, or None at the end of the file."""
    marker = b"\x1f\x8b\x08" if gzipped else b"\nWARC/"
    position = start
    while True:
        handle.seek(position)
        window = handle.read(_RESYNC_WINDOW + len(marker))
        if len(window) < len(marker):
            return None
        found = window.find(marker)
        if found >= 0:
            return position + found + (0 if gzipped else 1)
        position += _RESYNC_WINDOW


class WarcRecords:
    """Reads a response record back by its locator (``PATH@OFFSET``) as a fetch result
    (see the module docstring). Keeps a few files open; picklable (it travels to shard
    processes without them)."""

    def __init__(self) -> None:
        self._files: OrderedDict[str, BinaryIO] = OrderedDict()

    def __reduce__(self) -> tuple[Any, ...]:
        return (WarcRecords, ())

    @staticmethod
    def claims(url: str) -> bool:
        return True  # a WARC run reads every item from its files

    async def fetch(self, url: str, max_bytes: int) -> FetchResult:
        path, _, offset = url.rpartition("@")
        if not path or not offset.isdigit():
            raise PipelineError("invalid_url", f"not a WARC record locator: {url[:200]}")
        return self.read(path, int(offset), max_bytes)

    def _open(self, path: str) -> BinaryIO:
        handle = self._files.pop(path, None)
        if handle is None:
            try:
                handle = open(path, "rb")  # noqa: SIM115 - kept open, closed when evicted
            except OSError as exc:
                raise PipelineError("invalid_url", f"cannot read {path}: "
                                    f"{exc.strerror or exc}") from None
            while len(self._files) >= _OPEN_FILES:
                self._files.popitem(last=False)[1].close()
        self._files[path] = handle
        return handle

    def read(self, path: str, offset: int, max_bytes: int) -> FetchResult:
        """The response record at ``offset`` of ``path``; ``PipelineError`` when it is
        malformed (``decode``), too large (``too_large``) or not a 2xx (``http_status``)."""
        try:
            return self._read(path, offset, max_bytes, decode_transfer=True)
        except _NotChunked:
            return self._read(path, offset, max_bytes, decode_transfer=False)

    def _read(self, path: str, offset: int, max_bytes: int, *,
              decode_transfer: bool) -> FetchResult:
        from fastwarc.warc import ArchiveIterator

        handle = self._open(path)
        handle.seek(offset)
        try:
            record = next(iter(ArchiveIterator(handle, parse_http=False,
                                               max_header_len=_MAX_HEADER)), None)
            if record is None or record.stream_pos != offset:
                raise PipelineError("decode", f"no WARC record at {path}@{offset}")
            url = record.headers.get("WARC-Target-URI") or f"{path}@{offset}"
            truncated = record.headers.get("WARC-Truncated")
            record.parse_http(auto_decode="transfer" if decode_transfer else "none",
                              max_header_len=_MAX_HEADER)
            http = record.http_headers
            status = http.status_code
            if not status:
                raise PipelineError("decode", "the WARC response record holds no HTTP "
                                    "response")
            raw = self._payload(record, max_bytes, url)
        except OSError as exc:
            if decode_transfer and "chunk" in str(exc).lower():
                raise _NotChunked from None  # a chunked header over a plain body: as stored
            raise PipelineError("decode", f"malformed WARC record: {exc}") from None
        if not 200 <= status < 300:
            location = http.get("Location")
            why = (f"HTTP {status} (a redirect to {location[:200]}; a WARC run follows none)"
                   if status in _REDIRECTS and location else f"HTTP {status}")
            raise FetchError("http_status", why, status=status, final_url=url, attempts=0)
        media_type, charset = parse_content_type(http.get("Content-Type"))
        body = _decoded(raw, http.get("Content-Encoding"), max_bytes, url,
                        truncated=truncated is not None)
        headers = {name.lower(): value for name, value in http.items()}
        return FetchResult(url=url, final_url=url, status=status, media_type=media_type,
                           charset=charset, body=body, headers=headers, attempts=0)

    @staticmethod
    def _payload(record: Any, max_bytes: int, url: str) -> bytes:
        """The stored payload, at most ``max_bytes`` + 1 of it (more is ``too_large``)."""
        chunks: list[bytes] = []
        size = 0
        while chunk := record.reader.read(min(_READ, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise FetchError("too_large", f"body exceeds max_bytes {max_bytes}",
                                 final_url=url, attempts=0)
        return b"".join(chunks)

    def close(self) -> None:
        while self._files:
            self._files.popitem()[1].close()


class _NotChunked(Exception):
    """A record says ``Transfer-Encoding: chunked`` but its body is stored without it."""


def _decoded(raw: bytes, coding: str | None, max_bytes: int, url: str, *,
             truncated: bool) -> bytes:
    """``raw`` undone of its Content-Encoding under the byte cap, as a fetched body is; a
    record marked ``WARC-Truncated`` keeps what decodes of its cut stream."""
    try:
        decoder = decoder_for(coding)
        if decoder is None:
            return raw
        body = decoder.feed(raw, max_bytes)
        if len(body) > max_bytes:
            raise FetchError("too_large", f"body exceeds max_bytes {max_bytes} (after "
                             "decompression)", final_url=url, attempts=0)
        if not truncated:
            decoder.finish()
        return body
    except FetchError as exc:
        if exc.kind == "too_large":
            raise
        raise PipelineError("decode", f"{exc.message} in the WARC record") from None

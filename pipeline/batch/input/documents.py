"""One sitemap or feed document, from its bytes to its links, in one synchronous call.

:func:`parse_document` is what the walk (:mod:`pipeline.batch.input.expand`) sends to a
worker process, as a page's bytes go to a handler: the batch's handler pool, under the same
time limit (``--handler-timeout``), so no document can hold up the event loop or outlive
its deadline (:func:`in_thread` is the stand-in for callers without a pool). What a
document is comes from its bytes, not from its ``Content-Type``: a gzip'd body is inflated
(within the byte cap), then it is XML (a sitemap, or a feed), JSON (a JSON Feed), a
robots.txt (by its URL) or text (a plain-text sitemap). Anything else — HTML, a gzip inside
the gzip, UTF-16, binary data, text without one URL — is said to be what it is: an error,
so its document is a record.
"""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from lxml import etree

from pipeline.batch.input.feeds import feed_links
from pipeline.batch.input.sitemaps import (
    FEED_ROOTS,
    SITEMAP_ROOTS,
    LinkKind,
    XmlLinks,
    robots_sitemaps,
    text_links,
)
from pipeline.core.errors import PipelineError
from pipeline.fetch.inflate import GZIP_MAGIC, ZlibDecoder

CHUNK = 64 * 1024  # bytes given to the XML parser at a time (what it holds between them)
_SKIPPED_PREFIX = b"\xef\xbb\xbf \t\r\n"
_SNIFFED = 1024  # bytes looked at to say what a document is
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)  # UTF-32's begin alike
_HTML_OPENINGS = (b"<!doctype html", b"<html")


@dataclass
class Parsed:
    """A document's links in document order (``"page"`` or ``"sitemap"``, the link as
    written), and the error that ended its parse, if one did (the links found before it
    stand). Crosses back from the worker process: plain, picklable values."""

    links: list[tuple[LinkKind, str]] = field(default_factory=list)
    error: PipelineError | None = None


def parse_document(body: bytes, url: str, max_bytes: int) -> Parsed:
    """The links of the document ``body`` fetched from ``url`` (its final URL), inflated to
    at most ``max_bytes``; never raises for what the bytes hold."""
    parsed = Parsed()
    try:
        _parse(body, url, max_bytes, parsed.links)
    except PipelineError as exc:
        parsed.error = exc
    return parsed


Parse = Callable[[bytes, str], Awaitable[Parsed]]


class Worker(Protocol):
    """Runs a function in a worker process under a time limit, raising ``PipelineError``
    only (:meth:`pipeline.batch.pool.ProcessRunner.call`)."""

    async def call(self, function: Callable[..., Parsed], *args: Any, what: str
                   ) -> Parsed: ...


def in_worker(worker: Worker, max_bytes: int) -> Parse:
    """:func:`parse_document` in ``worker``: a process, killed past its time limit."""
    async def parse(body: bytes, url: str) -> Parsed:
        return await worker.call(parse_document, body, url, max_bytes,
                                 what="parsing the document")

    return parse


def in_thread(max_bytes: int, timeout: float | None = None) -> Parse:
    """:func:`parse_document` in a thread, with a time limit: for callers without a process
    pool (a thread cannot be killed: past the limit its document fails and it runs on)."""
    async def parse(body: bytes, url: str) -> Parsed:
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.to_thread(parse_document, body, url, max_bytes)
        except TimeoutError:
            raise PipelineError("extract", f"parsing the document took longer than "
                                f"{timeout:g}s") from None

    return parse


def _parse(body: bytes, url: str, max_bytes: int, links: list[tuple[LinkKind, str]]) -> None:
    chunks = _inflated(body, max_bytes)
    first = next(chunks, b"")
    if (other := _not_text(first)) is not None:
        raise PipelineError("unsupported_type", f"{other}: neither a sitemap nor a feed")
    head = first.lstrip(_SKIPPED_PREFIX)[:1]
    if head == b"<":
        _xml_links(first, chunks, links)
    elif head == b"{":
        links.extend(("page", link) for link in _feed_links(_joined(first, chunks)))
    elif urlsplit(url).path.endswith("/robots.txt"):
        links.extend(("sitemap", link) for link in robots_sitemaps(_joined(first, chunks)))
    else:
        _text_links(first, chunks, links)


def _not_text(first: bytes) -> str | None:
    """What the document's first (inflated) bytes say it is when it is no text at all."""
    if first.startswith(GZIP_MAGIC):
        return "a gzip file inside the gzip file"
    head = first[:_SNIFFED]
    if head.startswith(_UTF16_BOMS):
        return "UTF-16 (or UTF-32) text, not UTF-8"
    if b"\x00" in head:
        # UTF-16 without a byte-order mark: every other byte of ASCII text is NUL
        halves = (head[0::2], head[1::2])
        if any(half.count(0) > 0.9 * len(half) for half in halves if half):
            return "UTF-16 text without a byte-order mark, not UTF-8"
        return "binary data"
    return None


def _feed_links(body: bytes) -> list[str]:
    try:
        return feed_links(body)
    except ValueError as exc:
        raise PipelineError("decode", f"neither a sitemap nor a feed: {exc}") from None


def _text_links(first: bytes, chunks: Iterator[bytes],
                links: list[tuple[LinkKind, str]]) -> None:
    """A plain-text sitemap: one absolute http(s) URL a line (sitemaps.org), other lines
    skipped; text with no URL line at all is no sitemap."""
    lines = 0
    pending = b""
    for chunk in _prepend(first, chunks):
        whole, _, pending = (pending + chunk).rpartition(b"\n")
        lines += _absolute_lines(text_links(whole), links)
    lines += _absolute_lines(text_links(pending), links)
    if lines and not links:
        raise PipelineError("unsupported_type", f"text of {lines} lines, none of them an "
                            "http(s) URL: neither a sitemap nor a feed")


def _absolute_lines(found: Iterator[str], links: list[tuple[LinkKind, str]]) -> int:
    """Add the lines that are absolute http(s) URLs to ``links``; returns how many lines."""
    count = 0
    for line in found:
        count += 1
        if line[:8].lower().startswith(("http://", "https://")):
            links.append(("page", line))
    return count


def _xml_links(first: bytes, chunks: Iterator[bytes],
               links: list[tuple[LinkKind, str]]) -> None:
    """A sitemap's links as its chunks are parsed; a feed (known by its root) is read
    whole, then given to feedparser, as is XML lxml finds ill-formed before its root said
    it was a sitemap (feedparser reads many broken feeds)."""
    parser = XmlLinks()
    read: list[bytes] = []  # kept while the document may be a feed
    try:
        for chunk in _prepend(first, chunks):
            if parser.root is None or parser.root in FEED_ROOTS:
                read.append(chunk)
                if parser.root is not None:
                    continue
            found = parser.feed(chunk)
            if parser.root is None or parser.root in FEED_ROOTS:
                continue
            if parser.root not in SITEMAP_ROOTS:
                what = "an HTML page" if parser.root.lower() == "html" else "XML"
                raise PipelineError("unsupported_type", f"{what} (its root element is "
                                    f"<{parser.root[:40]}>): neither a sitemap nor a feed")
            read.clear()
            links.extend(found)
        if parser.root in SITEMAP_ROOTS:
            links.extend(parser.close())
            return
    except etree.XMLSyntaxError as exc:
        if parser.root in SITEMAP_ROOTS:
            raise PipelineError("decode", f"not well-formed XML: {exc.msg}"[:200]) from None
        read.extend(chunks)
    body = b"".join(read)
    if body.lstrip(_SKIPPED_PREFIX)[:_SNIFFED].lower().startswith(_HTML_OPENINGS):
        raise PipelineError("unsupported_type", "an HTML page: neither a sitemap nor a feed")
    links.extend(("page", link) for link in _feed_links(body))


def _prepend(first: bytes, chunks: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from chunks


def _joined(first: bytes, chunks: Iterator[bytes]) -> bytes:
    return b"".join(_prepend(first, chunks))


def _inflated(body: bytes, cap: int) -> Iterator[bytes]:
    """The body in chunks, gunzipped when it is gzip (a ``.xml.gz`` served as
    ``application/gzip``), never more than ``cap`` bytes in all."""
    if body[:2] != GZIP_MAGIC:
        for start in range(0, len(body), CHUNK):
            yield body[start:start + CHUNK]
        return
    decoder = ZlibDecoder("gzip")
    size = 0
    for start in range(0, len(body), CHUNK // 16):
        chunk = decoder.feed(body[start:start + CHUNK // 16], cap - size)
        size += len(chunk)
        if size > cap:
            raise PipelineError("too_large", f"gzip'd sitemap exceeds max_bytes {cap} "
                                "once inflated")
        if chunk:
            yield chunk
    decoder.finish()

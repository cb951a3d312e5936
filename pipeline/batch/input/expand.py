"""Sitemaps and feeds as input: their documents fetched, their links handed out as items.

``--sitemap URL`` and ``--feed URL`` name roots; what each document is comes from its bytes
(a gzip'd body is inflated first, within the byte cap): a sitemap index's children are
fetched in turn (depth first, at most ``max_depth`` levels below the root, each document
once, so a loop ends), a robots.txt's ``Sitemap:`` lines likewise, and the links of a
``urlset``, a plain-text sitemap or a feed become items whose ``source`` is the document
they were found in. Links are resolved against their document, kept only when ``http(s)``
and through the filters, de-duplicated (64-bit hashes, about 78 bytes per URL), and end at
``max_urls``. Every document comes through the run's fetcher (caps, safety policy, per-host
politeness, robots.txt), one at a time; one that fails becomes an error record (its URL,
the error, the document that named it) and the walk goes on.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from lxml import etree

from pipeline.batch.input.feeds import feed_links
from pipeline.batch.input.items import InputItem
from pipeline.batch.input.run_input import ExpandOptions
from pipeline.batch.input.sitemaps import (
    FEED_ROOTS,
    SITEMAP_ROOTS,
    XmlLinks,
    robots_sitemaps,
    text_links,
)
from pipeline.core.errors import PipelineError, sanitize_message
from pipeline.core.models import ErrorKind
from pipeline.fetch.base import Fetcher
from pipeline.fetch.inflate import GZIP_MAGIC, ZlibDecoder
from pipeline.fetch.urls import normalize_url

CHUNK = 64 * 1024  # bytes parsed between two turns of the event loop
_ABSOLUTE = re.compile(r"https?://", re.IGNORECASE)
_SKIPPED_PREFIX = b"\xef\xbb\xbf \t\r\n"


@dataclass
class ExpandStats:
    """What an expansion did, for one line on stderr."""

    documents: int = 0
    urls: int = 0
    duplicates: int = 0
    filtered: int = 0
    not_http: int = 0
    failed: int = 0
    capped: bool = False

    def describe(self, options: ExpandOptions) -> str:
        read = f"{self.documents} sitemap/feed documents read"
        if self.failed:
            read += f" ({self.failed} could not be: see their records)"
        parts = [read, f"{self.urls} URLs"]
        for count, what in ((self.duplicates, "duplicates"), (self.filtered, "filtered out"),
                            (self.not_http, "not http(s)")):
            if count:
                parts.append(f"{count} {what}")
        if self.capped:
            parts.append(f"stopped at --max-urls {options.max_urls}")
        return "; ".join(parts)


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


@dataclass(frozen=True)
class _Walk:
    """One root's walk: the host ``--same-host`` compares with."""

    host: str


class _Capped(Exception):
    """``max_urls`` reached: the walk ends."""


class Expander:
    """Expands the roots of ``options`` through ``fetcher``; bodies (after inflating) are
    capped at ``max_bytes``."""

    def __init__(self, options: ExpandOptions, fetcher: Fetcher, max_bytes: int) -> None:
        self.options = options
        self.fetcher = fetcher
        self.max_bytes = max_bytes
        self.stats = ExpandStats()
        self._include = [re.compile(pattern) for pattern in options.include]
        self._exclude = [re.compile(pattern) for pattern in options.exclude]
        self._seen: set[int] = set()
        self._visited: set[str] = set()
        self._next = 0

    async def items(self, start: int = 0) -> AsyncGenerator[InputItem, None]:
        """Every root's items, numbered from ``start``."""
        self._next = start
        try:
            for root in self.options.roots:
                async for item in self._document(root, 0, None, _Walk(_host(root))):
                    yield item
        except _Capped:
            self.stats.capped = True

    def _number(self) -> int:
        self._next += 1
        return self._next - 1

    def _failure(self, url: str, source: str | None, kind: ErrorKind, message: str
                 ) -> InputItem:
        self.stats.failed += 1
        return InputItem(self._number(), url, message, {"source": source}, kind)

    def _page(self, link: str, document: str, walk: _Walk) -> InputItem | None:
        url = link
        if not _ABSOLUTE.match(link):  # most links are: urljoin would cost a third of the walk
            url = urljoin(document, link)
            if not _ABSOLUTE.match(url):
                self.stats.not_http += 1
                return None
        if (self._include and not any(p.search(url) for p in self._include)) \
                or any(p.search(url) for p in self._exclude) \
                or (self.options.same_host and _host(url) != walk.host):
            self.stats.filtered += 1
            return None
        key = hash(url)
        if key in self._seen:
            self.stats.duplicates += 1
            return None
        if self.options.max_urls is not None and self.stats.urls >= self.options.max_urls:
            raise _Capped
        self._seen.add(key)
        self.stats.urls += 1
        return InputItem(self._number(), url, None, {"source": document})

    async def _document(self, url: str, depth: int, parent: str | None,
                        walk: _Walk) -> AsyncIterator[InputItem]:
        """The items of one document and of the documents it names."""
        if url in self._visited:
            return  # a loop back, or a child named twice: read once
        self._visited.add(url)
        try:
            result = await self.fetcher.fetch(normalize_url(url))
        except PipelineError as exc:
            yield self._failure(url, parent, exc.kind, exc.message)
            return
        if not 200 <= result.status < 300:
            yield self._failure(url, parent, "http_status", f"HTTP {result.status}")
            return
        self.stats.documents += 1
        document = result.final_url or url
        self._visited.add(document)
        children: list[str] = []
        try:
            async for kind, link in self._links(result.body, document):
                if kind == "sitemap":
                    children.append(urljoin(document, link))
                elif (item := self._page(link, document, walk)) is not None:
                    yield item
        except PipelineError as exc:  # what was found before the failure was handed out
            yield self._failure(url, parent, exc.kind, exc.message)
        except _Capped:
            raise
        except Exception as exc:  # a parser's bug costs this document, not the run
            message = sanitize_message(f"{type(exc).__name__}: {exc}")
            yield self._failure(url, parent, "extract", message)
        for child in children:
            if depth + 1 > self.options.max_depth:
                if child not in self._visited:
                    self._visited.add(child)
                    yield self._failure(child, document, "too_large", "sitemap nested deeper "
                                        f"than --sitemap-depth {self.options.max_depth}")
                continue
            async for item in self._document(child, depth + 1, document, walk):
                yield item

    async def _links(self, body: bytes, url: str) -> AsyncIterator[tuple[str, str]]:
        """(``"page"`` or ``"sitemap"``, link) for each link of a document, as parsed."""
        chunks = _inflated(body, self.max_bytes)
        first = next(chunks, b"")
        head = first.lstrip(_SKIPPED_PREFIX)[:1]
        if head == b"<":
            async for found in self._xml_links(first, chunks):
                yield found
        elif head == b"{":
            for link in await asyncio.to_thread(feed_links, _joined(first, chunks)):
                yield "page", link
        elif urlsplit(url).path.endswith("/robots.txt"):
            for link in robots_sitemaps(_joined(first, chunks)):
                yield "sitemap", link
        else:
            pending = b""
            for chunk in _prepend(first, chunks):
                lines, _, pending = (pending + chunk).rpartition(b"\n")
                for link in text_links(lines):
                    yield "page", link
                await asyncio.sleep(0)
            for link in text_links(pending):
                yield "page", link

    async def _xml_links(self, first: bytes, chunks: Iterator[bytes]
                         ) -> AsyncIterator[tuple[str, str]]:
        """A sitemap's links as its chunks are parsed; a feed (known by its root) is read
        whole, then given to feedparser, as is XML lxml finds ill-formed before its root
        said it was a sitemap (feedparser reads many broken feeds)."""
        parser = XmlLinks()
        read: list[bytes] = []  # kept while the document may be a feed
        try:
            for chunk in _prepend(first, chunks):
                if parser.root is None or parser.root in FEED_ROOTS:
                    read.append(chunk)
                    if parser.root is not None:
                        continue
                links = parser.feed(chunk)
                if parser.root is None or parser.root in FEED_ROOTS:
                    continue
                if parser.root not in SITEMAP_ROOTS:
                    raise PipelineError("unsupported_type", "neither a sitemap nor a feed "
                                        f"(its root element is <{parser.root[:40]}>)")
                read.clear()
                for link in links:
                    yield link
                await asyncio.sleep(0)
            if parser.root in SITEMAP_ROOTS:
                for link in parser.close():
                    yield link
                return
        except etree.XMLSyntaxError as exc:
            if parser.root in SITEMAP_ROOTS:
                raise PipelineError("decode", f"not well-formed XML: {exc.msg}"[:200]) from None
            read.extend(chunks)
        try:
            feed_urls = await asyncio.to_thread(feed_links, b"".join(read))
        except ValueError as exc:
            raise PipelineError("decode", f"neither a sitemap nor a feed: {exc}") from None
        for url in feed_urls:
            yield "page", url


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


__all__ = ["ExpandStats", "Expander"]

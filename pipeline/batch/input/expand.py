"""Sitemaps and feeds as input: their documents fetched, their links handed out as items.

``--sitemap URL`` and ``--feed URL`` name roots; what each document is comes from its bytes
(a gzip'd body is inflated first, within the byte cap): a sitemap index's children are
fetched in turn (depth first, at most ``max_depth`` levels below the root, each document
once, so a loop ends), a robots.txt's ``Sitemap:`` lines likewise, and the links of a
``urlset``, a plain-text sitemap or a feed become items whose ``source`` is the document
they were found in. Links are resolved against their document, kept only when ``http(s)``
and through the filters, de-duplicated (64-bit hashes, about 78 bytes per URL), and end at
``max_urls``. Every document comes through the run's fetcher (caps, safety policy, per-host
politeness, robots.txt), one at a time, and is parsed off the event loop
(:mod:`pipeline.batch.input.documents`); one that fails becomes an error record (its URL,
the error, the document that named it) and the walk goes on.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from pipeline.batch.input.documents import Parse, in_thread
from pipeline.batch.input.items import InputItem
from pipeline.batch.input.run_input import ExpandOptions
from pipeline.core.errors import PipelineError, sanitize_message
from pipeline.core.models import ErrorKind
from pipeline.fetch.base import Fetcher
from pipeline.fetch.urls import normalize_url

_ABSOLUTE = re.compile(r"https?://", re.IGNORECASE)


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
    capped at ``max_bytes``. ``parse`` reads each document (the batch's worker pool, under
    its time limit; by default a thread).

    With ``max_urls`` N, everything the walk makes counts: it hands out at most N items —
    pages and the records of documents that failed alike — and fetches at most N +
    ``max_depth`` documents (enough for one chain from a root down to its first pages), so
    an index of indexes, however it fans out, ends.
    """

    def __init__(self, options: ExpandOptions, fetcher: Fetcher, max_bytes: int, *,
                 parse: Parse | None = None) -> None:
        self.options = options
        self.fetcher = fetcher
        self.max_bytes = max_bytes
        self.stats = ExpandStats()
        self._parse = parse or in_thread(max_bytes)
        self._include = [re.compile(pattern) for pattern in options.include]
        self._exclude = [re.compile(pattern) for pattern in options.exclude]
        self._seen: set[int] = set()
        self._visited: set[str] = set()
        self._next = 0
        self._items = 0  # handed out: pages and failures
        self._fetches = 0

    async def items(self, start: int = 0) -> AsyncGenerator[InputItem, None]:
        """Every root's items, numbered from ``start``."""
        self._next = start
        try:
            for root in self.options.roots:
                async for item in self._document(root, 0, None, _Walk(_host(root))):
                    yield item
        except _Capped:
            self.stats.capped = True

    def _count(self) -> int:
        """The next item's index, once ``max_urls`` allows one more item."""
        limit = self.options.max_urls
        if limit is not None and self._items >= limit:
            raise _Capped
        self._items += 1
        self._next += 1
        return self._next - 1

    def _failure(self, url: str, source: str | None, kind: ErrorKind, message: str
                 ) -> InputItem:
        index = self._count()
        self.stats.failed += 1
        return InputItem(index, url, message, {"source": source}, kind)

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
        index = self._count()
        self._seen.add(key)
        self.stats.urls += 1
        return InputItem(index, url, None, {"source": document})

    def _may_fetch(self) -> None:
        """Count one more document fetched, if ``max_urls`` leaves room for it."""
        limit = self.options.max_urls
        if limit is not None and self._fetches >= limit + self.options.max_depth:
            raise _Capped
        self._fetches += 1

    async def _document(self, url: str, depth: int, parent: str | None,
                        walk: _Walk) -> AsyncIterator[InputItem]:
        """The items of one document and of the documents it names."""
        if url in self._visited:
            return  # a loop back, or a child named twice: read once
        self._visited.add(url)
        self._may_fetch()
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
        try:
            parsed = await self._parse(result.body, document)
        except PipelineError as exc:  # past the time limit, or its worker died
            yield self._failure(url, parent, exc.kind, exc.message)
            return
        except Exception as exc:  # a parser's bug costs this document, not the run
            message = sanitize_message(f"{type(exc).__name__}: {exc}")
            yield self._failure(url, parent, "extract", message)
            return
        children: list[str] = []
        for kind, link in parsed.links:
            if kind == "sitemap":
                children.append(urljoin(document, link))
            elif (item := self._page(link, document, walk)) is not None:
                yield item
        if parsed.error is not None:  # what was found before the failure was handed out
            yield self._failure(url, parent, parsed.error.kind, parsed.error.message)
        for child in children:
            if depth + 1 > self.options.max_depth:
                if child not in self._visited:
                    self._visited.add(child)
                    yield self._failure(child, document, "too_large", "sitemap nested deeper "
                                        f"than --sitemap-depth {self.options.max_depth}")
                continue
            async for item in self._document(child, depth + 1, document, walk):
                yield item


__all__ = ["ExpandStats", "Expander"]

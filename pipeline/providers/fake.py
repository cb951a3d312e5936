"""In-memory providers for tests and for users who inject their own (like httpx's
``MockTransport``): pass one as ``backend=`` to :func:`pipeline.agent.kernel.web_search` /
:func:`pipeline.agent.kernel.web_extract` / :func:`pipeline.agent.crawl.web_crawl`, or
register it with a :class:`ProviderSpec`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.core.errors import PipelineError
from pipeline.core.models import ErrorInfo, ExtractOptions, Record
from pipeline.core.truncate import truncate
from pipeline.providers.base import CrawlOptions, CrawlPage, MapOptions, SearchOptions, SearchPage


class FakeSearchProvider:
    """Answers every query with ``rows`` (raw dicts, re-validated by the kernel), or raises
    ``error``. ``calls`` records ``(query, options)``."""

    def __init__(self, rows: Sequence[Any] = (), *, name: str = "fake",
                 error: PipelineError | None = None, warnings: Sequence[str] = (),
                 configured: bool = True) -> None:
        self.name = name
        self.rows = copy.deepcopy(list(rows))
        self.error = error
        self.warnings = list(warnings)
        self.configured = configured
        self.calls: list[tuple[str, SearchOptions]] = []

    def is_configured(self) -> bool:
        return self.configured

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        self.calls.append((query, options))
        if self.error is not None:
            raise self.error
        return SearchPage(rows=copy.deepcopy(self.rows), warnings=list(self.warnings))


class FakeExtractProvider:
    """Answers from ``pages`` (``{url: content | ErrorInfo}``); unknown URLs fail with
    ``network``; ``error`` makes the whole provider fail. ``calls`` records URL lists."""

    def __init__(self, pages: Mapping[str, str | ErrorInfo] | None = None, *,
                 name: str = "fake", error: PipelineError | None = None,
                 configured: bool = True) -> None:
        self.name = name
        self.pages = dict(pages or {})
        self.error = error
        self.configured = configured
        self.calls: list[list[str]] = []

    def is_configured(self) -> bool:
        return self.configured

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        self.calls.append(list(urls))
        if self.error is not None:
            raise self.error
        return [self._record(url, options) for url in urls]

    def _record(self, url: str, options: ExtractOptions) -> Record:
        page = self.pages.get(url)
        if page is None:
            page = ErrorInfo(kind="network", message=f"fake: no page for {url}")
        if isinstance(page, ErrorInfo):
            return Record.failure(url, page, handler=self.name)
        cut = truncate(page, options.max_chars, markdown=options.format == "markdown")
        return Record(url=url, ok=True, final_url=url, handler=self.name, content=cut.text,
                      format=options.format, truncated=cut.truncated,
                      next_offset=cut.next_offset, chars=len(cut.text))

    async def __aenter__(self) -> FakeExtractProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


class FakeCrawlProvider:
    """A crawl over an in-memory site: ``site`` maps a URL to ``(markdown, [links])`` (or an
    :class:`ErrorInfo` for a page that fails). Breadth-first from the start URL, link hops
    counted as depth, at most ``max_pages`` pages (``map``: ``limit`` URLs); URLs outside
    ``site`` count as ``out_of_scope`` skips. ``error`` makes the whole provider fail;
    ``calls`` records ``(kind, url, options)``."""

    def __init__(self, site: Mapping[str, tuple[str, Sequence[str]] | ErrorInfo] | None = None,
                 *, name: str = "fake", error: PipelineError | None = None,
                 configured: bool = True, warnings: Sequence[str] = ()) -> None:
        self.name = name
        self.site = dict(site or {})
        self.error = error
        self.configured = configured
        self.warnings = list(warnings)
        self.calls: list[tuple[str, str, CrawlOptions | MapOptions]] = []

    def is_configured(self) -> bool:
        return self.configured

    def _walk(self, url: str, budget: int, max_depth: int) -> tuple[list[dict[str, Any]],
                                                                     dict[str, int], int]:
        order: list[dict[str, Any]] = []
        skipped: dict[str, int] = {}
        seen = {url}
        queue: list[tuple[str, int, str | None]] = [(url, 0, None)]
        while queue:
            current, depth, parent = queue.pop(0)
            if current not in self.site:
                skipped["out_of_scope"] = skipped.get("out_of_scope", 0) + 1
                continue
            if len(order) == budget:
                return order, skipped, len(queue) + 1
            order.append({"url": current, "depth": depth, "parent": parent,
                          "via": "start" if parent is None else "link"})
            page = self.site[current]
            if isinstance(page, ErrorInfo):
                continue
            for link in page[1]:
                if link in seen:
                    continue
                seen.add(link)
                if depth + 1 > max_depth:
                    skipped["depth"] = skipped.get("depth", 0) + 1
                    continue
                queue.append((link, depth + 1, current))
        return order, skipped, 0

    async def crawl(self, url: str, options: CrawlOptions) -> CrawlPage:
        self.calls.append(("crawl", url, options))
        if self.error is not None:
            raise self.error
        order, skipped, left = self._walk(url, options.max_pages, options.max_depth)
        for row in order:
            page = self.site[row["url"]]
            if isinstance(page, ErrorInfo):
                row["error"] = page.message
            else:
                row.update(content=page[0], title=row["url"].rsplit("/", 1)[-1] or row["url"])
        return CrawlPage(pages=order, skipped=skipped, left=left, warnings=list(self.warnings))

    async def map(self, url: str, options: MapOptions) -> CrawlPage:
        self.calls.append(("map", url, options))
        if self.error is not None:
            raise self.error
        order, skipped, left = self._walk(url, options.limit, options.max_depth)
        return CrawlPage(pages=order, skipped=skipped, left=left, warnings=list(self.warnings))

    async def __aenter__(self) -> FakeCrawlProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

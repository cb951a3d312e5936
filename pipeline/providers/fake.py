"""In-memory providers for tests and for users who inject their own (like httpx's
``MockTransport``): pass one as ``backend=`` to :func:`pipeline.agent.kernel.web_search` /
:func:`pipeline.agent.kernel.web_extract`, or register it with a :class:`ProviderSpec`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.core.errors import PipelineError
from pipeline.core.models import ErrorInfo, ExtractOptions, Record
from pipeline.core.truncate import truncate
from pipeline.providers.base import SearchOptions, SearchPage


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

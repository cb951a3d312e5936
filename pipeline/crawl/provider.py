"""The native crawler as a crawl provider (``crawl`` capability, name ``native``): what
:func:`pipeline.web_crawl` and :func:`pipeline.web_map` use by default.

It runs :func:`pipeline.crawl.run.crawl` / :func:`~pipeline.crawl.run.map_site` on the start
page's origin with the call's page budget, depth and globs, each page cut to the call's
character budget (the kernel then fits all pages into it). It stops itself at the call's
deadline and answers with the pages read so far. Pages are extracted in this process
(:class:`~pipeline.extract.runners.InlineRunner`), as ``web_extract`` does: no handler pool
is started for an agent's call. Given the caller's shared fetcher
(:meth:`share_fetcher`, as :class:`~pipeline.agent.runtime.SharedRuntime` does), its
requests spend that fetcher's per-host budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pipeline.core.errors import PipelineError, UsageError
from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.crawl.ledger import Ledger
from pipeline.crawl.run import CrawlOptions as NativeOptions
from pipeline.crawl.run import crawl
from pipeline.extract.runners import InlineRunner
from pipeline.fetch.base import Fetcher
from pipeline.providers.base import CrawlOptions, CrawlPage, MapOptions


class NativeCrawlProvider:
    """The crawler behind the :class:`~pipeline.providers.base.CrawlProvider` port."""

    name = "native"

    def __init__(self, settings: Settings, env: Mapping[str, str] | None = None) -> None:
        # the agent's crawl is quiet and fast to start: no progress bar on anyone's stderr
        self.settings = settings.model_copy(update={"quiet": True})
        self._fetcher: Fetcher | None = None

    def is_configured(self) -> bool:
        return True

    def share_fetcher(self, fetcher: Fetcher) -> None:
        """Fetch through ``fetcher`` (the caller's), not one of our own."""
        self._fetcher = fetcher

    async def crawl(self, url: str, options: CrawlOptions) -> CrawlPage:
        settings = self.settings.model_copy(update={"max_chars": options.max_chars})
        return await self._run(url, options, options.max_pages, settings, content=True)

    async def map(self, url: str, options: MapOptions) -> CrawlPage:
        return await self._run(url, options, options.limit, self.settings, content=False)

    async def _run(self, url: str, options: CrawlOptions | MapOptions, budget: int,
                   settings: Settings, *, content: bool) -> CrawlPage:
        native = NativeOptions(include=tuple(options.include), exclude=tuple(options.exclude),
                               max_depth=options.max_depth, max_pages=budget)
        records: list[Record] = []
        ledger = Ledger()
        warnings: list[str] = []
        left: int | None = None
        try:
            async with asyncio.timeout(options.deadline):
                # in this process, as web_extract: an agent's call never waits for the
                # batch command's handler pool to start
                result = await crawl([url], native, settings, on_record=records.append,
                                     ledger=ledger, fetcher=self._fetcher,
                                     runner=InlineRunner(settings.handler_timeout))
            left = result.left if result.budget_ended else 0
        except TimeoutError:
            warnings.append(f"deadline of {options.deadline:.0f} s reached: the crawl was "
                            f"stopped with {len(records)} page(s) read")
        except UsageError as exc:  # a glob the crawler cannot parse: the caller's mistake
            raise PipelineError("invalid_request", str(exc)) from None
        return CrawlPage(pages=[row(record, content) for record in records],
                         skipped=dict(ledger.counts), left=left, warnings=warnings)


def row(record: Record, content: bool) -> dict[str, Any]:
    """One crawled record as the port's page row."""
    return {"url": record.final_url or record.url, "final_url": record.final_url,
            "title": record.title, "content": record.content if content else None,
            "depth": record.depth, "parent": record.parent, "via": record.via,
            "error": record.error.message if record.error else None}

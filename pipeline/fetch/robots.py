"""Optional robots.txt support (``--robots``): protego rules cached per origin, bounded.

robots.txt is fetched through the fetcher's own request path, so the safety policy, redirects
limits, the per-host gate and a byte cap apply to it too. Outcomes follow RFC 9309: a 4xx
means no rules; a 5xx or 429 means "unreachable", so everything is disallowed; a robots.txt
we cannot get at all (network trouble, too large) imposes nothing, and the page fetch that
follows reports its own error.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING

from protego import Protego
from yarl import URL

from pipeline.fetch.base import FetchError

if TYPE_CHECKING:
    from pipeline.fetch.client import HttpFetcher

ROBOTS_MAX_BYTES = 512 * 1024


class _Rules:
    """What robots.txt says for one origin."""

    def __init__(self, parser: Protego | None = None, *, disallow_all: bool = False) -> None:
        self.parser = parser
        self.disallow_all = disallow_all

    def allows(self, url: str, user_agent: str) -> bool:
        if self.disallow_all:
            return False
        return self.parser is None or self.parser.can_fetch(url, user_agent)

    def crawl_delay(self, user_agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(user_agent)
        return float(delay) if delay else None


class RobotsCache:
    """Check URLs against their origin's robots.txt; ``check`` raises a ``robots`` error."""

    def __init__(self, fetcher: HttpFetcher, max_origins: int = 4096) -> None:
        self.fetcher = fetcher
        self.max_origins = max_origins
        self._rules: OrderedDict[str, asyncio.Task[_Rules]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._rules)

    async def check(self, url: URL) -> None:
        """Raise ``FetchError('robots')`` when robots.txt disallows ``url``; apply Crawl-delay."""
        settings = self.fetcher.settings
        rules = await self._rules_for(url)
        if not rules.allows(str(url), settings.user_agent):
            raise FetchError("robots", f"disallowed by robots.txt of {url.raw_host}")
        delay = rules.crawl_delay(settings.user_agent)
        if delay:
            self.fetcher.gate.set_interval(f"{url.raw_host}:{url.port}",
                                           min(delay, settings.retry_after_cap))

    async def _rules_for(self, url: URL) -> _Rules:
        origin = f"{url.scheme}://{url.raw_host}:{url.port}"
        task = self._rules.get(origin)
        if task is None:
            # A task, shielded: one caller hitting its deadline must not cancel the lookup
            # the other callers of the same origin wait for.
            task = self._rules[origin] = asyncio.ensure_future(self._load(url))
            while len(self._rules) > self.max_origins:
                self._rules.popitem(last=False)
        else:
            self._rules.move_to_end(origin)
        return await asyncio.shield(task)

    async def _load(self, url: URL) -> _Rules:
        robots_url = url.with_path("/robots.txt")
        max_bytes = min(ROBOTS_MAX_BYTES, self.fetcher.settings.max_bytes)
        try:
            answer = await self.fetcher.exchange("GET", robots_url, max_bytes=max_bytes)
        except FetchError:
            return _Rules()
        if answer.status == 429 or answer.status >= 500:
            return _Rules(disallow_all=True)
        if not 200 <= answer.status < 300 or answer.body is None:
            return _Rules()
        return _Rules(Protego.parse(answer.body.decode("utf-8", errors="replace")))

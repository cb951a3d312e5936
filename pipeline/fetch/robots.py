"""Optional robots.txt support (``--robots``): protego rules cached per origin, bounded.

The cache is given what it needs, not the fetcher: ``fetch_robots(url, max_bytes)`` gets a
robots.txt through the fetcher's own request path (so the safety policy, redirect limits,
the per-host gate and a byte cap apply to it too) and ``set_crawl_delay(url, seconds)`` paces
a host. Outcomes follow RFC 9309: a 4xx
means no rules; a 5xx or 429 means "unreachable", so everything is disallowed; a robots.txt
we cannot get at all (network trouble, too large) imposes nothing, and the page fetch that
follows reports its own error.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from protego import Protego
from yarl import URL

from pipeline.fetch.base import FetchError

ROBOTS_MAX_BYTES = 512 * 1024

# (status, body) of a GET of a robots.txt URL, its body capped at the given bytes (None
# unless the answer is a 2xx); raises FetchError when there is no answer at all.
RobotsFetch = Callable[[URL, int], Awaitable[tuple[int, bytes | None]]]


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

    def __init__(self, fetch_robots: RobotsFetch, set_crawl_delay: Callable[[URL, float], None],
                 *, user_agent: str, max_bytes: int = ROBOTS_MAX_BYTES,
                 max_origins: int = 4096) -> None:
        self.fetch_robots = fetch_robots
        self.set_crawl_delay = set_crawl_delay
        self.user_agent = user_agent
        self.max_bytes = min(ROBOTS_MAX_BYTES, max_bytes)
        self.max_origins = max_origins
        self._rules: OrderedDict[str, asyncio.Task[_Rules]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._rules)

    async def check(self, url: URL) -> None:
        """Raise ``FetchError('robots')`` when robots.txt disallows ``url``; apply Crawl-delay."""
        rules = await self._rules_for(url)
        if not rules.allows(str(url), self.user_agent):
            raise FetchError("robots", f"disallowed by robots.txt of {url.raw_host}")
        delay = rules.crawl_delay(self.user_agent)
        if delay:
            self.set_crawl_delay(url, delay)

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
        try:
            status, body = await self.fetch_robots(robots_url, self.max_bytes)
        except FetchError:
            return _Rules()
        if status == 429 or status >= 500:
            return _Rules(disallow_all=True)
        if not 200 <= status < 300 or body is None:
            return _Rules()
        return _Rules(Protego.parse(body.decode("utf-8", errors="replace")))

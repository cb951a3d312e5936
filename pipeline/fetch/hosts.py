"""Per-host politeness: concurrency, request rate, and slow-downs asked for by the host.

Each host has its own semaphore, rate limiter and "not before" time, so a slow or throttled
host only delays its own requests. Idle entries are evicted past ``max_hosts`` (least recently
used first), so memory stays bounded however many hosts a run meets.
"""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from collections.abc import Callable

from aiolimiter import AsyncLimiter


def _limiter(rate: float) -> AsyncLimiter:
    """``rate`` requests per second, bursts of at most ``max(1, rate)``."""
    burst = max(1.0, rate)
    return AsyncLimiter(burst, burst / rate)


class HostThrottled(Exception):
    """The host asked for a pause (429/Retry-After) that ends after the caller's deadline."""

    def __init__(self, host: str, wait: float) -> None:
        super().__init__(f"{host} throttled for {wait:.1f} s")
        self.host = host
        self.wait = wait


class _Host:
    __slots__ = ("interval", "limiter", "not_before", "semaphore", "users")

    def __init__(self, per_host: int, rate: float) -> None:
        self.semaphore = asyncio.Semaphore(per_host)
        # rate=inf: no limiter at all (only the per-host concurrency and host slow-downs)
        self.limiter: AsyncLimiter | None = _limiter(rate) if math.isfinite(rate) else None
        self.interval = 1.0 / rate
        self.not_before = 0.0  # loop time before which no request may start
        self.users = 0  # tasks holding or waiting for this entry


class _Admission:
    """``async with gate.admit(host)``: a class, not a generator context manager, because
    it runs for every URL."""

    __slots__ = ("entry", "gate", "host")

    def __init__(self, gate: HostGate, host: str) -> None:
        self.gate = gate
        self.host = host
        self.entry: _Host | None = None

    async def __aenter__(self) -> None:
        entry = self.entry = self.gate._entry(self.host)
        entry.users += 1
        try:
            await entry.semaphore.acquire()
        except BaseException:
            entry.users -= 1
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        assert self.entry is not None
        self.entry.semaphore.release()
        self.entry.users -= 1


class _RequestPacing:
    """``async with gate.slot(host, deadline, hold)``: paces every request to a host."""

    __slots__ = ("deadline", "entry", "gate", "hold", "host")

    def __init__(self, gate: HostGate, host: str, deadline: float | None,
                 hold: Callable[[float], float] | None) -> None:
        self.gate = gate
        self.host = host
        self.deadline = deadline
        self.hold = hold
        self.entry: _Host | None = None

    async def __aenter__(self) -> None:
        entry = self.entry = self.gate._entry(self.host)
        entry.users += 1
        try:
            if entry.not_before > 0:
                loop = asyncio.get_running_loop()
                while (delay := entry.not_before - loop.time()) > 0:
                    deadline = self.deadline if self.hold is None else self.hold(delay)
                    if deadline is not None and entry.not_before > deadline:
                        raise HostThrottled(self.host, delay)
                    await asyncio.sleep(delay)
            if entry.limiter is not None:
                await entry.limiter.acquire()
        except BaseException:
            entry.users -= 1
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        assert self.entry is not None
        self.entry.users -= 1


class HostGate:
    """Per-host admission (``admit``: URLs in flight) and pacing (``slot``: each request)."""

    def __init__(self, per_host: int, rate: float, max_hosts: int = 4096) -> None:
        self.per_host = per_host
        self.rate = rate
        self.max_hosts = max_hosts
        self._hosts: OrderedDict[str, _Host] = OrderedDict()

    def __len__(self) -> int:
        return len(self._hosts)

    def __contains__(self, host: object) -> bool:
        return host in self._hosts

    def _entry(self, host: str) -> _Host:
        entry = self._hosts.get(host)
        if entry is None:
            entry = self._hosts[host] = _Host(self.per_host, self.rate)
            self._evict()
        else:
            self._hosts.move_to_end(host)
        return entry

    def _evict(self) -> None:
        now = asyncio.get_running_loop().time()
        excess = len(self._hosts) - self.max_hosts
        if excess <= 0:
            return
        victims: list[str] = []
        for host, entry in self._hosts.items():  # oldest first; busy or throttled ones stay
            if entry.users == 0 and entry.not_before <= now:
                victims.append(host)
                if len(victims) == excess:
                    break
        for host in victims:
            del self._hosts[host]

    def admit(self, host: str) -> _Admission:
        """Hold one of the ``per_host`` places of ``host`` for a whole URL (``async with``).

        Time spent queueing here is politeness, not the URL's fault: callers start the URL's
        deadline only once admitted, so a long list for one host never times out in the queue.
        """
        return _Admission(self, host)

    def slot(self, host: str, deadline: float | None = None,
             hold: Callable[[float], float] | None = None) -> _RequestPacing:
        """Pace one request to ``host`` (``async with``): wait out any slow-down, then the
        rate limiter.

        Raise :class:`HostThrottled` rather than wait for a slow-down ending after
        ``deadline`` (loop time). With ``hold``, the deadline is the caller's to move: before
        each wait for a slow-down, ``hold(seconds)`` is told how long it will be and returns
        the deadline then in force (a URL waiting out its host's pause has not started, so
        its own deadline may stand still meanwhile).
        """
        return _RequestPacing(self, host, deadline, hold)

    def slow_down(self, host: str, seconds: float) -> None:
        """Start no request to ``host`` for ``seconds`` (a 429 or 503 with Retry-After)."""
        entry = self._entry(host)
        entry.not_before = max(entry.not_before, asyncio.get_running_loop().time() + seconds)

    def set_interval(self, host: str, seconds: float) -> None:
        """Space requests to ``host`` at least ``seconds`` apart (robots.txt Crawl-delay)."""
        entry = self._entry(host)
        if seconds > entry.interval:
            entry.interval = seconds
            entry.limiter = AsyncLimiter(1, seconds)

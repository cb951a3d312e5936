"""The batch engine's per-host queue: which input line may start now.

The fetcher's host gate admits ``per_host`` requests per host; lines beyond that would sit in
the gate holding one of the engine's global places while other hosts idle. The host queue
keeps them back instead, in a bounded look-ahead, and hands them out again — oldest line of
the host first — as soon as their host has room. Every operation is O(1) amortised.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")

_AUTHORITY = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://(?:[^/?#@\\]*@)?([^/?#\\]*)")
_DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def host_key(url: str) -> str | None:
    """``host:port`` of a URL line (lower-case, default port filled in, as the host gate
    counts), or None when the line has no recognisable authority (it is not held back)."""
    match = _AUTHORITY.match(url)
    if match is None or not match.group(2):
        return None
    authority = match.group(2).lower()
    if authority.endswith("]") or ":" not in authority:
        authority += _DEFAULT_PORTS.get(match.group(1).lower(), "")
    return authority


class HostQueue(Generic[T]):
    """Lines in flight per host, and lines waiting for their host (at most ``capacity``).

    ``offer`` a new line: it may start at once, or it waits. ``done`` when a started line
    finishes. ``take`` the next waiting line whose host has room (it then counts as started).
    """

    def __init__(self, per_host: int, capacity: int) -> None:
        self.per_host = per_host
        self.capacity = capacity
        self.waiting = 0
        self._running: dict[str, int] = {}
        self._held: dict[str, deque[T]] = {}
        # Hosts that may have a waiting line and room; stale entries are skipped in take().
        self._ready: deque[str] = deque()

    @property
    def full(self) -> bool:
        """No more lines can be held back."""
        return self.waiting >= self.capacity

    def offer(self, key: str | None, item: T) -> bool:
        """True: ``item`` starts now (counted). False: it waits for its host."""
        if key is None:
            return True
        running = self._running.get(key, 0)
        if running < self.per_host and key not in self._held:
            self._running[key] = running + 1
            return True
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = deque()
        held.append(item)
        self.waiting += 1
        return False

    def done(self, key: str | None) -> None:
        """A started line of host ``key`` finished."""
        if key is None:
            return
        running = self._running[key] - 1
        if running:
            self._running[key] = running
        else:
            del self._running[key]
        if key in self._held:
            self._ready.append(key)

    def take(self) -> T | None:
        """The oldest waiting line of a host with room (now counted as started), if any."""
        while self._ready:
            key = self._ready.popleft()
            held = self._held.get(key)
            running = self._running.get(key, 0)
            if held is None or running >= self.per_host:
                continue
            item = held.popleft()
            self.waiting -= 1
            self._running[key] = running + 1
            if not held:
                del self._held[key]
            elif running + 1 < self.per_host:
                self._ready.append(key)
            return item
        return None

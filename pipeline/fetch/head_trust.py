"""When the HEAD guard is worth its round trip, per host.

A HEAD before every GET costs a request (of the host's rate budget) and a round trip per URL.
What it buys is refusing an oversized or binary URL before the host starts sending the body.
The GET's own headers are checked the same way before any body is read, so skipping HEAD
only risks the bytes already in flight when a refused GET is dropped. So: HEAD a host's URLs
until ``trust_after`` HEADs in a row have found nothing to refuse, then GET alone; the first
refusal (by HEAD or by a GET's headers or byte cap) starts the count again.
"""

from __future__ import annotations

from collections import OrderedDict

DEFAULT_MAX_HOSTS = 4096


class HeadTrust:
    """Counts clean HEADs per host (least recently used hosts forgotten past ``max_hosts``)."""

    def __init__(self, trust_after: int, max_hosts: int = DEFAULT_MAX_HOSTS) -> None:
        self.trust_after = trust_after
        self._max_hosts = max_hosts
        self._clean: OrderedDict[str, int] = OrderedDict()

    def wanted(self, host: str) -> bool:
        """Whether the next URL of ``host`` should be HEADed first."""
        return self.trust_after == 0 or self._clean.get(host, 0) < self.trust_after

    def passed(self, host: str) -> None:
        """A HEAD of ``host`` answered 2xx and announced nothing to refuse."""
        self._clean[host] = self._clean.get(host, 0) + 1
        self._clean.move_to_end(host)
        if len(self._clean) > self._max_hosts:
            self._clean.popitem(last=False)

    def refused(self, host: str) -> None:
        """Something of ``host`` was refused as too large or binary: HEAD it again."""
        self._clean.pop(host, None)

"""When the HEAD guard is worth its round trip, per host.

A HEAD before every GET costs a request (of the host's rate budget) and a round trip per URL.
What it buys is refusing an oversized or binary URL before the host starts sending the body.
The GET's own headers are checked the same way before any body is read, so skipping HEAD
only risks the bytes already in flight when a refused GET is dropped. So: HEAD a host's URLs
until ``trust_after`` HEADs in a row have found nothing to refuse, then GET alone; the first
refusal (by HEAD or by a GET's headers or byte cap) starts the count again. A HEAD that
fails or stalls (no answer in time, a broken connection, 405/501) is evidence that the host
does not do HEAD: from then on its URLs get the GET alone, whatever ``trust_after`` says.

A burst of one host's URLs (say 256 at once) sends only the HEADs that could still earn the
host's trust: the other URLs wait for those probes' verdict, about one HEAD's round trip, as
long as their own HEAD would have taken. Then they either GET alone or become probes.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

DEFAULT_MAX_HOSTS = 4096


class HeadTrust:
    """Counts clean HEADs per host (least recently used hosts forgotten past ``max_hosts``),
    the HEADs in flight (probes) that could add to the count, and the hosts whose HEADs
    failed."""

    def __init__(self, trust_after: int, max_hosts: int = DEFAULT_MAX_HOSTS) -> None:
        self.trust_after = trust_after
        self._max_hosts = max_hosts
        self._clean: OrderedDict[str, int] = OrderedDict()
        self._headless: OrderedDict[str, None] = OrderedDict()  # hosts whose HEAD failed
        self._probes: dict[str, int] = {}  # hosts with probes in flight only
        self._verdicts: dict[str, asyncio.Event] = {}  # set when a probe of the host ends

    def wanted(self, host: str) -> bool:
        """Whether ``host`` is not trusted yet (its URLs should be HEADed first)."""
        if host in self._headless:
            return False
        return self.trust_after == 0 or self._clean.get(host, 0) < self.trust_after

    async def claim(self, host: str) -> bool:
        """Whether the next URL of ``host`` sends a HEAD first. True makes it a probe, whose
        outcome must be reported with :meth:`probed`. Waits while the probes in flight are
        enough to earn the host's trust."""
        while self.wanted(host):
            probes = self._probes.get(host, 0)
            if self.trust_after == 0 or self._clean.get(host, 0) + probes < self.trust_after:
                self._probes[host] = probes + 1
                return True
            verdict = self._verdicts.get(host)
            if verdict is None:
                verdict = self._verdicts[host] = asyncio.Event()
            await verdict.wait()
        return False

    def probed(self, host: str, clean: bool, *, failed: bool = False) -> None:
        """A probe of ``host`` ended: ``clean`` when its HEAD answered 2xx with nothing to
        refuse, ``failed`` when it failed or stalled (see :meth:`failed`). The URLs waiting
        on the host's probes look again."""
        probes = self._probes.pop(host, 0) - 1
        if probes > 0:
            self._probes[host] = probes
        if clean:
            self.passed(host)
        if failed:
            self.failed(host)
        if (verdict := self._verdicts.pop(host, None)) is not None:
            verdict.set()

    def passed(self, host: str) -> None:
        """A HEAD of ``host`` answered 2xx and announced nothing to refuse."""
        self._clean[host] = self._clean.get(host, 0) + 1
        self._clean.move_to_end(host)
        if len(self._clean) > self._max_hosts:
            self._clean.popitem(last=False)

    def failed(self, host: str) -> None:
        """A HEAD of ``host`` failed or stalled: the host is taken as not doing HEAD."""
        self._headless[host] = None
        self._headless.move_to_end(host)
        if len(self._headless) > self._max_hosts:
            self._headless.popitem(last=False)

    def refused(self, host: str) -> None:
        """Something of ``host`` was refused as too large or binary: HEAD it again."""
        self._clean.pop(host, None)

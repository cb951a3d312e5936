"""The exchange between the shards of a sharded crawl: URLs handed to the shard that owns
their host, one page budget for them all, and the crawl's end.

A shard sees the exchange through the :class:`Exchange` port. Its contract:

- ``send(shard, handoff)`` hands a URL (or an alias, or a scope addition) to another
  shard; it never blocks, and every handoff sent reaches its shard exactly once, in the
  order sent (``on_mail`` there, in that shard's event loop).
- ``await reserve(n)`` takes up to ``n`` places of the global page budget (``--max-pages``):
  0 when none is left now. A place taken is the shard's until it gives it back.
- ``await idle(sent, received, give_back, blocked)`` says the shard has nothing to do: every
  handoff it sent is counted in ``sent``, every handoff it received was judged and counted in
  ``received``, ``give_back`` places it holds unused go back to the budget, and ``blocked``
  says it has URLs waiting for places. It returns True when the crawl is over (every shard
  idle, every handoff received and judged), False when the shard is woken because places
  were given back meanwhile. Mail that arrives while idle comes through ``on_mail`` as ever
  (the shard then stops waiting: it cancels the call; its report is stale once mail came).
- ``close()`` after the shard's run.

The logic is :class:`Hub` (the coordinator: pure bookkeeping, no I/O); the transports carry
its messages: :class:`LocalHub` in one event loop (the fake the tests drive several crawls
through), the driver's queues of ``--processes`` (:mod:`pipeline.crawl.processes`) and a Ray
actor (:mod:`pipeline.crawl.ray_crawl`). All of them use :class:`MessageExchange` as the
shard's side: messages out through a ``put`` callable, messages in through
:meth:`MessageExchange.deliver`. Termination is decided on counts (what each shard reports
it sent and received, against what the hub saw posted and delivered), so a transport may
reorder one shard's messages to the hub without ending a crawl early.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, Protocol

Kind = Literal["url", "alias", "scope", "nofollow"]
BROADCAST = -1  # a handoff for every other shard (a scope addition)


class Handoff(NamedTuple):
    """What one shard hands another: a URL found (``url``, with its depth, parent and how it
    was found), an ``alias`` of a page fetched, a ``scope`` addition (where a start page
    led) or a ``nofollow`` link. A tuple: it crosses processes as it is."""

    kind: Kind
    url: str
    depth: int = 0
    parent: str | None = None
    via: str = "link"


# Messages. To the hub: (kind, shard, payload); kinds "post" (target, handoffs), "reserve"
# (wanted), "idle" (sent, received, give_back, blocked). To a shard: (kind, payload); kinds
# "mail" (handoffs), "grant" (places), "wake" and "done" (None).
ToHub = tuple[str, int, Any]
ToShard = tuple[str, Any]
HUB_KINDS = frozenset({"post", "reserve", "idle"})


class Exchange(Protocol):
    """One shard's side of the exchange (the module's contract)."""

    on_mail: Callable[[Sequence[Handoff]], None]  # set by the shard: handoffs that came

    def send(self, shard: int, handoff: Handoff) -> None:
        """Hand ``handoff`` to ``shard`` (:data:`BROADCAST`: every other shard)."""
        ...

    async def reserve(self, wanted: int) -> int:
        """Take up to ``wanted`` places of the page budget; how many were taken."""
        ...

    async def idle(self, sent: int, received: int, give_back: int, blocked: bool) -> bool:
        """Nothing to do: True when the crawl is over, False when woken."""
        ...

    def close(self) -> None:
        """The shard's run is over."""
        ...


class Hub:
    """The coordinator's bookkeeping: routes handoffs, keeps the page budget and decides the
    end. Each call returns the messages to send, as (shard, message)."""

    def __init__(self, shards: int, max_pages: int, used: int = 0) -> None:
        self.shards = shards
        self.left = max(0, max_pages - used)  # places of the budget not taken
        self.posted = [0] * shards  # handoffs the hub got from each shard
        self.delivered = [0] * shards  # handoffs the hub passed to each shard
        self.reports: dict[int, tuple[int, int, bool]] = {}  # idle: sent, received, blocked
        self.done = False

    def handle(self, kind: str, shard: int, payload: Any) -> list[tuple[int, ToShard]]:
        """One message from ``shard``: the messages it causes."""
        if kind == "post":
            target, handoffs = payload
            return self.post(shard, target, handoffs)
        if kind == "reserve":
            return [(shard, ("grant", self.reserve(payload)))]
        if kind == "idle":
            return self.idle(shard, *payload)
        raise ValueError(f"not a message for the hub: {kind!r}")

    def post(self, sender: int, target: int, handoffs: Sequence[Handoff]
             ) -> list[tuple[int, ToShard]]:
        targets = ([shard for shard in range(self.shards) if shard != sender]
                   if target == BROADCAST else [target])
        out: list[tuple[int, ToShard]] = []
        for shard in targets:
            self.delivered[shard] += len(handoffs)
            self.reports.pop(shard, None)  # it has work again
            out.append((shard, ("mail", list(handoffs))))
        # a broadcast counts once per shard reached (so does the sender's own count)
        self.posted[sender] += len(handoffs) * len(targets)
        return out + self._end()

    def reserve(self, wanted: int) -> int:
        granted = min(max(0, wanted), self.left)
        self.left -= granted
        return granted

    def idle(self, shard: int, sent: int, received: int, give_back: int,
             blocked: bool) -> list[tuple[int, ToShard]]:
        self.left += give_back
        self.reports[shard] = (sent, received, blocked)
        out: list[tuple[int, ToShard]] = []
        if self.left:  # places came back: wake the shards waiting for them
            for waiting, (_, _, stuck) in list(self.reports.items()):
                if stuck:
                    del self.reports[waiting]
                    out.append((waiting, ("wake", None)))
        return out + self._end()

    def _end(self) -> list[tuple[int, ToShard]]:
        """Every shard idle, and its counts agree with the hub's: the crawl is over."""
        if self.done or len(self.reports) < self.shards:
            return []
        for shard, (sent, received, _) in self.reports.items():
            if sent != self.posted[shard] or received != self.delivered[shard]:
                return []  # a handoff is still on its way
        self.done = True
        return [(shard, ("done", None)) for shard in range(self.shards)]


class MessageExchange:
    """A shard's side of the exchange over messages: ``put`` sends one to the hub, and the
    transport calls :meth:`deliver` (in the shard's event loop) with each that comes back.
    Handoffs to one shard sent in one turn of the event loop go as one message."""

    def __init__(self, shard: int, put: Callable[[ToHub], None]) -> None:
        self.shard = shard
        self._put = put
        self.on_mail: Callable[[Sequence[Handoff]], None] = lambda handoffs: None
        self._outgoing: dict[int, list[Handoff]] = {}
        self._flushing = False
        self._grant: asyncio.Future[int] | None = None
        self._waking: asyncio.Future[bool] | None = None
        self.done = False

    def send(self, shard: int, handoff: Handoff) -> None:
        self._outgoing.setdefault(shard, []).append(handoff)
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Post what was sent (before any other message: the hub counts them first)."""
        self._flushing = False
        outgoing, self._outgoing = self._outgoing, {}
        for target, handoffs in outgoing.items():
            self._put(("post", self.shard, (target, handoffs)))

    async def reserve(self, wanted: int) -> int:
        self.flush()
        self._grant = asyncio.get_running_loop().create_future()
        self._put(("reserve", self.shard, wanted))
        try:
            return await self._grant
        finally:
            self._grant = None

    async def idle(self, sent: int, received: int, give_back: int, blocked: bool) -> bool:
        self.flush()
        if self.done:
            return True
        self._waking = asyncio.get_running_loop().create_future()
        self._put(("idle", self.shard, (sent, received, give_back, blocked)))
        try:
            return await self._waking
        finally:
            self._waking = None

    def deliver(self, message: ToShard) -> None:
        """A message from the hub."""
        kind, payload = message
        if kind == "mail":
            self.on_mail(payload)
        elif kind == "grant":
            if self._grant is not None and not self._grant.done():
                self._grant.set_result(payload)
        elif kind in ("wake", "done"):
            self.done |= kind == "done"
            if self._waking is not None and not self._waking.done():
                self._waking.set_result(kind == "done")

    def close(self) -> None:
        self.flush()


class LocalHub:
    """The fake transport: a :class:`Hub` and its shards in one event loop (tests, and
    any caller that runs several crawls side by side). Messages are passed on with
    ``call_soon``, so nothing happens inside the sender's call."""

    def __init__(self, shards: int, max_pages: int, used: int = 0) -> None:
        self.hub = Hub(shards, max_pages, used)
        self.exchanges = [MessageExchange(shard, self._put) for shard in range(shards)]

    def _put(self, message: ToHub) -> None:
        loop = asyncio.get_running_loop()
        for shard, reply in self.hub.handle(*message):
            loop.call_soon(self.exchanges[shard].deliver, reply)

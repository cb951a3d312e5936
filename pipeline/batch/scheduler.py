"""The scheduler port: where the batch engine takes its work from.

The engine pulls; it never knows whether the items come from a URL list, a table, a WARC,
the links of sitemaps and feeds or a crawl's frontier. Each of those is one
:class:`Scheduler`: today's inputs all go through :class:`StreamScheduler` (an adapter over
the batches their readers make, :mod:`pipeline.batch.input`), and :class:`ListScheduler` is
the fake (a list in memory) that tests and small callers use.

Contract (the engine's loop, :meth:`pipeline.batch.engine.BatchEngine.run`):

- ``next()`` returns the next item to start, at once, or None when none is ready *now*; it
  never waits. The items of one source come in their input order (``index`` ascending for a
  list), which is what ``--ordered`` output and ``--dedup``'s "the earliest line is the
  original" rely on.
- ``await pending()`` waits until ``next()`` has an item (True) or until nothing is pending
  (False): every source read, every enqueued item handed out. False is not final: work in
  flight may still ``enqueue`` more, so the engine asks again after each finished item and
  ends the run only when ``pending()`` is False and nothing is in flight. Cancelling the wait
  (a stop) loses no item.
- ``enqueue(item)`` adds work during the run (a page's links, say); it never blocks, and a
  waiting ``pending()`` wakes up. Whether an item already seen is taken again is the
  scheduler's policy (a crawl frontier keeps a seen-set); the engine extracts what it is given.
- Every item handed out by ``next()`` gets exactly one record (unless the run is stopped:
  then the unfinished ones are left for ``--resume``).

A scheduler that holds resources (a reader thread, an open file) is closed by whoever opened
it (``async with``), after the run.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from types import TracebackType
from typing import Protocol

from pipeline.batch.input.items import InputItem, feed


class Scheduler(Protocol):
    """Work for the engine: ``enqueue`` / ``next`` / ``pending`` (see the module's contract)."""

    def enqueue(self, item: InputItem) -> None:
        """Add ``item`` to the work; never blocks."""
        ...

    def next(self) -> InputItem | None:
        """The next item to start, or None when none is ready now; never waits."""
        ...

    async def pending(self) -> bool:
        """Wait until an item is ready (True) or nothing is pending (False)."""
        ...


class ListScheduler:
    """The fake: items in a list, handed out first in, first out, enqueued ones after."""

    def __init__(self, items: Iterable[InputItem] = ()) -> None:
        self._queue: deque[InputItem] = deque(items)

    def __len__(self) -> int:
        return len(self._queue)

    def enqueue(self, item: InputItem) -> None:
        self._queue.append(item)

    def next(self) -> InputItem | None:
        return self._queue.popleft() if self._queue else None

    async def pending(self) -> bool:
        return bool(self._queue)


class StreamScheduler(ListScheduler):
    """Today's inputs as a scheduler: the batches an input reader yields (a URL list, a
    table, a WARC's records, then the links of sitemaps and feeds: see
    :func:`pipeline.batch.input.sources.run_batches`), read one batch at a time as the
    engine asks, so the look-ahead stays one batch.

    Enqueued items go before the stream's next batch: pushed work is bounded by whoever
    pushes it, the stream is pulled. Close it (``async with`` or :meth:`aclose`): a read in
    progress (a sitemap's parse, say) ends before the stream is closed.
    """

    def __init__(self, batches: AsyncIterator[Sequence[InputItem]]) -> None:
        super().__init__()
        self._batches = batches
        self._reading: asyncio.Future[Sequence[InputItem]] | None = None
        self._exhausted = False
        self._enqueued = asyncio.Event()

    @classmethod
    def reading(cls, items: Iterable[InputItem]) -> StreamScheduler:
        """A scheduler over ``items``, iterated in a reader thread (a blocked read never
        holds up the event loop)."""
        return cls(feed(items))

    def enqueue(self, item: InputItem) -> None:
        super().enqueue(item)
        self._enqueued.set()

    async def pending(self) -> bool:
        while not self._queue and not self._exhausted:
            if self._reading is None:
                self._reading = asyncio.ensure_future(anext(self._batches))
            self._enqueued.clear()
            waking = asyncio.ensure_future(self._enqueued.wait())
            try:  # asyncio.wait leaves the read running when this wait is cancelled
                await asyncio.wait((self._reading, waking),
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                waking.cancel()
            if self._reading.done():
                reading, self._reading = self._reading, None
                try:
                    self._queue.extend(reading.result())
                except StopAsyncIteration:
                    self._exhausted = True
        return bool(self._queue)

    async def aclose(self) -> None:
        """End a read in progress, then close the stream."""
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.wait((self._reading,))
            self._reading = None
        closing = getattr(self._batches, "aclose", None)
        if closing is not None:
            await closing()

    async def __aenter__(self) -> StreamScheduler:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.aclose()

"""The bounded concurrent batch runner: items in, one record per item out.

The engine pulls its items from a scheduler (:mod:`pipeline.batch.scheduler`: a list, a
table, a WARC, sitemaps and feeds, a crawl's frontier; the engine never knows which), which
may be given more work while the run goes; the run ends when the scheduler has nothing
pending and nothing is in flight. Today's inputs are read in small batches (a reader thread
and a bounded queue), so memory does not grow with the input and a slow stdin never blocks
the event loop. At most ``settings.concurrency`` URLs are in flight, and at most ``HOST_FACTOR`` ×
``settings.per_host`` of one host (the fetcher's gate admits ``per_host`` at a time; the rest
are being extracted or queue right behind): a line whose host is busy is held back
(:mod:`pipeline.batch.host_queue`, at most ``HELD_FACTOR`` × concurrency lines) while later
lines of other hosts start, so a list sorted by host does not leave every place waiting on one
slow host. Identical URLs in flight (or recently done) are fetched once; records are written in
completion order, or in input order through a bounded reorder buffer (``settings.ordered``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pipeline.batch.host_queue import HostQueue, host_key
from pipeline.batch.input.items import LINE, REST, InputItem
from pipeline.batch.output.sinks import DoneSet
from pipeline.batch.scheduler import Scheduler
from pipeline.core.errors import sanitize_message
from pipeline.core.models import ErrorInfo, Record
from pipeline.core.settings import Settings

DEDUP_WINDOW = 256  # finished URLs remembered for de-duplication
REORDER_FACTOR = 4  # --ordered buffers at most this many times the concurrency
HOST_FACTOR = 2  # lines of one host in flight, per connection the host may have
HELD_FACTOR = 8  # lines held back for a busy host: at most this many times the concurrency
GRACE_SECONDS = 3.0  # how long in-flight work may finish after a stop request
RUN_GC_THRESHOLD = 10_000  # young-generation threshold during a run (default 700)

T = TypeVar("T")
Extract = Callable[[str], Awaitable[Record]]
Write = Callable[[Record], None]

LINE_INPUT = frozenset({LINE, REST})  # the input of a URL line with text after its URL


@dataclass
class Summary:
    """What a run did, for the closing line on stderr."""

    ok: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # "filtered" too: not ok
    duplicates: int = 0  # records marked duplicate_of (--dedup)
    bytes: int = 0
    skipped: int = 0
    caching: bool = False  # --cache: the closing line counts where records came from
    cache: Counter[str] = field(default_factory=Counter)  # "hit", "revalidated", "fetched"
    interrupted: bool = False
    failed: list[str] = field(default_factory=list)  # shards that could not finish, and why
    started: float = field(default_factory=time.monotonic)
    elapsed: float = 0.0
    way_out: str | None = None  # the flags that open the first refused address
    with_rest: int = 0  # URL lines with text after the URL (kept as the record's input)
    rendered: int = 0  # records whose page a browser rendered (--render)

    @property
    def records(self) -> int:
        return self.ok + sum(self.errors.values())

    @property
    def filtered(self) -> int:
        """Records a run's own filter withheld (``--lang``, ``--drop-duplicates``): not ok,
        yet no failure."""
        return self.errors["filtered"]

    @property
    def failures(self) -> int:
        return sum(self.errors.values()) - self.filtered

    @property
    def urls_per_second(self) -> float:
        return self.records / self.elapsed if self.elapsed > 0 else 0.0

    def add(self, record: Record) -> None:
        if record.input is not None and record.input.keys() == LINE_INPUT:
            self.with_rest += 1
        self.duplicates += record.duplicate_of is not None
        if record.ok:
            self.ok += 1
        else:
            error = record.failed_with
            self.errors[error.kind] += 1
            if error.kind == "blocked" and self.way_out is None:
                from pipeline.fetch.policy import way_out_in  # the fetcher's, loaded by now

                self.way_out = way_out_in(error.message)
        if record.rendered:
            self.rendered += 1
        if record.cache is not None:  # nothing read: the cache had it
            self.cache[record.cache] += 1
            return
        self.bytes += record.bytes
        if record.attempts:
            self.cache["fetched"] += 1

    def absorb(self, other: Summary) -> None:
        """Add another run's (a shard's) counts to these."""
        self.ok += other.ok
        self.errors.update(other.errors)
        self.duplicates += other.duplicates
        self.bytes += other.bytes
        self.skipped += other.skipped
        self.with_rest += other.with_rest
        self.rendered += other.rendered
        self.interrupted |= other.interrupted
        self.failed.extend(other.failed)

    def describe(self) -> str:
        errors = ", ".join(f"{kind} {count}" for kind, count in self.errors.most_common()
                           if kind != "filtered")
        parts = [
            f"{self.records} records in {self.elapsed:.1f}s ({self.urls_per_second:.1f} URLs/s)",
            f"ok {self.ok}",
            f"errors {self.failures}" + (f" ({errors})" if errors else ""),
            f"{self.bytes / 1e6:.1f} MB read",
        ]
        if self.filtered:
            parts.insert(2, f"filtered {self.filtered}")
        if self.duplicates:
            parts.append(f"{self.duplicates} marked duplicate_of")
        if self.rendered:
            parts.append(f"{self.rendered} rendered in a browser")
        if self.caching:
            parts.append(f"cache: {self.cache['hit']} hits, {self.cache['revalidated']} "
                         f"revalidated, {self.cache['fetched']} fetched")
        if self.skipped:
            parts.append(f"{self.skipped} already done (resume)")
        if self.with_rest:
            parts.append(f"{self.with_rest} lines with text after the URL (kept as input.rest)")
        if self.way_out:
            parts.append(f"to fetch refused addresses: {self.way_out}")
        return "; ".join(parts)


class _OutputPlace:
    """A started item's place in the --ordered output queue, filled when it finishes."""

    __slots__ = ("record",)

    def __init__(self) -> None:
        self.record: Record | None = None


# A started (or held-back) line: the line, its --ordered slot, its host key.
_Started = tuple[InputItem, _OutputPlace | None, str | None]


class BatchEngine:
    """Runs ``extract`` over input lines and hands each record to ``write``.

    ``done`` (resume) names lines to skip; ``on_record`` is told about each written record
    (progress display); ``mark`` (``--dedup``) sees each record just before it is written, in
    the output's order, and may change it, or withhold it (None: a crawl's verdict that it
    is no page of the run; not written, not counted). ``stop`` ends the run early: no new lines, a
    grace period for the ones in flight, then whatever is unfinished is dropped (and left for
    ``--resume``).
    """

    def __init__(self, settings: Settings, extract: Extract, write: Write, *,
                 done: DoneSet | None = None,
                 on_record: Callable[[Record, Summary], None] | None = None,
                 mark: Callable[[Record], Record | None] | None = None,
                 grace: float = GRACE_SECONDS) -> None:
        self.settings = settings
        self._extract = extract
        self._write = write
        self._done = done
        self._on_record = on_record
        self._mark = mark
        self._grace = grace
        self._inflight: dict[str, asyncio.Future[Record]] = {}
        self._recent: OrderedDict[str, Record] = OrderedDict()
        self._slots: deque[_OutputPlace] = deque()
        self.summary = Summary(caching=settings.cache_dir is not None)

    async def _fetch_once(self, url: str) -> Record:
        """The record for ``url``, extracting it only if not in flight or recently done."""
        if (recent := self._recent.get(url)) is not None:
            return recent
        if (running := self._inflight.get(url)) is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[Record] = asyncio.get_running_loop().create_future()
        self._inflight[url] = future
        try:
            record = await self._extract(url)
        except Exception as exc:  # the duplicates waiting on it fail the same way
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        except BaseException:
            future.cancel()
            raise
        finally:
            del self._inflight[url]
        future.set_result(record)
        self._recent[url] = record
        if len(self._recent) > DEDUP_WINDOW:
            self._recent.popitem(last=False)
        return record

    async def _process(self, line: InputItem) -> Record:
        if line.problem is not None:
            error = ErrorInfo(kind=line.problem_kind, message=line.problem)
            return Record.failure(line.url, error, index=line.index, **(line.extra or {}))
        if line.locator is not None:  # read from where it is stored, under its own URL
            record = await self._extract(line.locator)
            return record.model_copy(update={"url": line.url, "index": line.index,
                                             **(line.extra or {})})
        record = await self._fetch_once(line.url)
        return record.model_copy(update={"index": line.index, **(line.extra or {})})

    def _emit(self, record: Record) -> None:
        if self._mark is not None:
            marked = self._mark(record)
            if marked is None:  # the scheduler's own verdict: no record of this run
                return
            record = marked
        self._write(record)
        self.summary.add(record)
        if self._on_record is not None:
            self._on_record(record, self.summary)

    def _finished(self, task: asyncio.Task[Record], line: InputItem,
                  slot: _OutputPlace | None) -> None:
        if task.cancelled():
            return  # unfinished work is left for --resume, never written half-done
        if (exc := task.exception()) is not None:  # a bug here must not lose the line
            error = ErrorInfo(kind="extract", message=sanitize_message(repr(exc)))
            record = Record.failure(line.url, error, index=line.index, **(line.extra or {}))
        else:
            record = task.result()
        if slot is None:
            self._emit(record)
            return
        slot.record = record
        while self._slots and (ready := self._slots[0].record) is not None:
            self._slots.popleft()
            self._emit(ready)

    async def run(self, scheduler: Scheduler, stop: asyncio.Event | None = None) -> Summary:
        """Process every item ``scheduler`` hands out, including those enqueued while the
        run goes (or until ``stop`` is set); returns the summary. The run ends when the
        scheduler has nothing pending and nothing is in flight."""
        stop = stop or asyncio.Event()
        stopping = asyncio.ensure_future(stop.wait())
        pending: dict[asyncio.Task[Record], _Started] = {}
        ordered = self.settings.ordered
        limit = self.settings.concurrency
        buffer_limit = REORDER_FACTOR * limit
        per_host = HOST_FACTOR * self.settings.per_host
        held: HostQueue[_Started] = HostQueue(per_host, HELD_FACTOR * limit)
        # per_host >= concurrency: no host can be over its share; skip the bookkeeping
        keyed = per_host < limit
        # Finished tasks queue up here, so waiting costs the same whatever the concurrency.
        completed: deque[asyncio.Task[Record]] = deque()
        progress = asyncio.Event()

        def on_done(task: asyncio.Task[Record]) -> None:
            completed.append(task)
            progress.set()

        def start(started: _Started) -> None:
            task = asyncio.ensure_future(self._process(started[0]))
            pending[task] = started
            task.add_done_callback(on_done)

        def drain() -> None:
            while completed:
                task = completed.popleft()
                line, slot, key = pending.pop(task)
                held.done(key)
                self._finished(task, line, slot)
            # held-back lines first: they are older than any line still to be read
            while len(pending) < limit and not stop.is_set() and (
                    (ready := held.take()) is not None):
                start(ready)

        async def settle() -> None:
            if not completed:
                progress.clear()
                await _first(progress.wait(), stopping)
            drain()

        async def more() -> bool:
            """The scheduler's ``pending()``, finished work written meanwhile (False on a
            stop): a slow input holds up no record."""
            waiter = asyncio.ensure_future(scheduler.pending())
            try:
                while not waiter.done() and not stop.is_set():
                    drain()
                    progress.clear()
                    await _first(progress.wait(), stopping, waiter)
                return waiter.done() and waiter.result()
            finally:
                waiter.cancel()

        try:
            while not stop.is_set():
                if (line := scheduler.next()) is None:
                    if await more() or stop.is_set():
                        continue
                    if not pending:  # nothing pending, nothing in flight to add more
                        break
                    await settle()  # a finished item may enqueue more; held ones start
                    continue
                if self._done is not None and (line.index, line.url) in self._done:
                    self.summary.skipped += 1
                    continue
                while not stop.is_set() and (
                    len(pending) >= limit or held.full
                    or (ordered and len(self._slots) >= buffer_limit)
                ):
                    await settle()
                if stop.is_set():
                    break
                slot = _OutputPlace() if ordered else None
                if slot is not None:
                    self._slots.append(slot)
                key = (host_key(line.url) if keyed and line.problem is None
                       and line.locator is None else None)
                started = (line, slot, key)
                if held.offer(key, started):
                    start(started)
            if pending:
                await self._wind_down(pending)
        finally:
            stopping.cancel()
            for task in pending:
                task.cancel()
        self.summary.interrupted = stop.is_set()
        self.summary.elapsed = time.monotonic() - self.summary.started
        return self.summary

    async def _wind_down(self, pending: dict[asyncio.Task[Record], _Started]) -> None:
        """After a stop: let in-flight work finish for a grace period, drop the rest, and
        write every finished record (in --ordered mode past the gaps, in input order —
        except with ``mark``: then the output stays an input-order prefix, so that --resume
        marks the rest as an uninterrupted run would). Lines still held back by the host queue
        were never started: left for --resume."""
        done, late = await asyncio.wait(pending, timeout=self._grace)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        for task in done:
            line, slot, _ = pending[task]
            self._finished(task, line, slot)
        pending.clear()
        for slot in self._slots:
            if slot.record is not None and self._mark is None:
                self._emit(slot.record)
        self._slots.clear()


async def _first(awaitable: Awaitable[object], *others: asyncio.Future[Any]) -> None:
    """Wait until ``awaitable`` or one of ``others`` is done (``others`` are left running)."""
    waiter = asyncio.ensure_future(awaitable)
    try:
        await asyncio.wait([waiter, *others], return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()


@contextlib.contextmanager
def calm_collector() -> Iterator[None]:
    """Keep the cyclic garbage collector off the hot path for the run, then restore it.

    Everything imported so far lives as long as the run, so it is frozen (a full collection
    no longer walks it; see the same call in :mod:`pipeline.batch.pool`). And the young
    generation's threshold is raised: with the default 700, bursts of URLs starting together
    set off ~60 collections per 1,000 URLs, which cost the event loop ~5% of its CPU on small
    pages (measured with ``gc.callbacks``); cycles are still collected, just in fewer passes.
    Both are undone after, for a long-lived caller of main().
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(RUN_GC_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()

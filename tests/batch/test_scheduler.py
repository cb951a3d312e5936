"""The scheduler port: the engine pulls its work from a scheduler, which may be given more
while the run goes; the run ends when nothing is pending and nothing is in flight."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from pipeline.batch.engine import BatchEngine
from pipeline.batch.input.items import InputItem
from pipeline.batch.scheduler import ListScheduler, Scheduler, StreamScheduler
from pipeline.core.models import Record
from pipeline.core.settings import load_settings

BRANCHING, DEPTH = 3, 3  # every page links to 3 children, 3 levels down: 40 pages


def settings(**overrides):
    return load_settings(overrides, env={})


class SeenOnce(ListScheduler):
    """A tiny crawl frontier: an item is enqueued once per URL, numbered as it comes."""

    def __init__(self, seeds: list[str]) -> None:
        super().__init__()
        self.seen: set[str] = set()
        self.refused = 0
        for url in seeds:
            self.add(url)

    def add(self, url: str) -> None:
        if url in self.seen:
            self.refused += 1
            return
        self.seen.add(url)
        self.enqueue(InputItem(len(self.seen) - 1, url))


ROOT = "http://site.test/r"


def children(url: str) -> list[str]:
    """The links of a page of the fake site (``/r``, ``/r-0``, ``/r-0-2``…): its children,
    its parent and the root."""
    level = url.count("-")
    found = [ROOT]
    if level < DEPTH:
        found += [f"{url}-{n}" for n in range(BRANCHING)]
    if level:
        found.append(url.rsplit("-", 1)[0])
    return found


class Discovering:
    """A fake ``extract`` whose pages enqueue their links as they finish (after a turn of
    the loop, so the scheduler is often empty while pages are in flight)."""

    def __init__(self, scheduler: SeenOnce) -> None:
        self.scheduler = scheduler
        self.extracted: Counter[str] = Counter()

    async def __call__(self, url: str) -> Record:
        self.extracted[url] += 1
        await asyncio.sleep(0)
        for link in children(url):
            self.scheduler.add(link)
        return Record(url=url, ok=True, content=url)


def site_size() -> int:
    return sum(BRANCHING ** level for level in range(DEPTH + 1))


@pytest.mark.parametrize("concurrency, per_host, ordered", [
    (1, 1, False), (4, 1, False), (8, 2, True), (16, 16, False),
])
async def test_items_enqueued_during_the_run_are_each_processed_once(concurrency, per_host,
                                                                      ordered):
    scheduler = SeenOnce([ROOT])
    extract = Discovering(scheduler)
    written: list[Record] = []
    engine = BatchEngine(settings(concurrency=concurrency, per_host=per_host, ordered=ordered),
                         extract, written.append)
    summary = await asyncio.wait_for(engine.run(scheduler), 10)
    urls = [record.url for record in written]
    assert len(urls) == len(set(urls)) == site_size() == summary.ok
    assert set(urls) == scheduler.seen
    assert set(extract.extracted.values()) == {1}
    assert scheduler.refused > 0  # links back were offered and not taken again
    assert sorted(record.index for record in written) == list(range(site_size()))
    if ordered:
        assert [record.index for record in written] == list(range(site_size()))
    assert not summary.interrupted


async def test_the_fake_hands_out_in_order_and_says_when_nothing_is_pending():
    scheduler: Scheduler = ListScheduler([InputItem(0, "a"), InputItem(1, "b")])
    assert await scheduler.pending()
    assert scheduler.next() == InputItem(0, "a")
    scheduler.enqueue(InputItem(2, "c"))
    assert [scheduler.next(), scheduler.next()] == [InputItem(1, "b"), InputItem(2, "c")]
    assert scheduler.next() is None and not await scheduler.pending()


async def test_a_stream_reads_one_batch_at_a_time_and_puts_enqueued_items_first():
    pulled = 0

    async def batches():
        nonlocal pulled
        for start in (0, 2):
            pulled += 1
            yield [InputItem(start, f"s{start}"), InputItem(start + 1, f"s{start + 1}")]

    async with StreamScheduler(batches()) as scheduler:
        assert scheduler.next() is None and pulled == 0  # nothing read before it is asked
        assert await scheduler.pending() and pulled == 1
        assert scheduler.next() == InputItem(0, "s0")
        scheduler.enqueue(InputItem(9, "found"))
        assert [scheduler.next(), scheduler.next()] == [InputItem(1, "s1"),
                                                        InputItem(9, "found")]
        assert scheduler.next() is None and pulled == 1
        assert await scheduler.pending()
        assert [scheduler.next(), scheduler.next(), scheduler.next()] == [
            InputItem(2, "s2"), InputItem(3, "s3"), None]
        assert not await scheduler.pending()


async def test_an_enqueue_wakes_a_stream_waiting_for_its_input():
    gate = asyncio.Event()
    closed = False

    async def batches():
        nonlocal closed
        try:
            await gate.wait()
            yield [InputItem(0, "late")]
        finally:
            closed = True

    async with StreamScheduler(batches()) as scheduler:
        waiting = asyncio.ensure_future(scheduler.pending())
        await asyncio.sleep(0)
        assert not waiting.done()
        scheduler.enqueue(InputItem(5, "found"))
        assert await asyncio.wait_for(waiting, 5)
        assert scheduler.next() == InputItem(5, "found")
    assert closed  # the read in progress ended and the stream was closed


async def test_a_stop_ends_a_run_waiting_for_its_input():
    never = asyncio.Event()

    async def batches():
        yield [InputItem(0, "http://a.test/")]
        await never.wait()
        yield []

    async def extract(url: str) -> Record:
        return Record(url=url, ok=True, content=url)

    stop = asyncio.Event()
    written: list[Record] = []

    def write(record: Record) -> None:
        written.append(record)
        stop.set()

    async with StreamScheduler(batches()) as scheduler:
        engine = BatchEngine(settings(), extract, write)
        summary = await asyncio.wait_for(engine.run(scheduler, stop), 10)
    assert summary.interrupted and [record.url for record in written] == ["http://a.test/"]

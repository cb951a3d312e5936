"""The per-host queue: a slow host at the head of the input does not hold up the others,
no host has more than ``HOST_FACTOR`` × ``per_host`` lines in flight, the look-ahead is bounded."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from pipeline.batch.engine import HELD_FACTOR, HOST_FACTOR, BatchEngine
from pipeline.batch.host_queue import HostQueue, host_key
from pipeline.batch.input.items import InputItem
from pipeline.batch.scheduler import StreamScheduler
from pipeline.core.models import ErrorInfo, Record
from pipeline.core.settings import load_settings


def settings(**overrides):
    return load_settings(overrides, env={})


@pytest.mark.parametrize("url, key", [
    ("http://Example.COM/a?b", "example.com:80"),
    ("HTTPS://example.com:8443", "example.com:8443"),
    ("https://user:pw@example.com/x", "example.com:443"),
    ("http://[::1]/x", "[::1]:80"),
    ("http://[::1]:81/x", "[::1]:81"),
    ("ftp://files.example/x", "files.example"),
    ("not a url", None),
    ("http:///path", None),
    ("mailto:someone@example.com", None),
])
def test_host_key(url, key):
    assert host_key(url) == key


def test_host_queue_holds_back_a_busy_host_and_hands_its_lines_out_in_order():
    queue: HostQueue[str] = HostQueue(per_host=2, capacity=3)
    assert queue.offer("a", "a1") and queue.offer("a", "a2")
    assert not queue.offer("a", "a3") and not queue.offer("a", "a4")
    assert queue.offer("b", "b1") and queue.offer(None, "no host")
    assert queue.take() is None and not queue.full
    assert not queue.offer("a", "a5") and queue.full
    queue.done("b")
    assert queue.take() is None  # b has room but nothing held
    queue.done("a")
    assert queue.take() == "a3" and queue.take() is None
    queue.done("a")
    queue.done("a")
    assert [queue.take(), queue.take(), queue.take()] == ["a4", "a5", None]
    assert queue.waiting == 0


def test_a_new_line_queues_behind_its_hosts_held_lines():
    queue: HostQueue[str] = HostQueue(per_host=1, capacity=10)
    assert queue.offer("a", "a1") and not queue.offer("a", "a2")
    queue.done("a")  # room for a, but a2 was first
    assert not queue.offer("a", "a3")
    assert queue.take() == "a2" and queue.take() is None


class HostLatency:
    """A fake ``extract``: lines of ``slow_host`` wait for ``release``; others answer at
    once. Counts lines in flight per host (and the peak)."""

    def __init__(self, slow_host: str) -> None:
        self.slow_host = slow_host
        self.release = asyncio.Event()
        self.active: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.started: list[str] = []

    async def __call__(self, url: str) -> Record:
        host = host_key(url) or "-"
        self.started.append(url)
        self.active[host] += 1
        self.peak[host] = max(self.peak[host], self.active[host])
        try:
            if host.startswith(self.slow_host):
                await self.release.wait()
            else:
                await asyncio.sleep(0)
        finally:
            self.active[host] -= 1
        if host == "-":
            return Record.failure(url, ErrorInfo(kind="invalid_url", message="no host"))
        return Record(url=url, ok=True, content=url)


def lines(urls: list[str], batch: int = 7):
    """The engine's input: ``urls`` as InputItems, in batches."""
    items = [InputItem(i, url) for i, url in enumerate(urls)]

    async def batches():
        for at in range(0, len(items), batch):
            yield items[at:at + batch]

    return StreamScheduler(batches())


def sorted_by_host(slow: int, fast_hosts: int, fast_each: int) -> tuple[list[str], list[str]]:
    slow_urls = [f"http://slow.test/{i}" for i in range(slow)]
    fast_urls = [f"http://fast{h}.test/{i}" for h in range(fast_hosts) for i in range(fast_each)]
    return slow_urls, fast_urls


async def test_slow_host_first_does_not_hold_up_the_others():
    slow, fast = sorted_by_host(slow=40, fast_hosts=3, fast_each=20)
    urls = [*slow, "not a url", *fast]
    extract = HostLatency("slow.test")
    written: list[Record] = []

    def write(record: Record) -> None:
        written.append(record)
        if len(written) == len(fast) + 1:  # every line but the slow host's: let it go
            extract.release.set()

    engine = BatchEngine(settings(concurrency=8, per_host=2), extract, write)
    # the old engine filled all 8 places with slow lines and never got further
    summary = await asyncio.wait_for(engine.run(lines(urls)), 10)
    assert {r.url for r in written[:len(fast) + 1]} == {*fast, "not a url"}
    assert sorted(r.index for r in written) == list(range(len(urls)))
    assert summary.records == len(urls) and summary.ok == len(urls) - 1
    assert max(extract.peak.values()) == HOST_FACTOR * 2  # per_host's share, never more


async def _started(extract: HostLatency, count: int) -> None:
    while len(extract.started) < count:
        await asyncio.sleep(0.001)


async def test_ordered_output_stays_in_input_order():
    slow, fast = sorted_by_host(slow=10, fast_hosts=4, fast_each=5)
    extract = HostLatency("slow.test")
    written: list[Record] = []
    engine = BatchEngine(settings(concurrency=8, per_host=2, ordered=True), extract,
                         written.append)
    running = asyncio.ensure_future(engine.run(lines(slow + fast)))
    # every fast line gets to run while the slow host's first lines are still stuck
    await asyncio.wait_for(_started(extract, HOST_FACTOR * 2 + len(fast)), 10)
    assert set(fast) <= set(extract.started) and written == []
    extract.release.set()
    await asyncio.wait_for(running, 10)
    assert [r.index for r in written] == list(range(len(slow + fast)))
    assert [r.url for r in written] == slow + fast
    assert max(extract.peak.values()) == HOST_FACTOR * 2


async def _quiet(count) -> None:
    """Yield to the loop until ``count()`` stops changing (everything here is in-loop)."""
    last, calm = count(), 0
    for _ in range(20_000):
        await asyncio.sleep(0)
        calm = calm + 1 if count() == last else 0
        last = count()
        if calm > 100:
            return


async def test_look_ahead_is_bounded():
    urls = [f"http://slow.test/{i}" for i in range(1_000)]
    items = [InputItem(i, url) for i, url in enumerate(urls)]
    pulled = 0

    async def batches():
        nonlocal pulled
        for item in items:
            pulled += 1
            yield [item]

    extract = HostLatency("slow.test")
    written: list[Record] = []
    concurrency, per_host = 4, 1
    share = HOST_FACTOR * per_host
    engine = BatchEngine(settings(concurrency=concurrency, per_host=per_host), extract,
                         written.append)
    running = asyncio.ensure_future(engine.run(StreamScheduler(batches())))
    await _quiet(lambda: pulled)
    # started + held back + the one line waiting for room: nothing more is read
    assert pulled <= share + HELD_FACTOR * concurrency + 1
    assert len(extract.started) == share and written == []
    extract.release.set()
    await asyncio.wait_for(running, 10)
    assert sorted(r.index for r in written) == list(range(len(urls)))
    assert extract.peak["slow.test:80"] == share


async def test_stop_drops_held_back_lines_for_resume():
    slow, fast = sorted_by_host(slow=20, fast_hosts=2, fast_each=10)
    extract = HostLatency("slow.test")
    stop = asyncio.Event()
    written: list[Record] = []

    def write(record: Record) -> None:
        written.append(record)
        if len(written) == len(fast):
            stop.set()

    engine = BatchEngine(settings(concurrency=6, per_host=2), extract, write, grace=0.05)
    summary = await asyncio.wait_for(engine.run(lines(slow + fast), stop), 10)
    assert summary.interrupted and {r.url for r in written} == set(fast)
    assert not any(url in extract.started for url in slow[HOST_FACTOR * 2:])


async def test_per_host_at_or_over_concurrency_holds_nothing_back():
    urls = [f"http://one.test/{i}" for i in range(20)]
    extract = HostLatency("one.test")
    written: list[Record] = []
    engine = BatchEngine(settings(concurrency=4, per_host=4), extract, written.append)
    running = asyncio.ensure_future(engine.run(lines(urls)))
    await asyncio.wait_for(_started(extract, 4), 10)
    extract.release.set()
    await asyncio.wait_for(running, 10)
    assert sorted(r.index for r in written) == list(range(20))
    assert extract.peak["one.test:80"] == 4

"""The batch engine: one record per URL line, de-duplication, ordering, bounds, stopping."""

from __future__ import annotations

import asyncio
import io
import random

from pipeline.batch.engine import BatchEngine
from pipeline.batch.input.items import MAX_LINE_BYTES, feed, read_items
from pipeline.batch.output.sinks import DoneSet
from pipeline.batch.scheduler import StreamScheduler
from pipeline.core.models import Record
from pipeline.core.settings import load_settings
from pipeline.extract.native import NativeExtractor
from pipeline.fetch.base import FakeFetcher
from tests.support.pages import page

GOOD = [f"http://example.test/{i}" for i in range(6)]
MIXED = (
    b"\xef\xbb\xbf" + GOOD[0].encode() + b"\r\n"  # BOM and CRLF
    + b"\n   \n# a comment\n  #indented comment\n"
    + b"  " + GOOD[1].encode() + b"  \t\n"
    + GOOD[0].encode() + b"\n"  # duplicate
    + b"not a url\n"
    + b"http://example.test/nul\x00here\n"
    + b"http://example.test/\xff\xfe-bad-utf8\n"
    + b"http://example.test/" + b"a" * 100_000 + b"\n"  # a 100 KB line
    + b"\n".join(g.encode() for g in GOOD[2:]) + b"\n"
    + GOOD[1].encode()  # duplicate, no final newline
)
URL_LINES = 12


def settings(**overrides):
    return load_settings(overrides, env={})


def test_read_items_survives_hostile_input():
    lines = list(read_items(io.BytesIO(MIXED)))
    assert [line.index for line in lines] == list(range(URL_LINES))
    assert lines[0].url == GOOD[0] and lines[1].url == GOOD[1]
    assert "\x00" in lines[4].url and "\ufffd" in lines[5].url
    long_line = lines[6]
    assert long_line.problem and len(long_line.url) < 300
    assert lines[5].problem == "line is not valid UTF-8"
    assert lines[-1].url == GOOD[1]


def test_a_line_longer_than_the_limit_is_never_held_whole():
    stream = io.BytesIO(b"x" * (MAX_LINE_BYTES * 5) + b"\nhttp://example.test/after\n")
    lines = list(read_items(stream))
    assert [line.url for line in lines][1] == "http://example.test/after"
    assert lines[0].problem


def scheduled(data: bytes) -> StreamScheduler:
    """The engine's work: the URL lines of ``data``."""
    return StreamScheduler.reading(read_items(io.BytesIO(data)))


async def run_engine(data: bytes, fetcher, *, done=None, stop=None, **overrides):
    written: list[Record] = []
    async with NativeExtractor(settings(**overrides), fetcher=fetcher) as native:
        engine = BatchEngine(native.settings, native.extract_one, written.append, done=done)
        summary = await engine.run(scheduled(data), stop)
    return written, summary


async def test_one_record_per_url_line_and_duplicates_fetched_once():
    fetcher = FakeFetcher({url: page(url, f"text of {url}".encode()) for url in GOOD})
    written, summary = await run_engine(MIXED, fetcher, concurrency=3)
    assert sorted(r.index for r in written) == list(range(URL_LINES))
    by_index = {r.index: r for r in written}
    assert by_index[0].ok and by_index[2].ok and by_index[0].content == by_index[2].content
    assert by_index[11].url == GOOD[1] and by_index[11].ok
    assert [by_index[i].error.kind for i in (3, 4, 5, 6)] == ["invalid_url"] * 4
    assert all(fetcher.calls[url] == 1 for url in GOOD)
    assert summary.ok == 8 and summary.errors == {"invalid_url": 4}
    assert summary.records == URL_LINES and not summary.interrupted


class SlowFetcher(FakeFetcher):
    """Answers after a random short delay; tracks how many fetches overlap."""

    def __init__(self, routes, seed=0):
        super().__init__(routes)
        self.random = random.Random(seed)
        self.active = self.peak = 0

    async def fetch(self, url):
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(self.random.uniform(0, 0.01))
            return await super().fetch(url)
        finally:
            self.active -= 1


def numbered(n):
    urls = [f"http://example.test/n{i}" for i in range(n)]
    return urls, "\n".join(urls).encode()


async def test_ordered_output_follows_the_input_and_concurrency_is_bounded():
    urls, data = numbered(120)
    fetcher = SlowFetcher({u: page(u, u.encode()) for u in urls})
    written, _ = await run_engine(data, fetcher, concurrency=8, ordered=True)
    assert [r.index for r in written] == list(range(120))
    assert [r.content for r in written] == urls
    assert 1 < fetcher.peak <= 8


async def test_completion_order_is_the_default():
    urls, data = numbered(60)
    fetcher = SlowFetcher({u: page(u, u.encode()) for u in urls}, seed=3)
    written, _ = await run_engine(data, fetcher, concurrency=16)
    assert sorted(r.index for r in written) == list(range(60))
    assert [r.index for r in written] != list(range(60))


async def test_resume_skips_what_is_done():
    urls, data = numbered(10)
    done = DoneSet()
    for index in (0, 3, 4):
        done.add(index, urls[index])
    done.add(5, "http://example.test/another-input")  # a different URL at index 5: redo
    fetcher = FakeFetcher({u: page(u, b"x") for u in urls})
    written, summary = await run_engine(data, fetcher, done=done)
    assert sorted(r.index for r in written) == [1, 2, 5, 6, 7, 8, 9]
    assert summary.skipped == 3


class StuckFetcher(FakeFetcher):
    """The first URLs answer; the rest never do (a stop must not wait for them)."""

    async def fetch(self, url):
        if url.endswith(("n0", "n1")):
            return await super().fetch(url)
        await asyncio.sleep(3600)


async def test_stop_writes_finished_work_and_drops_the_rest():
    urls, data = numbered(50)
    stop = asyncio.Event()
    written: list[Record] = []
    config = settings(concurrency=4, ordered=True)
    async with NativeExtractor(config, fetcher=StuckFetcher({u: page(u, b"x") for u in urls})
                               ) as native:
        engine = BatchEngine(config, native.extract_one, written.append, grace=0.05)
        running = asyncio.ensure_future(engine.run(scheduled(data), stop))
        while len(written) < 2:
            await asyncio.sleep(0.01)
        stop.set()
        summary = await asyncio.wait_for(running, 5)
    assert summary.interrupted
    assert [r.index for r in written] == [0, 1]


class HeadBlocked(FakeFetcher):
    """The first URL waits for ``release``; every other URL answers at once."""

    def __init__(self, routes, first):
        super().__init__(routes)
        self.first = first
        self.release = asyncio.Event()
        self.started = 0

    async def fetch(self, url):
        self.started += 1
        if url == self.first:
            await self.release.wait()
        return await super().fetch(url)


async def test_ordered_buffer_is_bounded_while_the_head_is_slow():
    from pipeline.batch.engine import REORDER_FACTOR

    urls, data = numbered(200)
    fetcher = HeadBlocked({u: page(u, b"x") for u in urls}, urls[0])
    config = settings(concurrency=4, ordered=True)
    written: list[Record] = []
    async with NativeExtractor(config, fetcher=fetcher) as native:
        engine = BatchEngine(config, native.extract_one, written.append)
        running = asyncio.ensure_future(engine.run(scheduled(data)))
        while fetcher.started < REORDER_FACTOR * 4:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # room to overshoot the bound, if it could
        started = fetcher.started
        assert written == [] and started == REORDER_FACTOR * 4  # input stopped at the bound
        fetcher.release.set()
        await asyncio.wait_for(running, 10)
    assert [r.index for r in written] == list(range(200))
    assert engine._inflight == {} and len(engine._recent) <= 256


async def test_an_extract_bug_still_gives_every_line_a_record():
    async def broken(url):
        await asyncio.sleep(0.01)
        raise RuntimeError("engine-level bug")

    written: list[Record] = []
    engine = BatchEngine(settings(), broken, written.append)
    data = b"http://example.test/a\nhttp://example.test/a\nhttp://example.test/b\n"
    summary = await engine.run(scheduled(data))
    assert sorted(r.index for r in written) == [0, 1, 2]
    assert all(r.error.kind == "extract" and "engine-level bug" in r.error.message
               for r in written)
    assert summary.errors == {"extract": 3}


def test_an_input_reader_stopped_mid_input_ends_quietly(monkeypatch):
    """The run ends while the reader thread waits to hand over a batch: the thread stops,
    without an exception (it used to be left blocked, or to print a traceback of
    concurrent.futures' CancelledError, which is not asyncio's)."""
    import threading

    from pipeline.batch.input.items import READ_BATCH, InputItem

    errors: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    blocked = threading.Event()

    def items():
        for index in range(100 * READ_BATCH):
            if index == 6 * READ_BATCH - 1:  # batches 2-5 fill the queue; 6 will wait
                blocked.set()
            yield InputItem(index, f"http://example.test/{index}")

    async def take_one():
        async for batch in feed(items()):
            await asyncio.to_thread(blocked.wait, 10)
            return batch

    assert len(asyncio.run(take_one())) == READ_BATCH
    readers = [thread for thread in threading.enumerate() if thread.name == "pipeline-input"]
    for thread in readers:
        thread.join(10)
    assert errors == []
    assert not any(thread.is_alive() for thread in readers)  # not left blocked forever

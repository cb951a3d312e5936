"""The HEAD guard learns per host: after ``head_trust`` clean HEADs in a row, GET alone; any
refusal (too large, binary) brings the HEADs back."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from pipeline.fetch.base import FetchError
from pipeline.fetch.client import HttpFetcher
from pipeline.fetch.head_trust import HeadTrust
from tests.fetch.conftest import ROOM, fast_settings, serve_app

SMALL = b"<p>small page</p>"
HUGE = 200 * 1024  # over fast_settings' 64 KiB cap


def counting_app(requests: Counter[tuple[str, str]]) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        requests[(request.method, request.match_info["name"])] += 1
        name = request.match_info["name"]
        if request.method == "HEAD":
            await asyncio.sleep(0.02)  # a burst's URLs all start before any HEAD answers
        if name.startswith("huge"):
            body = b"x" * HUGE
        elif name.startswith("image"):
            return web.Response(body=b"\x89PNG", content_type="image/png")
        else:
            body = SMALL
        if request.method == "HEAD":
            return web.Response(headers={"Content-Length": str(len(body)),
                                         "Content-Type": "text/html"})
        return web.Response(body=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", page)
    return app


def methods(requests: Counter[tuple[str, str]], method: str) -> int:
    return sum(n for (m, _), n in requests.items() if m == method)


@asynccontextmanager
async def trusting(
    head_trust: int, **settings: object,
) -> AsyncIterator[tuple[str, HttpFetcher, Counter[tuple[str, str]]]]:
    """A counting server and a fetcher with ``head_trust``: (base URL, fetcher, requests).
    Deadlines get room: a retry after a stall on a loaded machine would change the counts."""
    requests: Counter[tuple[str, str]] = Counter()
    roomy = ROOM | settings
    async with serve_app(counting_app(requests)) as base, \
            HttpFetcher(fast_settings(head_trust=head_trust, **roomy)) as fetcher:
        yield base, fetcher, requests


async def test_a_host_earns_get_alone_after_clean_heads():
    async with trusting(3) as (base, fetcher, requests):
        for i in range(7):
            result = await fetcher.fetch(f"{base}/page{i}")
            assert result.body == SMALL
    assert methods(requests, "HEAD") == 3
    assert methods(requests, "GET") == 7


async def test_a_refused_get_brings_the_heads_back():
    async with trusting(2) as (base, fetcher, requests):
        for i in range(3):
            await fetcher.fetch(f"{base}/page{i}")
        assert methods(requests, "HEAD") == 2  # trusted now
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(f"{base}/huge")  # GET alone: its headers refuse it
        assert caught.value.kind == "too_large"
        assert requests[("GET", "huge")] == 1 and requests[("HEAD", "huge")] == 0
        with pytest.raises(FetchError) as again:
            await fetcher.fetch(f"{base}/huge2")  # HEADed again: no GET at all
        assert again.value.kind == "too_large"
        assert requests[("HEAD", "huge2")] == 1 and requests[("GET", "huge2")] == 0


async def test_a_binary_type_counts_as_a_refusal():
    async with trusting(1) as (base, fetcher, requests):
        await fetcher.fetch(f"{base}/page")
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(f"{base}/image")
        assert caught.value.kind == "unsupported_type"
        await fetcher.fetch(f"{base}/page2")
    assert requests[("HEAD", "page2")] == 1  # the refusal reset the host's trust


async def test_zero_means_head_every_url():
    async with trusting(0) as (base, fetcher, requests):
        for i in range(10):
            await fetcher.fetch(f"{base}/page{i}")
    assert methods(requests, "HEAD") == 10


def test_trust_is_per_host_and_bounded():
    trust = HeadTrust(2, max_hosts=2)
    for host in ("a:80", "a:80", "b:80"):
        trust.passed(host)
    assert not trust.wanted("a:80") and trust.wanted("b:80")
    trust.passed("c:80")  # a third host: the least recently used one is forgotten
    assert trust.wanted("a:80")
    trust.passed("b:80")
    assert not trust.wanted("b:80")
    trust.refused("b:80")
    assert trust.wanted("b:80")


async def test_a_burst_of_one_hosts_urls_sends_only_the_heads_that_can_earn_trust():
    async with trusting(3, per_host=40, rate=float("inf")) as (base, fetcher, requests):
        results = await asyncio.gather(*(fetcher.fetch(f"{base}/page{i}") for i in range(40)))
    assert all(result.body == SMALL for result in results)
    assert methods(requests, "HEAD") == 3  # the other 37 waited for those three
    assert methods(requests, "GET") == 40


async def test_a_probe_that_finds_a_refusal_sends_the_waiting_urls_back_to_heads():
    async with trusting(2, per_host=20, rate=float("inf")) as (base, fetcher, requests):
        names = ["huge", "page0", *(f"page{i}" for i in range(1, 12))]
        results = await asyncio.gather(*(fetcher.fetch(f"{base}/{name}") for name in names),
                                       return_exceptions=True)
    assert isinstance(results[0], FetchError) and results[0].kind == "too_large"
    assert requests[("GET", "huge")] == 0  # refused by its HEAD
    assert all(result.body == SMALL for result in results[1:])
    # the refused probe did not count: two more clean HEADs were needed for trust
    assert 3 <= methods(requests, "HEAD") <= 4 and methods(requests, "GET") == 12


async def test_a_url_waiting_for_a_verdict_can_give_up_alone():
    trust = HeadTrust(2)
    assert await trust.claim("a:80") and await trust.claim("a:80")  # two probes out
    waiting = [asyncio.ensure_future(trust.claim("a:80")) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(task.done() for task in waiting)
    waiting[0].cancel()  # its deadline passed
    trust.probed("a:80", clean=True)
    trust.probed("a:80", clean=False)  # one more probe is needed: one waiter becomes it
    await asyncio.sleep(0)
    assert waiting[0].cancelled()
    assert sum(task.done() and task.result() for task in waiting[1:]) == 1
    trust.probed("a:80", clean=True)  # trusted: the last waiter GETs alone
    assert await asyncio.gather(*waiting[1:]) in ([True, False], [False, True])
    assert not await trust.claim("a:80")


def head_hangs_app(requests: Counter[tuple[str, str]]) -> web.Application:
    """HEAD never answers; GET serves a small page at once."""
    async def page(request: web.Request) -> web.Response:
        requests[(request.method, request.match_info["name"])] += 1
        if request.method == "HEAD":
            await asyncio.sleep(3600)
        return web.Response(body=SMALL, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", page)
    return app


async def test_a_host_whose_head_hangs_gets_the_get_alone():
    # 40 URLs admitted at once, 8 probes: a HEAD may take a third of the 3 s deadline, so
    # probing in rounds of 8 would leave most URLs to time out without a GET (the 2 s left
    # after the probes are far more than 40 GETs on loopback need, even on a busy machine).
    requests: Counter[tuple[str, str]] = Counter()
    settings = fast_settings(head_trust=8, per_host=40, rate=float("inf"), timeout=3.0,
                             read_timeout=2.0, retries=0)
    async with serve_app(head_hangs_app(requests)) as base, HttpFetcher(settings) as fetcher:
        results = await asyncio.gather(*(fetcher.fetch(f"{base}/page{i}") for i in range(40)),
                                       return_exceptions=True)
        assert all(not isinstance(r, BaseException) and r.body == SMALL for r in results), \
            [r for r in results if isinstance(r, BaseException)][:3]
        assert methods(requests, "HEAD") == 8 and methods(requests, "GET") == 40
        await fetcher.fetch(f"{base}/later")  # the host stays one without HEAD
    assert requests[("HEAD", "later")] == 0


@pytest.mark.parametrize("status", [405, 501])
async def test_a_head_the_host_does_not_implement_sends_its_urls_to_get(status):
    requests: Counter[tuple[str, str]] = Counter()

    async def page(request: web.Request) -> web.Response:
        requests[(request.method, request.match_info["name"])] += 1
        if request.method == "HEAD":
            return web.Response(status=status)
        return web.Response(body=SMALL, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", page)
    async with serve_app(app) as base, HttpFetcher(fast_settings(head_trust=0)) as fetcher:
        for i in range(3):
            assert (await fetcher.fetch(f"{base}/page{i}")).body == SMALL
    assert methods(requests, "HEAD") == 1 and methods(requests, "GET") == 3


async def test_waiting_urls_go_to_get_when_a_probe_fails():
    trust = HeadTrust(2)
    assert await trust.claim("a:80") and await trust.claim("a:80")
    waiting = [asyncio.ensure_future(trust.claim("a:80")) for _ in range(3)]
    await asyncio.sleep(0)
    trust.probed("a:80", clean=False, failed=True)
    assert await asyncio.gather(*waiting) == [False] * 3
    trust.refused("a:80")  # a refusal brings HEADs back to a host that does them, not here
    assert not trust.wanted("a:80") and not await trust.claim("a:80")
    assert trust.wanted("b:80")

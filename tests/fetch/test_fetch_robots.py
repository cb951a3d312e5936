"""Optional robots.txt: refusals, Crawl-delay, RFC 9309 outcomes, one fetch per origin."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from aiohttp import web

from pipeline.fetch import FetchError, HttpFetcher

pytestmark = [pytest.mark.usefixtures("connect_log"), pytest.mark.patient]


def site(robots_status: int, robots_body: str = "") -> tuple[web.Application, Counter]:
    seen: Counter = Counter()

    async def route(request: web.Request) -> web.Response:
        if request.method == "GET":
            seen[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=robots_status, text=robots_body)
        return web.Response(text="page", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    return app, seen


RULES = "User-agent: *\nDisallow: /private\nCrawl-delay: 0.5\n"


async def test_disallowed_url_is_a_robots_error_and_never_fetched(make_settings, app_server):
    app, seen = site(200, RULES)
    async with app_server(app) as base, HttpFetcher(make_settings(robots=True)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/private/page")
        result = await client.fetch(base + "/public")
    assert info.value.kind == "robots"
    assert result.body == b"page"
    assert seen["/private/page"] == 0 and seen["/robots.txt"] == 1  # cached per origin


async def test_crawl_delay_spaces_requests_to_the_host(make_settings, app_server):
    # The fetcher hands Crawl-delay to its host gate before the first page request; how the
    # gate spaces requests is tested with a controlled clock (test_fetch_hosts.py).
    events: list[tuple[str, object]] = []

    async def route(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(text=RULES)
        events.append(("GET", request.path))
        return web.Response(text="page", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    async with app_server(app) as base, \
            HttpFetcher(make_settings(robots=True, head=False, timeout=4.0)) as client:
        set_interval = client.gate.set_interval

        def spacing(host: str, seconds: float) -> None:
            events.append(("interval", (host, seconds)))
            set_interval(host, seconds)

        client.gate.set_interval = spacing  # type: ignore[method-assign]
        await asyncio.gather(*(client.fetch(f"{base}/p{n}") for n in range(3)))
    host = base.removeprefix("http://")
    assert events[0] == ("interval", (host, 0.5))  # before any page: Crawl-delay: 0.5
    assert sorted(path for kind, path in events if kind == "GET") == ["/p0", "/p1", "/p2"]


@pytest.mark.parametrize("status, allowed", [(404, True), (403, True), (500, False),
                                             (503, False), (429, False)])
async def test_robots_status_outcomes(make_settings, app_server, status, allowed):
    app, _ = site(status, "User-agent: *\nDisallow: /\n")
    async with app_server(app) as base, \
            HttpFetcher(make_settings(robots=True, retries=0)) as client:
        if allowed:
            assert (await client.fetch(base + "/x")).body == b"page"
        else:
            with pytest.raises(FetchError) as info:
                await client.fetch(base + "/x")
            assert info.value.kind == "robots"


async def test_robots_off_by_default(fetcher, app_server):
    app, seen = site(200, "User-agent: *\nDisallow: /\n")
    async with app_server(app) as base:
        assert (await fetcher.fetch(base + "/x")).body == b"page"
    assert seen["/robots.txt"] == 0


async def test_concurrent_urls_share_one_robots_fetch(make_settings, app_server):
    app, seen = site(200, "User-agent: *\nAllow: /\n")
    async with app_server(app) as base, HttpFetcher(make_settings(robots=True)) as client:
        results = await asyncio.gather(*(client.fetch(f"{base}/p{n}") for n in range(5)))
    assert all(r.body == b"page" for r in results) and seen["/robots.txt"] == 1

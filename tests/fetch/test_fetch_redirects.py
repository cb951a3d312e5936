"""Redirects are followed by our code: bounded, loop-checked, every hop re-validated."""

from __future__ import annotations

from collections import Counter

import pytest
from aiohttp import web

from pipeline.fetch import FetchError, HttpFetcher

pytestmark = [pytest.mark.usefixtures("connect_log"), pytest.mark.patient]


def redirect_app(routes: dict[str, tuple[int, dict[str, str]]]) -> tuple[web.Application, Counter]:
    """``routes`` (may be filled after start): path -> (status, headers); other paths answer
    200 with the path as body. Counts GETs per path."""
    seen: Counter = Counter()

    async def route(request: web.Request) -> web.Response:
        if request.method == "GET":
            seen[request.path] += 1
        if request.path in routes:
            status, headers = routes[request.path]
            return web.Response(status=status, headers=headers)
        return web.Response(body=request.path.encode(), content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    return app, seen


@pytest.mark.parametrize("location, expected", [
    ("/final", "/final"),
    ("final", "/dir/final"),
    ("../final", "/final"),
    ("{base}/final", "/final"),
    ("//127.0.0.1:{port}/final", "/final"),
    ("  /final\t", "/final"),
])
async def test_relative_and_absolute_locations(fetcher, app_server, location, expected):
    routes: dict = {}
    app, _ = redirect_app(routes)
    async with app_server(app) as base:
        port = base.rsplit(":", 1)[1]
        routes["/dir/start"] = (302, {"Location": location.format(base=base, port=port)})
        result = await fetcher.fetch(base + "/dir/start")
    assert result.body == expected.encode()
    assert result.final_url == base + expected and result.url == base + "/dir/start"


async def test_redirect_without_location_is_the_final_answer(fetcher, app_server):
    app, _ = redirect_app({"/": (302, {})})
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/")
    assert (info.value.kind, info.value.status) == ("http_status", 302)


async def test_redirect_loop_is_detected(fetcher, app_server):
    app, seen = redirect_app({"/a": (301, {"Location": "/b"}), "/b": (302, {"Location": "/a"})})
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/a")
    assert info.value.kind == "http_status" and "loop" in info.value.message
    assert seen == {"/a": 1, "/b": 1}


async def test_thirty_hop_chain_stops_after_max_redirects(fetcher, app_server):
    routes = {f"/hop/{n}": (307, {"Location": f"/hop/{n + 1}"}) for n in range(30)}
    app, seen = redirect_app(routes)
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/hop/0")
    assert info.value.kind == "http_status" and "more than 10 redirects" in info.value.message
    assert sum(seen.values()) == 11  # the first request and ten redirects, no more


async def test_ten_hops_are_followed(fetcher, app_server):
    routes = {f"/hop/{n}": (308, {"Location": f"/hop/{n + 1}"}) for n in range(10)}
    app, _ = redirect_app(routes)
    async with app_server(app) as base:
        result = await fetcher.fetch(base + "/hop/0")
    assert result.body == b"/hop/10"


@pytest.mark.parametrize("location, reason", [
    ("http://10.0.0.1/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://[fd00:ec2::254]/", "metadata"),
    ("http://0x7f000001/", "non-canonical"),
    ("http://2130706433/", "non-canonical"),
    ("file:///etc/passwd", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("http://[::ffff:10.0.0.1]/", "embedded"),
    ("http://[::ffff:127.0.0.1]/", "embedded"),
    ("http://[64:ff9b::a9fe:a9fe]/", "metadata"),
    ("http://100.64.0.1/", "CGNAT"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://example.com@10.0.0.1/", "private"),
])
async def test_redirect_to_refused_target_is_blocked_before_connecting(
        make_settings, app_server, connect_log, location, reason):
    # Metadata stays refused even when its range is explicitly opened.
    settings = make_settings(allow_net=["127.0.0.1/32", "169.254.0.0/16", "fd00::/8"])
    app, _ = redirect_app({"/": (302, {"Location": location})})
    async with app_server(app) as base, HttpFetcher(settings) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind == "blocked" and reason in info.value.message
    assert set(connect_log) == {"127.0.0.1"}  # only the test server was ever connected to


async def test_no_cookie_reaches_the_next_hop(fetcher, app_server):
    received: list[str | None] = []

    async def route(request: web.Request) -> web.Response:
        received.append(request.headers.get("Cookie"))
        if request.path == "/login":
            return web.Response(status=302, headers={"Location": "/next",
                                                     "Set-Cookie": "session=secret; Path=/"})
        return web.Response(body=b"done", content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    async with app_server(app) as base:
        result = await fetcher.fetch(base + "/login")
    assert result.body == b"done" and not any(received)

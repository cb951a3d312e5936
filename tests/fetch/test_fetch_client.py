"""HttpFetcher against real local servers: HEAD guard, byte caps, bombs, timeouts, retries."""

from __future__ import annotations

import asyncio
import gzip
import time
import zlib
from collections import Counter
from email.utils import formatdate

import brotli
import pytest
from aiohttp import web

from pipeline.fetch import FetchError, HttpFetcher

BIG = 10 * 1024 * 1024  # what a bomb inflates to: far above the 64 KiB test cap


def counting_app(handler) -> tuple[web.Application, Counter]:
    """An app answering every path and method with ``handler``; counts requests by method."""
    seen: Counter = Counter()

    async def route(request: web.Request) -> web.StreamResponse:
        seen[request.method] += 1
        return await handler(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    return app, seen


async def test_ok_page_with_media_type_and_charset(fetcher, app_server):
    async def page(request):
        return web.Response(body=b"<p>hello</p>",
                            headers={"Content-Type": "Text/HTML; Charset=\"ISO-8859-1\""})

    app, seen = counting_app(page)
    async with app_server(app) as base:
        result = await fetcher.fetch(base + "/page")
    assert result.body == b"<p>hello</p>"
    assert (result.status, result.media_type, result.charset) == (200, "text/html", "iso-8859-1")
    assert result.final_url == base + "/page" and result.attempts == 1
    assert seen == {"HEAD": 1, "GET": 1}


async def _huge(request):
    return web.Response(headers={"Content-Length": str(BIG)}) if request.method == "HEAD" \
        else web.Response(body=b"x")


async def _image(request):
    return web.Response(body=b"\x89PNG....", content_type="image/png")


@pytest.mark.parametrize(("handler", "path", "kind"), [
    (_huge, "/big", "too_large"),  # HEAD's Content-Length over the cap
    (_image, "/cat.png", "unsupported_type"),  # HEAD's binary media type
])
async def test_a_head_refusal_means_no_get(fetcher, app_server, handler, path, kind):
    app, seen = counting_app(handler)
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + path)
    assert info.value.kind == kind
    assert seen == {"HEAD": 1}


async def test_custom_early_reject_predicate(make_settings, app_server):
    async def pdf(request):
        return web.Response(body=b"%PDF-1.4", content_type="application/pdf")

    app, seen = counting_app(pdf)
    # room: a HEAD slower than a third of the deadline would be passed over for the GET
    settings = make_settings(timeout=60, read_timeout=20, connect_timeout=20)
    async with app_server(app) as base, \
            HttpFetcher(settings, early_reject=lambda t: t == "application/pdf") as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/doc.pdf")
    assert info.value.kind == "unsupported_type" and seen == {"HEAD": 1}


async def test_head_405_then_capped_get(fetcher, app_server):
    async def no_head(request):
        if request.method == "HEAD":
            return web.Response(status=405)
        response = web.StreamResponse()  # chunked, no Content-Length
        await response.prepare(request)
        for _ in range(200):
            await response.write(b"y" * 1024)
        return response

    app, seen = counting_app(no_head)
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/")
    assert info.value.kind == "too_large"
    assert seen == {"HEAD": 1, "GET": 1}


async def test_no_head_setting_sends_only_get(make_settings, app_server):
    app, seen = counting_app(lambda request: _text(b"body"))
    async with app_server(app) as base, HttpFetcher(make_settings(head=False)) as client:
        result = await client.fetch(base + "/")
    assert result.body == b"body" and seen == {"GET": 1}


async def _text(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="text/plain")


async def test_head_hanging_then_get(make_settings, app_server):
    async def slow_head(request):
        if request.method == "HEAD":
            await asyncio.sleep(5)
        return web.Response(body=b"fine", content_type="text/plain")

    app, seen = counting_app(slow_head)
    async with app_server(app) as base, \
            HttpFetcher(make_settings(timeout=3.0, retries=0)) as client:
        result = await client.fetch(base + "/")
    assert result.body == b"fine" and seen["GET"] == 1


async def test_head_small_but_get_body_over_cap(fetcher, app_server):
    async def liar(request):
        if request.method == "HEAD":
            return web.Response(headers={"Content-Length": "10"}, content_type="text/html")
        response = web.StreamResponse()
        await response.prepare(request)
        for _ in range(100):
            await response.write(b"z" * 1024)
        return response

    app, _ = counting_app(liar)
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/")
    assert info.value.kind == "too_large"


async def test_get_content_length_over_cap_refused_before_body(fetcher, app_server):
    async def big(request):
        return web.Response(body=b"a" * (100 * 1024), content_type="text/plain")

    app, _ = counting_app(big)
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/")
    assert info.value.kind == "too_large" and "Content-Length" in info.value.message


async def test_body_exactly_at_cap_is_accepted(make_settings, app_server):
    app, _ = counting_app(lambda request: _text(b"q" * 1000))
    async with app_server(app) as base, HttpFetcher(make_settings(max_bytes=1000)) as client:
        result = await client.fetch(base + "/")
    assert len(result.body) == 1000


def _bomb_app(encoding: str, payload: bytes) -> web.Application:
    async def bomb(request):
        return web.Response(body=payload, headers={
            "Content-Type": "text/html", "Content-Encoding": encoding})

    app, _ = counting_app(bomb)
    return app


@pytest.mark.parametrize("encoding, compress", [
    ("gzip", lambda data: gzip.compress(data, 9)),
    ("deflate", lambda data: zlib.compress(data, 9)),
    ("br", lambda data: brotli.compress(data, quality=5)),
])
async def test_compression_bomb_stops_at_cap(fetcher, app_server, encoding, compress):
    payload = compress(b"\0" * BIG)
    assert len(payload) < 64 * 1024  # small on the wire, 10 MiB once inflated
    async with app_server(_bomb_app(encoding, payload)) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/bomb")
    assert info.value.kind == "too_large" and "decompression" in info.value.message


async def test_compressed_page_is_decoded(fetcher, app_server):
    async with app_server(_bomb_app("gzip", gzip.compress(b"<p>small</p>"))) as base:
        result = await fetcher.fetch(base + "/")
    assert result.body == b"<p>small</p>"


async def test_never_answering_server_times_out(make_settings, raw_server):
    async def silent(reader, writer):
        await asyncio.sleep(30)

    async with raw_server(silent) as base, \
            HttpFetcher(make_settings(retries=0, head=False)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind == "timeout" and info.value.attempts == 1


async def test_total_deadline_bounds_every_attempt(make_settings, raw_server):
    async def silent(reader, writer):
        await asyncio.sleep(30)

    # Each attempt waits 0.3 s (the read timeout) at least: two fit in the 0.5 s deadline,
    # whatever the machine's load; the deadline, not the five retries, ends the fetch.
    async with raw_server(silent) as base, \
            HttpFetcher(make_settings(timeout=0.5, retries=5)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind == "timeout"
    assert 1 <= info.value.attempts <= 2


async def test_one_byte_a_second_in_headers_times_out(make_settings, raw_server):
    async def drip(reader, writer):
        await read_head(reader)
        for byte in b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n":
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(1)

    async with raw_server(drip) as base, \
            HttpFetcher(make_settings(retries=0, head=False)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind == "timeout"


async def test_fast_header_drip_hits_header_deadline(make_settings, raw_server):
    # A byte every 0.1 s never trips the 2 s between-bytes timer, which cannot fire before
    # the 1 s header deadline (a third of the 3 s deadline) whatever the load: that one does.
    async def drip(reader, writer):
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n")
        for _ in range(100):
            writer.write(b"X")
            await writer.drain()
            await asyncio.sleep(0.1)

    async with raw_server(drip) as base, \
            HttpFetcher(make_settings(retries=0, head=False, timeout=3.0,
                                      read_timeout=2.0)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind == "timeout" and "headers" in info.value.message


async def test_one_byte_a_second_in_body_times_out(make_settings, raw_server):
    async def drip(reader, writer):
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n")
        for _ in range(100):
            writer.write(b"a")
            await writer.drain()
            await asyncio.sleep(1)

    async with raw_server(drip) as base, \
            HttpFetcher(make_settings(retries=0, head=False)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind == "timeout"


async def read_head(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


async def test_503_then_200_succeeds_on_second_attempt(fetcher, app_server):
    async def flaky(request):
        if request.method == "GET" and seen["GET"] == 1:
            return web.Response(status=503)
        return web.Response(body=b"back", content_type="text/plain")

    app, seen = counting_app(flaky)
    async with app_server(app) as base:
        result = await fetcher.fetch(base + "/")
    assert result.body == b"back" and result.attempts == 2 and seen["GET"] == 2


async def test_404_is_not_retried(fetcher, app_server):
    app, seen = counting_app(lambda request: _status(404))
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/missing")
    error = info.value
    assert (error.kind, error.status, error.attempts, seen["GET"]) == ("http_status", 404, 1, 1)


async def _status(status: int, headers: dict | None = None) -> web.Response:
    return web.Response(status=status, headers=headers or {})


async def test_persistent_500_gives_http_status_after_all_attempts(make_settings, app_server):
    app, seen = counting_app(lambda request: _status(500))
    async with app_server(app) as base, HttpFetcher(make_settings(retries=2)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert (info.value.kind, info.value.status, info.value.attempts) == ("http_status", 500, 3)
    assert seen["GET"] == 3


@pytest.mark.parametrize("hint", ["seconds", "date"])
async def test_429_retry_after_is_honoured(make_settings, app_server, hint):
    arrivals: list[float] = []

    async def throttled(request):
        if request.method != "GET":
            return web.Response(status=405)
        arrivals.append(time.monotonic())
        if len(arrivals) == 1:
            value = "1" if hint == "seconds" else formatdate(time.time() + 2, usegmt=True)
            return web.Response(status=429, headers={"Retry-After": value})
        return web.Response(body=b"ok", content_type="text/plain")

    app, _ = counting_app(throttled)
    async with app_server(app) as base, \
            HttpFetcher(make_settings(timeout=5.0, retry_after_cap=3.0)) as client:
        result = await client.fetch(base + "/")
    assert result.attempts == 2 and len(arrivals) == 2
    # Behaviour, measured on the server: the retry did not come before the hinted delay
    # (an HTTP date has one-second resolution, so "now + 2 s" means at least 1 s).
    assert arrivals[1] - arrivals[0] >= 0.95


@pytest.mark.parametrize("head", [False, True])
async def test_a_pause_beyond_what_the_url_may_still_wait_fails_fast_with_status(
        make_settings, app_server, head):
    app, seen = counting_app(lambda request: _status(429, {"Retry-After": "3600"}))
    # Retry-After is cut to 1 s; a URL may wait 1 s of pauses off its 0.5 s deadline.
    settings = make_settings(timeout=0.5, retry_after_cap=1.0, retries=5, head=head)
    async with app_server(app) as base, HttpFetcher(settings) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert (info.value.kind, info.value.status) == ("http_status", 429)
    # The first pause was waited out (off the deadline); the second would end past both the
    # deadline and the allowance: no third request, however many retries were allowed.
    assert seen == ({"HEAD": 1, "GET": 1} if head else {"GET": 2})


@pytest.mark.looptime  # the 0.5 s deadline is the loop's: a busy machine does not spend it
@pytest.mark.parametrize("head", [False, True])
async def test_a_url_waits_out_its_hosts_pause_off_its_deadline(make_settings, app_server, head):
    # One URL asks for 0.1 s, another for 1 s: the host is paused for 1 s, longer than the
    # 0.5 s deadline of either. Waiting out the pause is not the URLs' time: both are served.
    asked = {"/short": "0.1", "/long": "1"}
    seen: Counter = Counter()

    async def pausing(request):
        seen[request.path] += 1
        if seen[request.path] == 1:
            return web.Response(status=429, headers={"Retry-After": asked[request.path]})
        return web.Response(body=b"served", content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", pausing)
    settings = make_settings(timeout=0.5, retry_after_cap=2.0, retries=2, head=head)
    async with app_server(app) as base, HttpFetcher(settings) as client:
        results = await asyncio.gather(*(client.fetch(base + path) for path in asked),
                                       return_exceptions=True)
    assert [getattr(r, "body", r) for r in results] == [b"served", b"served"]
    assert seen == {"/short": 2, "/long": 2}


async def test_429_slows_the_host_for_following_requests(make_settings, app_server):
    arrivals: list[tuple[str, float]] = []

    async def throttled(request):
        arrivals.append((request.path, time.monotonic()))
        if request.path == "/first":
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(body=b"ok", content_type="text/plain")

    app, _ = counting_app(throttled)
    async with app_server(app) as base, \
            HttpFetcher(make_settings(retries=0, head=False, timeout=3.0)) as client:
        with pytest.raises(FetchError):
            await client.fetch(base + "/first")
        await client.fetch(base + "/second")
    assert arrivals[1][0] == "/second" and arrivals[1][1] - arrivals[0][1] >= 0.95


async def test_fetcher_outside_context_is_a_fetch_error():
    with pytest.raises(FetchError) as info:
        await HttpFetcher().fetch("http://example.com/")
    assert info.value.kind == "network"


async def test_binary_get_without_head_is_refused_before_reading(make_settings, app_server):
    async def video(request):
        return web.Response(body=b"\0" * 1000, content_type="video/mp4")

    app, seen = counting_app(video)
    async with app_server(app) as base, HttpFetcher(make_settings(head=False)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/clip")
        everything = HttpFetcher(make_settings(head=False), early_reject=lambda _: False)
        async with everything:
            result = await everything.fetch(base + "/clip")
    assert info.value.kind == "unsupported_type" and result.media_type == "video/mp4"
    assert seen == {"GET": 2}


async def test_endless_body_ends_as_too_large(fetcher, app_server):
    async def endless(request):
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        while True:
            await response.write(b"e" * 8192)

    app, _ = counting_app(endless)
    async with app_server(app) as base:
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(base + "/")
    assert info.value.kind == "too_large"


async def test_body_drip_faster_than_read_timeout_still_ends_at_the_deadline(
        make_settings, raw_server):
    async def drip(reader, writer):
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        for _ in range(1000):
            writer.write(b"1\r\na\r\n")
            await writer.drain()
            await asyncio.sleep(0.1)

    # The between-bytes timer (3 s) cannot fire before the 2 s deadline, whatever the load.
    async with raw_server(drip) as base, \
            HttpFetcher(make_settings(timeout=2.0, read_timeout=3.0, head=False)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind == "timeout" and "within 2 s" in info.value.message

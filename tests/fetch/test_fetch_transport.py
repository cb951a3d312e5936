"""The transport seam: the fetcher, the robots cache and the vendor client over a
FakeTransport (no sockets), every guard still the fetcher's own."""

from __future__ import annotations

import aiohttp
import pytest
from yarl import URL

from pipeline.core.settings import Settings
from pipeline.fetch.base import FetchError
from pipeline.fetch.client import HttpFetcher
from pipeline.fetch.robots import RobotsCache
from pipeline.fetch.transport import FakeResponse, FakeTransport, Request, Transport
from pipeline.providers.http import VendorClient, VendorError
from tests.fetch.conftest import fast_settings

PAGE = b"<html><body><p>over the fake transport</p></body></html>"


def site(routes: dict[str, FakeResponse]):
    """A handler answering by path; anything else is a 404."""
    def answer(request: Request) -> FakeResponse:
        return routes.get(request.url.path, FakeResponse(404))
    return answer


async def test_the_fetcher_sends_its_requests_through_the_transport():
    transport = FakeTransport(site({"/page": FakeResponse(
        200, {"Content-Type": "text/html; charset=utf-8"}, PAGE, chunk_size=7)}))
    assert isinstance(transport, Transport)
    settings = fast_settings(headers=["X-Team: docs"])
    async with HttpFetcher(settings, transport=transport) as fetcher:
        result = await fetcher.fetch("http://127.0.0.1:9/page")
    assert (result.status, result.media_type, result.charset) == (200, "text/html", "utf-8")
    assert result.body == PAGE and result.final_url == "http://127.0.0.1:9/page"
    assert [request.method for request in transport.requests] == ["HEAD", "GET"]
    sent = transport.requests[-1]
    assert sent.headers["User-Agent"] == settings.user_agent and sent.headers["X-Team"] == "docs"
    assert not sent.follow_redirects  # the fetcher judges every hop itself
    assert not transport.closed  # the caller's to close


async def test_redirects_are_followed_and_judged_by_the_fetcher():
    transport = FakeTransport(site({
        "/old": FakeResponse(301, {"Location": "/new"}),
        "/new": FakeResponse(200, {"Content-Type": "text/html"}, PAGE),
        "/away": FakeResponse(302, {"Location": "http://10.0.0.1/inside"}),
    }))
    async with HttpFetcher(fast_settings(head=False), transport=transport) as fetcher:
        result = await fetcher.fetch("http://127.0.0.1:9/old")
        with pytest.raises(FetchError) as refused:
            await fetcher.fetch("http://127.0.0.1:9/away")
    assert result.final_url == "http://127.0.0.1:9/new" and result.body == PAGE
    assert refused.value.kind == "blocked"
    assert [str(request.url) for request in transport.requests] == [
        "http://127.0.0.1:9/old", "http://127.0.0.1:9/new", "http://127.0.0.1:9/away"]


async def test_transport_failures_are_retried_then_typed():
    def disconnects(request: Request) -> FakeResponse:
        raise aiohttp.ServerDisconnectedError()

    transport = FakeTransport(disconnects)
    async with HttpFetcher(fast_settings(head=False, retries=2), transport=transport) as fetcher:
        with pytest.raises(FetchError) as failed:
            await fetcher.fetch("http://127.0.0.1:9/page")
    assert failed.value.kind == "network" and failed.value.attempts == 3
    assert len(transport.requests) == 3


async def test_the_body_cap_holds_over_the_transport():
    big = FakeResponse(200, {"Content-Type": "text/html"}, b"x" * 5000, chunk_size=512)
    transport = FakeTransport(site({"/big": big}))
    async with HttpFetcher(fast_settings(head=False, max_bytes=4096),
                           transport=transport) as fetcher:
        with pytest.raises(FetchError) as failed:
            await fetcher.fetch("http://127.0.0.1:9/big")
    assert failed.value.kind == "too_large"
    assert big.closed and not big.released  # a body not read whole drops its connection


async def test_robots_txt_comes_through_the_transport():
    transport = FakeTransport(site({
        "/robots.txt": FakeResponse(200, {"Content-Type": "text/plain"},
                                    b"User-agent: *\nDisallow: /private\n"),
        "/public": FakeResponse(200, {"Content-Type": "text/html"}, PAGE),
    }))
    async with HttpFetcher(fast_settings(head=False, robots=True),
                           transport=transport) as fetcher:
        assert (await fetcher.fetch("http://127.0.0.1:9/public")).body == PAGE
        with pytest.raises(FetchError) as refused:
            await fetcher.fetch("http://127.0.0.1:9/private")
    assert refused.value.kind == "robots"
    assert [request.url.path for request in transport.requests] == ["/robots.txt", "/public"]


async def test_the_robots_cache_needs_only_its_callables():
    fetched: list[tuple[str, int]] = []
    delays: list[tuple[str, float]] = []

    async def fetch_robots(url: URL, max_bytes: int) -> tuple[int, bytes | None]:
        fetched.append((str(url), max_bytes))
        if url.host == "down.test":
            return 503, None
        return 200, b"User-agent: *\nCrawl-delay: 3\nDisallow: /no\n"

    robots = RobotsCache(fetch_robots, lambda url, seconds: delays.append((url.host, seconds)),
                         user_agent="test-agent", max_bytes=1000)
    await robots.check(URL("http://up.test/yes"))
    await robots.check(URL("http://up.test/also"))
    with pytest.raises(FetchError, match="disallowed"):
        await robots.check(URL("http://up.test/no"))
    with pytest.raises(FetchError, match="disallowed"):  # unreachable: everything disallowed
        await robots.check(URL("http://down.test/yes"))
    assert fetched == [("http://up.test/robots.txt", 1000), ("http://down.test/robots.txt", 1000)]
    assert delays == [("up.test", 3.0), ("up.test", 3.0)]


async def test_the_fake_transport_follows_redirects_when_asked():
    transport = FakeTransport(site({
        "/form": FakeResponse(303, {"Location": "/done"}),
        "/done": FakeResponse(200, {}, b"ok"),
    }))
    response = await transport.send(Request("POST", URL("http://api.test/form"), body=b"a=1",
                                            follow_redirects=True))
    assert response.status == 200 and response.url == URL("http://api.test/done")
    assert [(r.method, r.body) for r in transport.requests] == [("POST", b"a=1"), ("GET", None)]


async def test_the_vendor_client_goes_through_the_transport():
    answers = iter([FakeResponse(503, {"Retry-After": "0"}),
                    FakeResponse(200, {"Content-Type": "application/json"}, b'{"ok": true}')])
    transport = FakeTransport(lambda request: next(answers))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    client = VendorClient("acme", Settings(retries=2), sleep=sleep, transport=transport)
    answer = await client.request_json("POST", "https://api.acme.test/v1/search",
                                       params={"page": "2"}, json_body={"q": "rust"},
                                       headers={"Authorization": "Bearer k"})
    await client.aclose()
    assert answer == {"ok": True} and len(waits) == 1 and not transport.closed
    first, second = transport.requests
    assert first == second and first.follow_redirects
    assert str(first.url) == "https://api.acme.test/v1/search?page=2"
    assert first.body == b'{"q": "rust"}'
    assert first.headers["Content-Type"] == "application/json"
    assert first.headers["Authorization"] == "Bearer k"


async def test_a_vendor_url_that_does_not_parse_is_a_fatal_provider_error():
    transport = FakeTransport(lambda request: FakeResponse(200))
    client = VendorClient("acme", Settings(), transport=transport)
    with pytest.raises(VendorError, match="invalid endpoint URL") as failed:
        await client.request("GET", "http://[::1/search")
    assert failed.value.fatal and transport.requests == []


async def test_the_vendor_clients_own_headers_yield_to_the_callers_in_any_case():
    transport = FakeTransport(lambda request: FakeResponse(200, {}, b"{}"))
    client = VendorClient("acme", Settings(), transport=transport)
    await client.request_json("POST", "https://api.acme.test/v1/search", json_body={"q": "x"},
                              headers={"user-agent": "mine/1",
                                       "content-type": "application/json; charset=utf-8"})
    await client.request_json("POST", "https://api.acme.test/v1/form", data={"q": "x"},
                              headers={"CONTENT-TYPE": "application/x-www-form-urlencoded"})
    for sent in transport.requests:  # one of each header, as aiohttp's session sent them
        names = [name.lower() for name in sent.headers]
        assert names.count("user-agent") == 1 and names.count("content-type") == 1
    json_call, form_call = transport.requests
    assert dict(json_call.headers) == {"user-agent": "mine/1",
                                       "content-type": "application/json; charset=utf-8"}
    assert form_call.headers["User-Agent"] == Settings().user_agent


async def test_the_fake_transport_drops_credentials_on_a_redirect_to_another_origin():
    transport = FakeTransport(lambda request: {
        "/here": FakeResponse(302, {"Location": "/there"}),
        "/there": FakeResponse(302, {"Location": "http://elsewhere.test/away"}),
    }.get(request.url.path, FakeResponse(200)))
    secrets = {"authorization": "Bearer k", "Cookie": "s=1", "Proxy-Authorization": "Basic x"}
    await transport.send(Request("GET", URL("http://api.test/here"),
                                 {"Accept": "*/*", **secrets}, follow_redirects=True))
    same, also_same, other = (dict(request.headers) for request in transport.requests)
    assert same == also_same == {"Accept": "*/*", **secrets}
    assert other == {"Accept": "*/*"}  # as aiohttp's session does when the origin changes

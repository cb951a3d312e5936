"""The shared vendor HTTP client: error mapping, retries honouring Retry-After, caps."""

import pytest

from pipeline.core.settings import Settings
from pipeline.providers.http import VendorClient, VendorError, join_url
from tests.support.forward_proxy import forward_proxy
from tests.support.scripted_server import reply_json, reply_slow, reply_text


def client(settings, sleeps, **kw):
    return VendorClient("acme", settings, sleep=sleeps, **kw)


async def test_json_round_trip(server, settings, sleeps):
    server.route("POST", "/v1/x", reply_json({"ok": 1}))
    http = client(settings, sleeps)
    try:
        data = await http.request_json("POST", server.url + "/v1/x", json_body={"a": 1},
                                       headers={"X-Key": "k"})
    finally:
        await http.aclose()
    assert data == {"ok": 1}
    assert server.requests[0].json() == {"a": 1}
    assert server.requests[0].headers["X-Key"] == "k"


@pytest.mark.parametrize("status, cause, retryable", [
    (401, "invalid or expired key", False),
    (403, "invalid or expired key", False),
    (402, "payment required", False),
    (400, "HTTP 400", False),
    (404, "HTTP 404", False),
])
async def test_status_mapping_without_retry(server, settings, sleeps, status, cause, retryable):
    server.route("GET", "/s", reply_json({"error": "nope"}, status=status))
    http = client(settings, sleeps)
    with pytest.raises(VendorError) as info:
        await http.request_json("GET", server.url + "/s")
    await http.aclose()
    err = info.value
    assert err.kind == "provider"
    assert err.message.startswith("acme: ") and cause in err.message and "nope" in err.message
    assert err.retryable is retryable
    assert len(server.requests) == 1 and sleeps.waits == []


async def test_429_honours_retry_after_then_succeeds(server, settings, sleeps):
    server.route("GET", "/s", reply_json({}, status=429, headers={"Retry-After": "7"}),
                 reply_json({"ok": True}))
    http = client(settings, sleeps)
    assert await http.request_json("GET", server.url + "/s") == {"ok": True}
    await http.aclose()
    assert sleeps.waits == [7.0]
    assert len(server.requests) == 2


async def test_429_exhausted_is_retryable_rate_limited(server, sleeps):
    settings = Settings(retries=2, retry_after_cap=3)
    server.route("GET", "/s", reply_json({}, status=429, headers={"Retry-After": "120"}))
    http = client(settings, sleeps)
    with pytest.raises(VendorError) as info:
        await http.request_json("GET", server.url + "/s")
    await http.aclose()
    assert "rate limited" in info.value.message and info.value.retryable
    assert sleeps.waits == [3.0, 3.0]  # the hint is capped by retry_after_cap
    assert len(server.requests) == 3


async def test_500_retried_then_reported(server, settings, sleeps):
    server.route("GET", "/s", reply_text("boom", status=500))
    http = client(settings, sleeps)
    with pytest.raises(VendorError) as info:
        await http.request_json("GET", server.url + "/s")
    await http.aclose()
    assert info.value.message == "acme: HTTP 500" and info.value.retryable
    assert len(server.requests) == 2 and len(sleeps.waits) == 1


async def test_bad_json(server, settings, sleeps):
    server.route("GET", "/s", reply_text("<html>not json</html>"))
    http = client(settings, sleeps)
    with pytest.raises(VendorError, match="acme: unparseable response"):
        await http.request_json("GET", server.url + "/s")
    await http.aclose()


async def test_timeout_is_a_retryable_provider_error(server, sleeps):
    settings = Settings(retries=0, timeout=0.3, connect_timeout=0.3, read_timeout=0.3)
    server.route("GET", "/s", reply_slow(2))
    http = client(settings, sleeps)
    with pytest.raises(VendorError) as info:
        await http.request_json("GET", server.url + "/s")
    await http.aclose()
    assert info.value.message == "acme: timed out" and info.value.retryable


async def test_connection_refused_is_network_error(settings, sleeps):
    # A closed port on loopback: nothing listens there.
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    http = client(Settings(retries=0), sleeps)
    with pytest.raises(VendorError, match="acme: network error"):
        await http.request_json("GET", f"http://127.0.0.1:{port}/s")
    await http.aclose()


async def test_body_cap(server, settings, sleeps):
    server.route("GET", "/s", reply_text("x" * 5000))
    http = client(settings, sleeps, max_body=1000)
    with pytest.raises(VendorError, match="larger than 1000 bytes"):
        await http.request("GET", server.url + "/s")
    await http.aclose()


@pytest.mark.parametrize("base, path, expected", [
    ("http://h:8080", "/search", "http://h:8080/search"),
    ("http://h:8080/", "search", "http://h:8080/search"),
    ("https://proxy/prefix/", "/res/v1/web/search", "https://proxy/prefix/res/v1/web/search"),
])
def test_join_url(base, path, expected):
    assert join_url(base, path) == expected


@pytest.mark.parametrize("kind", ["http", "socks5"])
async def test_vendor_calls_go_through_the_proxy(server, sleeps, kind):
    if kind == "socks5":
        pytest.importorskip("aiohttp_socks", reason="the socks extra is not installed")
    server.route("GET", "/v1/q", reply_json({"ok": 1}))
    async with forward_proxy(kind) as proxy:
        settings = Settings(retries=0, timeout=5, proxy=proxy.url)
        http = client(settings, sleeps)
        try:
            assert await http.request_json("GET", server.url + "/v1/q") == {"ok": 1}
        finally:
            await http.aclose()
    port = server.url.rsplit(":", 1)[1]
    expected = server.url + "/v1/q" if kind == "http" else f"127.0.0.1:{port}"
    assert [seen.target for seen in proxy.seen] == [expected]

"""Resolved addresses are judged before any socket is opened (DNS rebinding, fail closed)."""

from __future__ import annotations

import asyncio
import socket

import pytest
from aiohttp import web

from pipeline.fetch import FetchError, HttpFetcher, NetworkPolicy
from pipeline.fetch.resolver import AddressBlocked, PolicyResolver
from tests.support.resolvers import FakeResolver

pytestmark = pytest.mark.usefixtures("connect_log")


async def hello(request: web.Request) -> web.Response:
    return web.Response(body=b"hello", content_type="text/plain")


def hello_app() -> web.Application:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", hello)
    return app


@pytest.mark.parametrize("address, reason", [
    ("10.0.0.1", "private"),
    ("169.254.169.254", "metadata"),
    ("100.100.100.200", "metadata"),
    ("fd00:ec2::254", "metadata"),
    ("127.0.0.2", "loopback"),
    ("::1", "loopback"),
    ("::ffff:169.254.169.254", "metadata"),
    ("2002:a00:1::", "embedded"),  # 6to4 around 10.0.0.1
    ("224.0.0.1", "multicast"),
])
async def test_name_resolving_to_refused_address_is_blocked_without_connecting(
        make_settings, app_server, connect_log, address, reason):
    resolver = FakeResolver({"evil.test": [address]})
    async with app_server(hello_app()) as base, \
            HttpFetcher(make_settings(), resolver=resolver) as client:
        port = base.rsplit(":", 1)[1]
        with pytest.raises(FetchError) as info:
            await client.fetch(f"http://evil.test:{port}/")
    assert info.value.kind == "blocked" and reason in info.value.message
    assert resolver.asked and connect_log == []  # resolved, judged, never connected


async def test_allowed_resolution_connects_only_to_allowed_addresses(
        make_settings, app_server, connect_log):
    # A rebinding-style answer mixing a private and an allowed address: only the latter is used.
    resolver = FakeResolver({"mixed.test": ["10.0.0.1", "127.0.0.1", "169.254.169.254"]})
    async with app_server(hello_app()) as base, \
            HttpFetcher(make_settings(), resolver=resolver) as client:
        port = base.rsplit(":", 1)[1]
        result = await client.fetch(f"http://mixed.test:{port}/")
    assert result.body == b"hello" and set(connect_log) == {"127.0.0.1"}


async def test_dns_failure_fails_closed(make_settings, connect_log):
    async with HttpFetcher(make_settings(), resolver=FakeResolver({})) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch("http://nowhere.test/")
    assert info.value.kind == "network" and "DNS" in info.value.message
    assert connect_log == []


async def test_localhost_refused_by_default(make_settings, app_server, connect_log):
    async with app_server(hello_app()) as base, \
            HttpFetcher(make_settings(allow_net=[])) as client:
        port = base.rsplit(":", 1)[1]
        with pytest.raises(FetchError) as info:
            await client.fetch(f"http://localhost:{port}/")
        with pytest.raises(FetchError) as literal:
            await client.fetch(f"{base}/")
    assert info.value.kind == "blocked" and "loopback" in info.value.message
    assert literal.value.kind == "blocked"
    for refused in (info.value, literal.value):  # both name the way out
        assert "--allow-net 127.0.0.1/32 or --allow-private" in refused.message
    assert connect_log == []


async def test_localhost_allowed_with_allow_net(make_settings, app_server, connect_log):
    async with app_server(hello_app()) as base, \
            HttpFetcher(make_settings(allow_net=["127.0.0.1/32"])) as client:
        port = base.rsplit(":", 1)[1]
        result = await client.fetch(f"http://localhost:{port}/")
    assert result.body == b"hello" and set(connect_log) == {"127.0.0.1"}


async def test_allow_private_opens_loopback(make_settings, app_server):
    async with app_server(hello_app()) as base, \
            HttpFetcher(make_settings(allow_net=[], allow_private=True)) as client:
        result = await client.fetch(base + "/")
    assert result.body == b"hello"


async def test_hex_spelling_of_loopback_refused_even_when_loopback_allowed(
        fetcher, app_server, connect_log):
    async with app_server(hello_app()) as base:
        port = base.rsplit(":", 1)[1]
        with pytest.raises(FetchError) as info:
            await fetcher.fetch(f"http://0x7f000001:{port}/")
    assert info.value.kind == "blocked" and connect_log == []


async def test_policy_resolver_reports_the_reason():
    resolver = PolicyResolver(NetworkPolicy(), FakeResolver({"a.test": ["192.168.1.1"]}))
    with pytest.raises(AddressBlocked) as info:
        await resolver.resolve("a.test", 80)
    assert "private" in info.value.reason


async def test_policy_resolver_empty_answer_fails_closed():
    resolver = PolicyResolver(NetworkPolicy(), FakeResolver({"a.test": []}))
    with pytest.raises(OSError, match="no address"):
        await resolver.resolve("a.test", 80)


async def test_a_lookup_that_times_out_is_a_temporary_failure():
    class Silent(FakeResolver):
        async def resolve(self, host, port=0, family=socket.AF_INET):
            await asyncio.Event().wait()  # never answers

    resolver = PolicyResolver(NetworkPolicy(), Silent({}), timeout=0.01)
    with pytest.raises(socket.gaierror) as info:
        await resolver.resolve("slow.test", 80)
    assert info.value.errno == socket.EAI_AGAIN  # retryable, as the resolver's own EAI_AGAIN

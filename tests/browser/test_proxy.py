"""The policy proxy on its own (no browser): what it forwards, what it refuses without
opening a connection, and the byte budget it counts."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from pipeline.browser.proxy import PageBudget, PolicyProxy
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.resolver import PolicyResolver
from tests.browser.conftest import (
    ALLOW_NET,
    ALLOWED,
    BLOCKED,
    ConnectionCounter,
    serve,
)
from tests.support.resolvers import FakeResolver


async def _proxy(resolver: FakeResolver, **options) -> tuple[PolicyProxy, int]:
    policy = NetworkPolicy(ALLOW_NET)
    proxy = PolicyProxy(policy, PolicyResolver(policy, resolver), connect_timeout=2.0,
                        **options)
    return proxy, await proxy.start()


async def _exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` to the proxy; everything it answers until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    try:
        async with asyncio.timeout(10):
            return await reader.read(-1)
    finally:
        writer.close()


def _hello_app(body: bytes = b"hello") -> web.Application:
    app = web.Application()

    async def hello(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="text/plain",
                            headers={"X-Seen-Path": request.path_qs})

    app.router.add_route("*", "/{tail:.*}", hello)
    return app


@pytest.mark.parametrize("request_line", [
    "GET http://{blocked}:{port}/x HTTP/1.1",  # a subresource or a redirect hop
    "CONNECT {blocked}:{port} HTTP/1.1",  # https, a WebSocket through a tunnel, a preconnect
    "GET http://evil.test:{port}/ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade",
    "CONNECT evil.test:{port} HTTP/1.1",  # a name that resolves to the blocked address
    "GET http://2130706434:{port}/ HTTP/1.1",  # 127.0.0.2 spelled as one number
    "CONNECT [::ffff:127.0.0.2]:{port} HTTP/1.1",  # IPv4-mapped IPv6
    "GET ftp://{blocked}:{port}/ HTTP/1.1",  # not http
])
async def test_blocked_targets_get_403_and_no_connection(resolver, request_line):
    async with ConnectionCounter() as blocked:
        proxy, port = await _proxy(resolver)
        budget = proxy.budget = PageBudget(1000)
        try:
            line = request_line.format(blocked=BLOCKED, port=blocked.port)
            answer = await _exchange(port, f"{line}\r\nHost: x\r\n\r\n".encode())
        finally:
            await proxy.close()
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert blocked.connections == 0
    assert budget.refused == 1 and proxy.refusals == 1


async def _through_proxy(resolver: FakeResolver, body: bytes, request: str, limit: int
                         ) -> tuple[bytes, PageBudget]:
    """``request`` (``{port}``: the server's) through a proxy, to a server answering
    ``body``: the proxy's answer and the page budget it counted into."""
    async with serve(_hello_app(body)) as server_port:
        proxy, port = await _proxy(resolver)
        budget = proxy.budget = PageBudget(limit)
        try:
            return await _exchange(port, request.format(port=server_port).encode()), budget
        finally:
            await proxy.close()


async def test_allowed_request_is_forwarded_in_origin_form_and_counted(resolver):
    answer, budget = await _through_proxy(
        resolver, b"x" * 5000, "GET http://site.test:{port}/a?b=1 HTTP/1.1\r\nHost: "
        "site.test:{port}\r\nProxy-Connection: keep-alive\r\n\r\n", 1_000_000)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert b"X-Seen-Path: /a?b=1" in answer
    assert answer.endswith(b"x" * 5000)
    assert 5000 < budget.used < 6000  # the answer's head and body
    assert resolver.asked == ["site.test"]


async def test_connect_tunnels_to_the_address_judged_once(resolver):
    # A name that rebinds: allowed at the first lookup, blocked after. The proxy looks it up
    # once and connects to what it judged.
    resolver.table["rebind.test"] = [[ALLOWED], [BLOCKED]]
    async with serve(_hello_app()) as server_port, ConnectionCounter() as blocked:
        proxy, port = await _proxy(resolver)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"CONNECT rebind.test:{server_port} HTTP/1.1\r\n\r\n".encode())
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200 ")
            writer.write(b"GET /inside HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = await reader.read(-1)
            writer.close()
        finally:
            await proxy.close()
    assert b"X-Seen-Path: /inside" in answer and answer.endswith(b"hello")
    assert resolver.asked == ["rebind.test"]
    assert blocked.connections == 0


async def test_a_page_over_its_budget_is_cut_off(resolver):
    answer, budget = await _through_proxy(
        resolver, b"y" * 200_000, f"GET http://{ALLOWED}:{{port}}/big HTTP/1.1\r\nHost: x"
        "\r\n\r\n", 50_000)
    assert budget.exceeded.is_set()
    assert len(answer) <= 50_000 + 64 * 1024  # at most one chunk past the limit
    assert len(answer) < 200_000


async def test_the_browser_wide_proxy_refuses_everything(resolver):
    async with serve(_hello_app()) as server_port:
        proxy, port = await _proxy(resolver, deny_all=True)
        try:
            answer = await _exchange(
                port, f"GET http://{ALLOWED}:{server_port}/ HTTP/1.1\r\nHost: x\r\n\r\n"
                .encode())
        finally:
            await proxy.close()
    assert answer.startswith(b"HTTP/1.1 403 ")

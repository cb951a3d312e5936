"""The MCP server's calls share one politeness budget per host (its ``SharedRuntime``)."""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web
from mcp import Client

from pipeline.agent.mcp_server import web_server
from pipeline.core.settings import Settings
from tests.support.pages import serve

PER_HOST = 2
CALLS, URLS_PER_CALL = 12, 3
HOLD = 0.05  # how long a request waits for a client that breaks the limit to show it


def counting_app() -> tuple[web.Application, dict[str, int]]:
    """Counts requests in flight and open connections at once. A request is held until more
    than ``PER_HOST`` are in flight (a broken limit, shown whatever the machine's load) or
    ``HOLD`` s pass: a slow client can only hide a violation, never fake one."""
    stats = {"active": 0, "peak": 0, "connections": 0, "total": 0}
    transports: set[object] = set()
    crowded = asyncio.Event()

    async def page(request: web.Request) -> web.Response:
        stats["active"] += 1
        stats["total"] += 1
        stats["peak"] = max(stats["peak"], stats["active"])
        transports.add(request.transport)
        stats["connections"] = max(stats["connections"],
                                   sum(1 for t in transports if not t.is_closing()))
        if stats["active"] > PER_HOST:
            crowded.set()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(crowded.wait(), HOLD)
            body = f"<html><title>{request.path}</title><p>{'Herons fish. ' * 40}</p></html>"
            return web.Response(text=body, content_type="text/html")
        finally:
            stats["active"] -= 1

    app = web.Application()
    app.router.add_get("/{name}", page)
    return app, stats


async def test_concurrent_calls_share_the_servers_per_host_limit(tmp_path):
    app, stats = counting_app()
    settings = Settings(allow_net=["127.0.0.1/32"], per_host=PER_HOST, rate=1000, head=False,
                        cache=False, timeout=120, connect_timeout=60, read_timeout=60)
    async with serve(app) as base, Client(web_server(settings, untrusted=False)) as client:
        calls = [client.call_tool("web_extract", {
            "urls": [f"{base}/c{call}-u{n}" for n in range(URLS_PER_CALL)]})
            for call in range(CALLS)]
        results = await asyncio.gather(*calls)
    assert [r.is_error for r in results] == [False] * CALLS
    assert stats["total"] == CALLS * URLS_PER_CALL
    assert stats["peak"] <= PER_HOST and stats["connections"] <= PER_HOST, stats


def header_logging_app() -> tuple[web.Application, list[str | None]]:
    seen: list[str | None] = []

    async def page(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        body = f"<html><title>t</title><p>{'Herons fish. ' * 40}</p></html>"
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", page)
    return app, seen


async def test_credentials_go_only_to_the_hosts_the_user_gave():
    # a model names the URLs (and a page it read can steer it): the token stays home
    app, seen = header_logging_app()
    async with serve(app) as base:
        port = base.rsplit(":", 1)[1]
        for hosts, sent in (([], None), ([f"127.0.0.1:{port}"], "Bearer SECRET")):
            seen.clear()
            settings = Settings(allow_net=["127.0.0.1/32"], rate=1000, cache=False,
                                headers={"Authorization": "Bearer SECRET"},
                                credential_hosts=hosts)
            async with Client(web_server(settings, untrusted=False)) as client:
                result = await client.call_tool("web_extract", {"urls": [f"{base}/page"]})
            assert not result.is_error
            assert seen and set(seen) == {sent}, (hosts, seen)

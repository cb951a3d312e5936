"""Local servers for the fetch tests: real aiohttp apps and raw asyncio sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from pipeline.core.settings import Settings
from pipeline.fetch.client import HttpFetcher

LOOPBACK = ["127.0.0.1/32"]


def fast_settings(**overrides) -> Settings:
    """Small limits so every hostile case ends in well under two seconds."""
    values = dict(allow_net=LOOPBACK, timeout=2.0, connect_timeout=0.5, read_timeout=0.3,
                  retries=2, rate=1000.0, max_bytes=64 * 1024, retry_after_cap=2.0)
    values.update(overrides)
    return Settings(**values)


@asynccontextmanager
async def serve_app(app: web.Application) -> AsyncIterator[str]:
    """Run ``app`` on 127.0.0.1 (free port); yield its base URL."""
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serve_raw(handler: Handler) -> AsyncIterator[str]:
    """A raw TCP server on 127.0.0.1 running ``handler`` per connection; yield its base URL."""
    tasks: set[asyncio.Task] = set()

    async def guarded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tasks.add(asyncio.current_task())  # type: ignore[arg-type]
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(guarded, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """The request head (up to the blank line)."""
    return await reader.readuntil(b"\r\n\r\n")


@pytest.fixture
def settings() -> Settings:
    return fast_settings()


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[HttpFetcher]:
    async with HttpFetcher(settings) as client:
        yield client


# Deadlines any machine load meets, where a test counts requests or outcomes and tests no
# deadline: a read slowed by a busy machine must not turn into a retry or a timeout.
ROOM = {"timeout": 60.0, "connect_timeout": 30.0, "read_timeout": 30.0}


@pytest.fixture
def make_settings(request: pytest.FixtureRequest) -> Callable[..., Settings]:
    """``fast_settings``; with deadlines from ``ROOM`` (overridable) for a ``patient`` test."""
    if request.node.get_closest_marker("patient") is None:
        return fast_settings
    return lambda **overrides: fast_settings(**{**ROOM, **overrides})


@pytest.fixture
def app_server():
    return serve_app


@pytest.fixture
def raw_server():
    return serve_raw


@pytest.fixture
async def connect_log(monkeypatch) -> list[str]:
    """Addresses the code under test opened sockets to. Doubles as a safety net: anything
    but 127.0.0.1 is refused here, so even a broken policy sends no packet elsewhere."""
    loop = asyncio.get_running_loop()
    original = loop.sock_connect
    seen: list[str] = []

    async def guarded(sock, address):
        seen.append(address[0])
        if address[0] != "127.0.0.1":
            raise ConnectionRefusedError(f"test guard refused {address[0]}")
        return await original(sock, address)

    monkeypatch.setattr(loop, "sock_connect", guarded)
    return seen

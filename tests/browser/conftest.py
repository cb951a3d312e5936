"""Servers for the browser tests: an allowed loopback address, a blocked one that counts the
connections it is offered, and (for tests that drive Chromium) one browser shared by every
test that is not about the browser's lifecycle."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import pytest_asyncio
from aiohttp import web

from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings
from tests.support.resolvers import FakeResolver

ALLOWED = "127.0.0.1"
OTHER_ALLOWED = "127.0.0.3"
BLOCKED = "127.0.0.2"  # loopback too, but outside --allow-net: the policy refuses it
ALLOW_NET = [f"{ALLOWED}/32", f"{OTHER_ALLOWED}/32"]
NAMES = {"site.test": [ALLOWED], "cdn.site.test": [OTHER_ALLOWED], "evil.test": [BLOCKED]}


def render_settings(**overrides) -> Settings:
    values = dict(allow_net=ALLOW_NET, render="auto", timeout=20.0, render_wait=5.0,
                  connect_timeout=2.0, read_timeout=5.0, rate=1000.0, retries=0)
    values.update(overrides)
    return Settings(**values)


@asynccontextmanager
async def serve(app: web.Application, host: str = ALLOWED) -> AsyncIterator[int]:
    """Run ``app`` on ``host`` (a free port); yield the port."""
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.2)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


class ConnectionCounter:
    """A TCP server on the blocked address that counts every connection it accepts (a
    preconnect that sends nothing counts too) and answers nothing."""

    def __init__(self) -> None:
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ConnectionCounter:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            writer.close()

        self._server = await asyncio.start_server(accept, BLOCKED, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
def resolver() -> FakeResolver:
    return FakeResolver(dict(NAMES))


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium the tests drive; skipped with the reason when there is none."""
    from pipeline.browser.locate import check_rendering

    try:
        return check_rendering(Settings(render="auto"))
    except PipelineError as exc:
        pytest.skip(f"no browser to drive: {exc.message}")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def shared_renderer(chromium):
    """One renderer (one browser) for every test that is not about the browser's life; a
    test gives it its own settings with :func:`using`."""
    from pipeline.browser.renderer import Renderer

    async with Renderer(render_settings(), resolver=FakeResolver(dict(NAMES))) as renderer:
        yield renderer


@pytest.fixture
def using(shared_renderer):
    """``using(settings)``: the shared renderer, held to ``settings`` for this test."""
    original = shared_renderer.settings

    def give(settings: Settings):
        shared_renderer.settings = settings
        return shared_renderer

    yield give
    shared_renderer.settings = original

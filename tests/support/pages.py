"""Canned pages and a local aiohttp server for tests of every folder."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import TypeVar

from aiohttp import web

from pipeline.fetch.base import FetchResult

T = TypeVar("T")


def page(url: str, body: bytes, media_type: str | None = "text/plain", **extra) -> FetchResult:
    """A canned 200 response for FakeFetcher routes."""
    return FetchResult(url=url, final_url=extra.pop("final_url", url), status=200,
                       media_type=media_type, charset=None, body=body, **extra)


def html_site(html: str, path: str = "/{name}") -> web.Application:
    """An app answering GET ``path`` (a route pattern) with ``html``."""
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html")

    app = web.Application()
    app.router.add_get(path, page)
    return app


@asynccontextmanager
async def serve(app: web.Application):
    """Run ``app`` on 127.0.0.1 (a free port); yield its base URL."""
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@contextmanager
def in_thread(opened: AbstractAsyncContextManager[T]) -> Iterator[T]:
    """Enter ``opened`` (e.g. ``serve(app)``) on an event loop of its own in a daemon thread,
    so that code needing the main thread (the batch command's signal handlers) runs here
    meanwhile; yield what it yields, and exit it on that loop after."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-server", daemon=True)
    thread.start()
    try:
        value = asyncio.run_coroutine_threadsafe(opened.__aenter__(), loop).result(30)
        try:
            yield value
        finally:
            asyncio.run_coroutine_threadsafe(opened.__aexit__(None, None, None),
                                             loop).result(30)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()

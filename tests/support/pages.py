"""Canned pages and a local aiohttp server for tests of every folder."""

from __future__ import annotations

from contextlib import asynccontextmanager

from aiohttp import web

from pipeline.fetch.base import FetchResult


def page(url: str, body: bytes, media_type: str | None = "text/plain", **extra) -> FetchResult:
    """A canned 200 response for FakeFetcher routes."""
    return FetchResult(url=url, final_url=extra.pop("final_url", url), status=200,
                       media_type=media_type, charset=None, body=body, **extra)


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

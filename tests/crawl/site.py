"""Generated loopback sites for crawl tests: pages by path, each a reply, every request
logged."""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from pipeline.core.settings import Settings

LOCAL = Settings(allow_private=True, retries=0, timeout=10, head=False, detect_lang=False,
                 concurrency=8, per_host=8)
PROSE = ("This page explains one part of the manual in plain sentences, so that a reader "
         "who arrives here from a search engine can follow along without any other page. ")


def html(title: str, links: list[str] = (), *, text: str | None = None,
         head: str = "", nofollow: list[str] = ()) -> str:
    """A page with a title, a paragraph of prose (distinct per title) and links."""
    anchors = "".join(f'<li><a href="{href}">link {i}</a></li>' for i, href in enumerate(links))
    anchors += "".join(f'<li><a rel="nofollow" href="{href}">nf {i}</a></li>'
                       for i, href in enumerate(nofollow))
    prose = text if text is not None else f"{title}. " + PROSE * 3
    return (f"<html><head><title>{title}</title>{head}</head><body><nav><ul>{anchors}</ul>"
            f"</nav><article><h1>{title}</h1><p>{prose}</p></article></body></html>")


Reply = Callable[[web.Request], Any]


@dataclass
class Site:
    """``pages``: path (with query, as requested) → HTML text, or a callable reply."""

    pages: dict[str, str | Reply] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    server: TestServer | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        key = request.path_qs
        self.hits[key] += 1
        page = self.pages.get(key)
        if page is None:
            return web.Response(status=404, text="not found")
        if callable(page):
            reply = page(request)
            return await reply if inspect.isawaitable(reply) else reply
        return web.Response(text=page, content_type="text/html")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return app

    async def start(self) -> Site:
        self.server = TestServer(self.app(), host="127.0.0.1")
        await self.server.start_server()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()


def redirect(location: str, status: int = 301) -> Reply:
    def reply(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, headers={"Location": location})
    return reply


def raw(body: bytes | str, content_type: str, status: int = 200) -> Reply:
    def reply(request: web.Request) -> web.StreamResponse:
        data = body.encode() if isinstance(body, str) else body
        return web.Response(body=data, status=status, content_type=content_type)
    return reply


def slow(text: str, seconds: float) -> Reply:
    """A page that answers after ``seconds`` (so a crawl can be stopped mid-way)."""
    async def reply(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return web.Response(text=text, content_type="text/html")
    return reply

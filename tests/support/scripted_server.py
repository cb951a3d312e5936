"""A scripted HTTP server on 127.0.0.1 standing in for vendor APIs in tests.

``server.route("GET", "/path", reply, reply2, ...)``: successive requests get successive
replies (the last one repeats). A reply is an ``aiohttp.web.Response`` or an async callable
taking the request. ``server.requests`` records what arrived.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def reply_json(data: Any, status: int = 200, headers: dict[str, str] | None = None):
    return lambda: web.json_response(data, status=status, headers=headers)


def reply_text(text: str, status: int = 200, content_type: str = "text/html",
               headers: dict[str, str] | None = None):
    return lambda: web.Response(text=text, status=status, content_type=content_type,
                                headers=headers)


def reply_slow(seconds: float):
    async def slow():
        await asyncio.sleep(seconds)
        return web.json_response({})
    return slow


class ScriptedServer:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Any]] = {}
        self.requests: list[Seen] = []
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._server = TestServer(app, host="127.0.0.1")

    @property
    def url(self) -> str:
        return str(self._server.make_url("")).rstrip("/")

    def route(self, method: str, path: str, *replies: Any) -> None:
        self.routes[(method, path)] = list(replies)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append(Seen(request.method, request.path, dict(request.query),
                                  dict(request.headers), body))
        replies = self.routes.get((request.method, request.path))
        if not replies:
            return web.Response(status=404, text="no route")
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        result = reply()
        if asyncio.iscoroutine(result):
            result = await result
        return result

    async def start(self) -> ScriptedServer:
        await self._server.start_server()
        return self

    async def close(self) -> None:
        await self._server.close()

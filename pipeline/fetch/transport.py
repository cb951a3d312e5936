"""The HTTP transport port: one request out, its response back. It is the seam under the page
fetcher (:class:`~pipeline.fetch.client.HttpFetcher`) and the vendor client
(:class:`~pipeline.providers.http.VendorClient`), as httpx's transports are under its client:
both build every request themselves (headers, redirects hop by hop for pages, caps,
retries, error mapping) and only sending it is the transport's.

Implementations: :class:`AiohttpTransport` (the real one, over an aiohttp session; what
both use unless given another) and :class:`FakeTransport` (a handler answers each request:
for tests, and for users who test their code against ours without a network).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from typing import Protocol, runtime_checkable

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_FAKE_REDIRECTS = 10
# what a followed redirect to another origin does not carry
_ORIGIN_ONLY_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})


@dataclass(frozen=True)
class Request:
    """One HTTP request as it goes on the wire: ``headers`` are all of its headers (the
    caller's defaults included); ``proxy`` an http(s) proxy for it, None for none."""

    method: str
    url: URL
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    proxy: URL | None = None
    follow_redirects: bool = False


class Response(Protocol):
    """A response whose headers have arrived: ``status``, ``headers`` (case-insensitive, in
    the order received), ``url`` (the request's, or where followed redirects ended), and
    for an archive (``--warc-out``) the status line's ``reason`` and ``version``
    (``"HTTP/1.1"``).
    :meth:`chunks` streams the body once (without its transfer coding, still in its content
    coding); then :meth:`release` (the body was read whole: the connection may be reused)
    or :meth:`close` (drop it; a no-op after ``release``). Reading may raise the same
    exceptions as :meth:`Transport.send`."""

    status: int
    headers: CIMultiDictProxy[str]
    url: URL
    reason: str | None
    version: str

    def chunks(self) -> AsyncIterator[bytes]: ...

    def release(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Transport(Protocol):
    """Contract of a transport.

    ``send(request)`` sends the request exactly as given (no headers of its own beyond what
    HTTP needs; redirects followed only when ``request.follow_redirects``) and returns the
    :class:`Response` once its headers arrived; every status is an answer, never an
    exception. A request that fails raises what aiohttp's client raises
    (``aiohttp.ClientError`` subclasses, ``TimeoutError``, ``OSError``): the callers map
    those to their error kinds. ``send`` is called concurrently. ``aclose()`` frees the
    connections; a transport is closed by whoever made it (a fetcher or vendor client closes
    only the one it built).
    """

    async def send(self, request: Request) -> Response: ...

    async def aclose(self) -> None: ...


class _AiohttpResponse:
    __slots__ = ("_response", "headers", "reason", "status", "url", "version")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.headers = response.headers
        self.url = response.url
        self.reason = response.reason
        version = response.version  # None from a mocked session (aioresponses)
        self.version = f"HTTP/{version.major}.{version.minor}" if version else "HTTP/1.1"

    def chunks(self) -> AsyncIterator[bytes]:
        return self._response.content.iter_any()

    def release(self) -> None:
        self._response.release()

    def close(self) -> None:
        self._response.close()


class AiohttpTransport:
    """The real transport: requests through ``session``, whose connector, timeouts, proxy
    and resolver settings apply (the fetcher and the vendor client each configure their
    own)."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session

    async def send(self, request: Request) -> Response:
        response = await self.session.request(
            request.method, request.url, headers=request.headers, data=request.body,
            proxy=request.proxy, allow_redirects=request.follow_redirects)
        return _AiohttpResponse(response)

    async def aclose(self) -> None:
        await self.session.close()


class FakeResponse:
    """A canned response for :class:`FakeTransport`: ``body`` is streamed in ``chunk_size``
    pieces; ``url`` defaults to the request's."""

    def __init__(self, status: int = 200, headers: Mapping[str, str] | None = None,
                 body: bytes = b"", *, url: URL | str | None = None,
                 chunk_size: int = 64 * 1024, reason: str | None = None) -> None:
        self.status = status
        self.headers = CIMultiDictProxy(CIMultiDict(headers or {}))
        self.reason = reason if reason is not None else _reason(status)
        self.version = "HTTP/1.1"
        self.body = body
        self.url = URL(url) if isinstance(url, str) else url or URL()
        self.chunk_size = chunk_size
        self.released = self.closed = False

    async def chunks(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), self.chunk_size):
            yield self.body[start:start + self.chunk_size]

    def release(self) -> None:
        self.released = True

    def close(self) -> None:
        self.closed = True


def _reason(status: int) -> str | None:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return None


FakeHandler = Callable[[Request], FakeResponse | Awaitable[FakeResponse]]


class FakeTransport:
    """A transport whose ``handler`` (plain or async) answers each request with a
    :class:`FakeResponse`, or raises to act a failure (e.g.
    ``aiohttp.ServerDisconnectedError()``, ``TimeoutError()``). ``requests`` lists every
    request sent, in order (each hop of a followed redirect too; a hop to another origin
    without ``Authorization``, ``Cookie`` and ``Proxy-Authorization``, as aiohttp's)."""

    def __init__(self, handler: FakeHandler) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.closed = False

    async def send(self, request: Request) -> Response:
        for _ in range(_MAX_FAKE_REDIRECTS + 1):
            response = await self._answer(request)
            location = response.headers.get("Location")
            if not (request.follow_redirects and response.status in _REDIRECTS and location):
                return response
            method = request.method if response.status in (307, 308) else "GET"
            target = request.url.join(URL(location))
            headers = request.headers
            if target.origin() != request.url.origin():  # as aiohttp's session does
                headers = {name: value for name, value in headers.items()
                           if name.lower() not in _ORIGIN_ONLY_HEADERS}
            request = replace(request, method=method, url=target, headers=headers,
                              body=request.body if method == request.method else None)
        headers = CIMultiDictProxy(CIMultiDict(request.headers))
        info = aiohttp.RequestInfo(request.url, request.method, headers, request.url)
        raise aiohttp.TooManyRedirects(info, ())

    async def _answer(self, request: Request) -> FakeResponse:
        self.requests.append(request)
        answer = self.handler(request)
        response = await answer if inspect.isawaitable(answer) else answer
        if not response.url:
            response.url = request.url
        return response

    async def aclose(self) -> None:
        self.closed = True

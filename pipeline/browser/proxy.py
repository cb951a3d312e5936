"""The local proxy every request of a rendered page goes through: the fetcher's address
policy for the browser.

Chromium is told to send everything through a proxy on 127.0.0.1 (``--proxy-server`` for
the browser, one :class:`PolicyProxy` per browser context, loopback not bypassed), so
redirect hops, subresources, ``fetch``/XHR, workers, WebSockets, form posts and preconnects
all arrive here as an absolute-form HTTP request or a ``CONNECT``. For each one the target is
judged the way the fetcher judges a hop: the URL check of :mod:`pipeline.fetch.urls` (a
literal address in canonical spelling, judged at once), else the name resolved
once through :class:`~pipeline.fetch.resolver.PolicyResolver`, and the connection opened to
the address that was judged (no second lookup: DNS rebinding gets nothing). A refused target
gets ``403`` (marked with the :data:`REFUSED_HEADER` header, so the renderer can tell it from
a site's own 403) and no connection is made; the page's :class:`PageBudget` keeps what was
refused. Bytes coming back are counted against the page's budget; past it every connection
of the page is dropped.

``PolicyProxy(deny_all=True)`` refuses everything: it is the browser-wide proxy, so Chromium's
own background traffic (and anything outside a context) reaches nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Callable

from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.resolver import PolicyResolver
from pipeline.fetch.urls import check_target, parse_url

MAX_HEAD = 64 * 1024  # request line and headers
CHUNK = 64 * 1024
REFUSED_HEADER = "X-Pipeline-Refused"  # on the proxy's own 403: the reason, in ASCII
# Headers for the proxy alone, never forwarded (RFC 9110 §7.6.1 and the proxy's own).
_HOP_HEADERS = frozenset({b"proxy-connection", b"proxy-authorization", b"connection",
                          b"keep-alive", b"te", b"trailer"})


class PageBudget:
    """What one page may still download: ``used`` bytes of ``limit``; ``exceeded`` is set
    once they are passed (the renderer then stops the page)."""

    def __init__(self, limit: int, used: int = 0) -> None:
        self.limit = limit
        self.used = used
        self.exceeded = asyncio.Event()
        self.refused = 0  # requests the proxy refused (the policy, or no connection)
        self.reasons: list[str] = []  # the first few of them
        self.refused_hosts: set[str] = set()  # ``host:port`` of each target refused
        if used > limit:
            self.exceeded.set()

    def add(self, size: int) -> bool:
        """Count ``size`` bytes; False once the page is over its limit."""
        self.used += size
        if self.used > self.limit:
            self.exceeded.set()
            return False
        return True


class Refused(Exception):
    """A target the proxy will not connect to (the reason goes back in the 403)."""


def _authority(text: str) -> URL:
    """``host:port`` of a CONNECT, as an https URL the fetcher's URL check has judged."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host or "/" in text or "@" in text:
        raise Refused("bad CONNECT target")
    return parse_url(f"https://{text}/")


class PolicyProxy:
    """An HTTP proxy on 127.0.0.1 that connects only where ``policy`` allows.

    ``resolver`` judges names (the renderer shares one among its proxies); ``budget`` is the
    page being rendered through this proxy now (None: nothing counted). Start with
    :meth:`start`, which returns the port; :meth:`drop_connections` ends every connection
    (a page is done or over its budget); :meth:`close` stops listening too.
    """

    def __init__(self, policy: NetworkPolicy, resolver: PolicyResolver, *,
                 connect_timeout: float = 10.0, deny_all: bool = False) -> None:
        self.policy = policy
        self.resolver = resolver
        self.connect_timeout = connect_timeout
        self.deny_all = deny_all
        self.budget: PageBudget | None = None
        self.refusals = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    def drop_connections(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.drop_connections()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                async with asyncio.timeout(self.connect_timeout):
                    head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.LimitOverrunError, asyncio.IncompleteReadError, TimeoutError,
                    OSError):
                return
            if len(head) > MAX_HEAD:
                return
            budget = self.budget
            refused_host = ""
            try:
                if self.deny_all:
                    raise Refused("the browser's own traffic is not allowed")
                method, target, rest = _parse_head(head)
                if method == b"CONNECT":
                    refused_host = target.decode("latin-1")
                    up_reader, upstream = await self._connect(_authority(target.decode()))
                    writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                else:
                    url = parse_url(target.decode("latin-1"))
                    refused_host = f"{url.raw_host}:{url.port}"
                    if url.scheme != "http":
                        raise Refused("only absolute http:// requests")
                    up_reader, upstream = await self._connect(url)
                    upstream.write(_origin_form(method, url, rest))
            except (Refused, PipelineError, UnicodeDecodeError) as exc:
                reason = exc.message if isinstance(exc, PipelineError) else str(exc)
                self.refusals += 1
                if budget is not None:
                    budget.refused += 1
                    if len(budget.reasons) < 20:
                        budget.reasons.append(reason)
                    if refused_host:
                        budget.refused_hosts.add(refused_host.lower())
                body = f"refused by extract-pipeline's safety policy: {reason}\n".encode()
                marker = reason.encode("ascii", "replace").translate(None, b"\r\n")[:200]
                writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                             + REFUSED_HEADER.encode() + b": " + (marker or b"refused")
                             + b"\r\nConnection: close\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
                with contextlib.suppress(OSError):
                    await writer.drain()
                return
            self._writers.add(upstream)
            count = budget.add if budget is not None else None
            await _relay(reader, writer, up_reader, upstream, count)
        finally:
            self._writers.discard(writer)
            writer.transport.abort()
            if upstream is not None:
                self._writers.discard(upstream)
                upstream.transport.abort()

    async def judge(self, url: URL) -> str:
        """The address to connect to for ``url``: its literal IP judged now, or its name
        resolved once and judged; raises :class:`Refused` or ``PipelineError('blocked')``."""
        check_target(url, self.policy)  # literal IPs; raises PipelineError('blocked')
        host = (url.raw_host or "").strip("[]")
        try:
            return str(ipaddress.ip_address(host.split("%")[0]))
        except ValueError:
            try:
                answers = await self.resolver.resolve(host, url.port or 80)
            except OSError as exc:
                raise Refused(str(exc) or f"cannot resolve {host}") from None
            address: str = answers[0]["host"]
            return address

    async def _connect(self, url: URL
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Judge ``url``'s host and connect to the address judged."""
        address = await self.judge(url)
        host, port = url.raw_host, url.port or 80
        try:
            async with asyncio.timeout(self.connect_timeout):
                return await asyncio.open_connection(address, port, limit=CHUNK)
        except (OSError, TimeoutError) as exc:
            raise Refused(f"cannot connect to {host}:{port} ({type(exc).__name__})") from None


def _parse_head(head: bytes) -> tuple[bytes, bytes, list[bytes]]:
    """(method, target, header lines) of a request head."""
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        raise Refused("malformed request")
    return parts[0].upper(), parts[1], lines[1:]


def _origin_form(method: bytes, url: URL, headers: list[bytes]) -> bytes:
    """The request as the origin server sees it: origin-form target, hop-by-hop headers
    dropped, one request per connection (``Connection: close``) unless it upgrades."""
    upgrade = False
    kept = []
    for line in headers:
        name = line.split(b":", 1)[0].strip().lower()
        if name == b"upgrade":
            upgrade = True
        if name not in _HOP_HEADERS:
            kept.append(line)
    target = url.raw_path_qs.encode("latin-1") or b"/"
    kept.append(b"Connection: upgrade" if upgrade else b"Connection: close")
    return b"\r\n".join([method + b" " + target + b" HTTP/1.1", *kept]) + b"\r\n\r\n"


async def _relay(down_reader: asyncio.StreamReader, down: asyncio.StreamWriter,
                 up_reader: asyncio.StreamReader, up: asyncio.StreamWriter,
                 count: Callable[[int], bool] | None) -> None:
    """Copy both ways until either side ends; bytes from upstream go to ``count`` first
    (False: over the budget, stop)."""
    async def copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter,
                   counted: Callable[[int], bool] | None) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await source.read(CHUNK):
                if counted is not None and not counted(len(data)):
                    return
                sink.write(data)
                await sink.drain()

    tasks = [asyncio.ensure_future(copy(down_reader, up, None)),
             asyncio.ensure_future(copy(up_reader, down, count))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        if not tasks[1].done():  # the browser finished sending: let the answer come back
            await tasks[1]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

"""Small forward proxies on 127.0.0.1 for the proxy tests: HTTP (absolute-form requests and
CONNECT) and SOCKS5 (no authentication). Each records what it was asked for and resolves
names itself from its own ``hosts`` table (anything else is refused), as a real proxy
resolves the names its clients send."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from yarl import URL

from tests.fetch.conftest import serve_raw


@dataclass
class Seen:
    """One request a proxy received: method, target as sent, lower-case headers."""

    method: str
    target: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ProxyLog:
    url: str
    seen: list[Seen] = field(default_factory=list)
    hosts: dict[str, str] = field(default_factory=dict)

    def address(self, host: str) -> str:
        if host == "127.0.0.1":
            return host
        if host not in self.hosts:
            raise ConnectionRefusedError(f"test proxy cannot resolve {host}")
        return self.hosts[host]


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, asyncio.CancelledError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


async def _tunnel(client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                  upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    await asyncio.gather(_pipe(client[0], upstream[1]), _pipe(upstream[0], client[1]))


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return method, target, headers


async def _http_proxy(log: ProxyLog, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
    while True:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            return
        method, target, headers = _parse_head(head[:-4])
        log.seen.append(Seen(method, target, headers))
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = await asyncio.open_connection(log.address(host), int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await _tunnel((reader, writer), upstream)
            return
        url = URL(target)
        up_reader, up_writer = await asyncio.open_connection(log.address(url.raw_host or ""),
                                                             url.port or 80)
        kept = [f"{name}: {value}" for name, value in headers.items()
                if name not in ("proxy-authorization", "proxy-connection", "connection")]
        request = "\r\n".join([f"{method} {url.raw_path_qs} HTTP/1.1", *kept,
                               "Connection: close", "", ""])
        up_writer.write(request.encode("latin-1"))
        response = await up_reader.read()  # the server closes after one answer
        up_writer.close()
        writer.write(response)
        await writer.drain()
        if b"\r\nconnection: close" in response.split(b"\r\n\r\n", 1)[0].lower():
            return


async def _socks5_proxy(log: ProxyLog, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
    _, count = await reader.readexactly(2)
    await reader.readexactly(count)
    writer.write(bytes([5, 0]))  # no authentication
    kind = (await reader.readexactly(4))[3]
    if kind == 3:
        host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
    elif kind == 1:
        host = ".".join(str(b) for b in await reader.readexactly(4))
    else:
        writer.close()
        return
    (port,) = struct.unpack("!H", await reader.readexactly(2))
    log.seen.append(Seen("SOCKS5", f"{host}:{port}"))
    try:
        upstream = await asyncio.open_connection(log.address(host), port)
    except ConnectionError:
        writer.write(bytes([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]))  # connection refused
        writer.close()
        return
    writer.write(bytes([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]))
    await _tunnel((reader, writer), upstream)


@contextlib.asynccontextmanager
async def forward_proxy(kind: str = "http", hosts: dict[str, str] | None = None
                        ) -> AsyncIterator[ProxyLog]:
    """Run a proxy (``kind`` ``http`` or ``socks5``) on 127.0.0.1; yield its log, whose
    ``url`` is the proxy URL to configure."""
    serve = _http_proxy if kind == "http" else _socks5_proxy
    log = ProxyLog(url="", hosts=dict(hosts or {}))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError):
            await serve(log, reader, writer)

    async with serve_raw(handle) as base:
        log.url = base.replace("http://", f"{kind}://")
        yield log

"""Protocol garbage from raw sockets ends as a short ``network`` error: no hang, no crash."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from pipeline.fetch import FetchError, HttpFetcher
from tests.fetch.conftest import ROOM

pytestmark = pytest.mark.usefixtures("connect_log")


async def read_head(reader: asyncio.StreamReader) -> None:
    await reader.readuntil(b"\r\n\r\n")


def replying(*parts: bytes, then_reset: bool = False):
    """A raw handler: read the request head, write ``parts``, then close (or reset)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        for part in parts:
            writer.write(part)
            await writer.drain()
        if then_reset:
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()

    return handler


async def endless_headers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_head(reader)
    writer.write(b"HTTP/1.1 200 OK\r\n")
    for n in range(100_000):
        writer.write(b"X-Filler-%d: y\r\n" % n)
        await writer.drain()


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"

CASES = {
    "bad status line": replying(b"HTXP/9.9 banana\r\n\r\n"),
    "binary junk": replying(bytes(range(256)) * 4),
    "empty reply": replying(),
    "huge header line": replying(OK_HEAD + b"X-Big: " + b"a" * 100_000 + b"\r\n\r\n"),
    "endless headers": endless_headers,
    "bad chunked encoding": replying(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
                                     b"zz\r\nhello\r\n0\r\n\r\n"),
    "content-length and chunked": replying(OK_HEAD + b"Content-Length: 5\r\n"
                                           b"Transfer-Encoding: chunked\r\n\r\n"
                                           b"5\r\nhello\r\n0\r\n\r\n"),
    "short body then close": replying(OK_HEAD + b"Content-Length: 1000\r\n\r\n" + b"a" * 10),
    "reset mid-body": replying(OK_HEAD + b"Content-Length: 50000\r\n\r\n" + b"a" * 1000,
                               then_reset=True),
    "truncated chunk": replying(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
                                b"100\r\nshort"),
    "lying small content-length, junk after": replying(
        OK_HEAD + b"Content-Length: 5\r\n\r\nhello" + b"\x00junk" * 1000),
    "bad content-encoding": replying(OK_HEAD + b"Content-Encoding: gzip\r\n"
                                     b"Content-Length: 9\r\n\r\nnot gzip!"),
}




@pytest.mark.parametrize("case", list(CASES))
async def test_garbage_is_a_network_error(make_settings, raw_server, case):
    # Every case ends by itself (a protocol error, a closed connection): the deadlines get
    # room, so a busy machine cannot turn one into a timeout.
    async with raw_server(CASES[case]) as base, \
            HttpFetcher(make_settings(retries=0, head=False, **ROOM)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    error = info.value
    assert error.kind == "network", (case, error.kind, error.message)
    assert error.message.isprintable() and len(error.message) <= 300
    assert "banana" not in error.message and "\x1b" not in error.message


async def test_garbage_with_retries_and_head_still_ends_in_time(make_settings, raw_server):
    async with raw_server(CASES["reset mid-body"]) as base, \
            HttpFetcher(make_settings(retries=3)) as client:
        with pytest.raises(FetchError) as info:
            await client.fetch(base + "/")
    assert info.value.kind in ("network", "timeout")
    assert 1 <= info.value.attempts <= 4


async def test_lying_small_content_length_reads_only_what_it_announced(make_settings, raw_server):
    async def handler(reader, writer):
        await read_head(reader)
        writer.write(OK_HEAD + b"Content-Length: 5\r\n\r\nhello")
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.write(b"x" * 1_000_000)
        await writer.drain()

    async with raw_server(handler) as base, \
            HttpFetcher(make_settings(retries=0, head=False)) as client:
        result = await client.fetch(base + "/")
    assert result.body == b"hello"


async def test_body_left_over_after_a_head_costs_a_retry_not_the_page(make_settings,
                                                                       raw_server):
    # A buggy server sends a body after its HEAD answer on a kept-alive connection; the GET
    # reusing that connection reads the leftover as its status line. A fresh connection
    # (the retry) gets the page.
    page = b"<p>the page</p>"

    async def buggy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(page))
            if request.startswith(b"HEAD"):
                await writer.drain()
                await asyncio.sleep(0.1)  # after the client took the connection back
                writer.write(b"garbage after HEAD\r\n\r\n")  # the bug
            else:
                writer.write(page)
            await writer.drain()

    async with raw_server(buggy) as base, HttpFetcher(make_settings(retries=1)) as client:
        result = await client.fetch(base + "/")
    assert result.body == page

"""Content-Encoding against raw 127.0.0.1 servers: complete streams decode, streams cut short
behind an honest Content-Length are a retryable ``network`` error, bombs stop at the cap."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest

from pipeline.fetch import FetchError, HttpFetcher
from pipeline.fetch.inflate import ZlibDecoder

pytestmark = pytest.mark.usefixtures("connect_log")

PAGE = b"<html><body>" + b"<p>The quick brown fox jumps over the lazy dog.</p>" * 400 \
    + b"</body></html>"


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


CODINGS = {
    "gzip": lambda data: gzip.compress(data, 6),
    "deflate": lambda data: zlib.compress(data, 6),
    "raw-deflate": _raw_deflate,
    "br": lambda data: brotli.compress(data, quality=5),
}


def _serving(body: bytes, coding: str):
    """A raw handler answering every request (HEAD too) with ``body``, honestly sized."""
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
            b"Content-Encoding: %s\r\nContent-Length: %d\r\n\r\n"
            % (coding.encode(), len(body)))

    async def handler(reader, writer):
        request = await reader.readuntil(b"\r\n\r\n")
        writer.write(head if request.startswith(b"HEAD") else head + body)
        await writer.drain()

    return handler


async def _fetch(raw_server, make_settings, body: bytes, coding: str, **overrides):
    settings = make_settings(retries=0, **overrides)
    async with raw_server(_serving(body, coding)) as base, HttpFetcher(settings) as client:
        return await client.fetch(base + "/")


@pytest.mark.parametrize("name", CODINGS)
async def test_complete_stream_decodes(raw_server, make_settings, name):
    coding = "deflate" if name == "raw-deflate" else name
    result = await _fetch(raw_server, make_settings, CODINGS[name](PAGE), coding)
    assert result.body == PAGE


@pytest.mark.parametrize("name", CODINGS)
@pytest.mark.parametrize("keep", [0.5, 0.98])
async def test_stream_cut_short_is_a_network_error(raw_server, make_settings, name, keep):
    coding = "deflate" if name == "raw-deflate" else name
    packed = CODINGS[name](PAGE)
    with pytest.raises(FetchError) as info:
        await _fetch(raw_server, make_settings, packed[:int(len(packed) * keep)], coding)
    assert info.value.kind == "network" and info.value.retryable
    assert "ended early" in info.value.message and info.value.final_url


async def test_gzip_missing_only_its_trailer_is_cut_short(raw_server, make_settings):
    # every byte of the page is decodable, but the checksum and length never came
    with pytest.raises(FetchError) as info:
        await _fetch(raw_server, make_settings, gzip.compress(PAGE)[:-8], "gzip")
    assert (info.value.kind, info.value.message) == ("network",
                                                      "compressed body ended early (gzip)")


async def test_gzip_garbage_after_trailer_is_ignored(raw_server, make_settings):
    result = await _fetch(raw_server, make_settings, gzip.compress(PAGE) + b"\0junk" * 20,
                          "gzip")
    assert result.body == PAGE


async def test_gzip_members_are_concatenated(raw_server, make_settings):
    half = len(PAGE) // 2
    body = gzip.compress(PAGE[:half]) + gzip.compress(PAGE[half:])
    result = await _fetch(raw_server, make_settings, body, "gzip")
    assert result.body == PAGE


async def test_br_garbage_after_end_is_broken(raw_server, make_settings):
    with pytest.raises(FetchError) as info:
        await _fetch(raw_server, make_settings, brotli.compress(PAGE) + b"junk", "br")
    assert info.value.kind == "network" and "bad content encoding" in info.value.message


async def test_empty_body_labelled_gzip_is_empty(raw_server, make_settings):
    result = await _fetch(raw_server, make_settings, b"", "gzip")
    assert result.body == b""


@pytest.mark.parametrize("name", CODINGS)
async def test_bomb_stops_at_cap(raw_server, make_settings, name):
    coding = "deflate" if name == "raw-deflate" else name
    bomb = CODINGS[name](b"\0" * (8 << 20))
    with pytest.raises(FetchError) as info:
        await _fetch(raw_server, make_settings, bomb, coding, max_bytes=100_000)
    assert info.value.kind == "too_large" and "decompression" in info.value.message


async def test_junk_after_gzip_counts_against_the_cap(raw_server, make_settings):
    body = gzip.compress(b"<p>tiny</p>") + b"\0" * 200_000
    with pytest.raises(FetchError) as info:
        await _fetch(raw_server, make_settings, body, "gzip", max_bytes=100_000)
    assert info.value.kind == "too_large"


def test_gzip_magic_split_across_chunks_starts_a_member():
    second = gzip.compress(b" world")
    decoder = ZlibDecoder("gzip")
    out = decoder.feed(gzip.compress(b"hello") + second[:1], 1000)
    out += decoder.feed(second[1:], 1000)
    decoder.finish()
    assert out == b"hello world"


def test_gzip_member_count_is_bounded():
    decoder = ZlibDecoder("gzip")
    with pytest.raises(FetchError, match="gzip members"):
        decoder.feed(gzip.compress(b"x") * 1000, 1 << 20)

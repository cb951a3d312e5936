"""Undo a response's Content-Encoding ourselves: bounded, and noticing a stream cut short.

aiohttp's own decompression checks the end of a deflate stream only, so a gzip or brotli body
cut short behind an honest Content-Length would pass as complete. Here every coding reports
whether its stream ended (zlib's ``eof``, brotli's ``is_finished``), and each call produces at
most ``limit + 1`` bytes, so a bomb costs no more than the byte cap.

Bytes after the end of a gzip or deflate stream are ignored: the decoded body is complete
(and, but for raw deflate, checksummed). Further gzip members are decoded (RFC 1952).
Brotli's decoder cannot say where its stream ended inside a chunk, so there trailing bytes
are a broken body.
"""

from __future__ import annotations

import zlib
from typing import Protocol

import brotli

from pipeline.fetch.base import FetchError

GZIP_MAGIC = b"\x1f\x8b"
# Concatenated gzip members seen in the wild are a handful; each new one copies the rest of
# its chunk (zlib's unused_data), so a stream of tiny members must not be free.
MAX_GZIP_MEMBERS = 64


def _broken(coding: str) -> FetchError:
    return FetchError("network", f"broken {coding} body (bad content encoding)",
                      retryable=True)


class BodyDecoder(Protocol):
    """Decodes one response body, chunk by chunk."""

    def feed(self, data: bytes, limit: int) -> bytes:
        """Decode ``data``; the result is longer than ``limit`` only if the body is."""
        ...

    def finish(self) -> None:
        """Raise a retryable ``network`` :class:`FetchError` if the stream did not end."""
        ...


class ZlibDecoder:
    """gzip (with further members) or deflate (zlib-wrapped or, as some servers send, raw)."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._inflater: zlib._Decompress | None = None
        self._members = 0
        self._pending = b""  # a lone byte after a member: maybe half a gzip magic
        self._done = False  # the stream ended; whatever follows is ignored

    def _start(self, first: bytes) -> zlib._Decompress:
        self._members += 1
        if self._members > MAX_GZIP_MEMBERS:
            raise FetchError("network", f"more than {MAX_GZIP_MEMBERS} gzip members")
        if self.coding == "gzip":
            wbits = 16 + zlib.MAX_WBITS
        else:  # RFC 1950's header names method 8 in its low nibble; raw deflate rarely does
            wbits = zlib.MAX_WBITS if first[0] & 0x0F == 8 else -zlib.MAX_WBITS
        return zlib.decompressobj(wbits)

    def _another_member(self, data: bytes) -> bool:
        """After a member: does ``data`` start another one? If not, the stream is over
        (a lone first byte of the gzip magic waits for the next chunk)."""
        if self.coding == "gzip" and data.startswith(GZIP_MAGIC):
            return True
        if self.coding == "gzip" and data == GZIP_MAGIC[:1]:
            self._pending = data
        else:
            self._done = True
        return False

    def feed(self, data: bytes, limit: int) -> bytes:
        if self._pending:
            data, self._pending = self._pending + data, b""
        parts: list[bytes] = []
        produced = 0
        while data and not self._done:
            inflater = self._inflater
            if inflater is None or inflater.eof:
                if inflater is not None and not self._another_member(data):
                    break
                inflater = self._inflater = self._start(data)
            try:
                out = inflater.decompress(data, limit + 1 - produced)
            except zlib.error:
                raise _broken(self.coding) from None
            parts.append(out)
            produced += len(out)
            if produced > limit:
                break  # the caller refuses the body; the rest is never inflated
            data = inflater.unused_data if inflater.eof else b""
        return b"".join(parts)

    def finish(self) -> None:
        if self._inflater is not None and not self._inflater.eof:
            raise FetchError("network", f"compressed body ended early ({self.coding})",
                             retryable=True)


class BrotliDecoder:
    """br, with brotli's output limit (brotli >= 1.2)."""

    coding = "br"

    def __init__(self) -> None:
        self._inflater = brotli.Decompressor()
        self._started = False

    def feed(self, data: bytes, limit: int) -> bytes:
        if not data:
            return b""
        if self._inflater.is_finished():
            raise _broken(self.coding)
        self._started = True
        try:
            out: bytes = self._inflater.process(data, output_buffer_limit=limit + 1)
            return out
        except brotli.error:
            raise _broken(self.coding) from None

    def finish(self) -> None:
        if self._started and not self._inflater.is_finished():
            raise FetchError("network", "compressed body ended early (br)", retryable=True)


def decoder_for(content_encoding: str | None) -> BodyDecoder | None:
    """The decoder for a Content-Encoding header, or None to take the body as it is.

    Like aiohttp, only a single known coding is undone; anything else (``identity``, a
    chain, an unknown name) is passed through and left to content sniffing.
    """
    coding = (content_encoding or "").strip().lower()
    if coding in ("gzip", "x-gzip"):
        return ZlibDecoder("gzip")
    if coding == "deflate":
        return ZlibDecoder("deflate")
    if coding == "br":
        return BrotliDecoder()
    if coding == "zstd":  # never asked for; the bytes are useless undecoded
        raise FetchError("network", "unsupported content encoding zstd")
    return None

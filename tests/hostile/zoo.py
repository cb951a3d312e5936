"""A zoo of hostile HTTP servers behind one raw asyncio listener on 127.0.0.1.

Every case is a path (``/case-name``) served by a coroutine that writes whatever bytes it
likes — protocol garbage included — and the error kinds a client may honestly report for
it. :class:`Zoo` runs the listener on its own thread so a subprocess can be pointed at it.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import socket
import struct
import threading
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import brotli

MAX_BYTES = 1_000_000
OK = "ok"
Handler = Callable[[str, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

ARTICLE = ("<!doctype html><html><head><title>Zoo page</title></head><body><article>"
           + "<p>The quick brown fox jumps over the lazy dog near the river bank today.</p>" * 8
           + "</article></body></html>")


def head(status: str = "200 OK", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def reply(body: bytes, content_type: str = "text/html", status: str = "200 OK",
          extra: dict[str, str] | None = None) -> bytes:
    headers = {"Content-Type": content_type, "Content-Length": str(len(body)),
               "Connection": "close", **(extra or {})}
    return head(status, headers) + body


def fixed(data: bytes) -> Handler:
    async def serve(method, reader, writer):
        writer.write(data if method != "HEAD" else data.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n")
    return serve


def redirect(location: str, status: str = "302 Found") -> Handler:
    return fixed(head(status, {"Location": location, "Content-Length": "0",
                               "Connection": "close"}))


async def _drip(writer: asyncio.StreamWriter, data: bytes, every: float = 1.5) -> None:
    for byte in data:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(every)


def drip(prefix: bytes, dripped: bytes, every: float = 1.5) -> Handler:
    async def serve(method, reader, writer):
        writer.write(prefix)
        await _drip(writer, dripped * 100, every)
    return serve


def endless(encoder: Callable[[bytes], bytes] | None, encoding: str | None) -> Handler:
    """A body that never ends (optionally compressed on the fly: a bomb of unbounded size)."""
    async def serve(method, reader, writer):
        headers = {"Content-Type": "text/plain", "Connection": "close"}
        if encoding:
            headers["Content-Encoding"] = encoding
        writer.write(head("200 OK", headers))
        if method == "HEAD":
            return
        block = b"0" * (1 << 20)
        for _ in range(1024):  # 1 GiB decompressed at most, then give up
            writer.write(encoder(block) if encoder else block)
            await writer.drain()
    return serve


def gzip_stream() -> Callable[[bytes], bytes]:
    return zlib.compressobj(1, zlib.DEFLATED, 31).compress


def _compressing(factory: Callable[[], Callable[[bytes], bytes]], encoding: str) -> Handler:
    async def serve(method, reader, writer):
        await endless(factory(), encoding)(method, reader, writer)
    return serve


async def never_answer(method, reader, writer):
    await asyncio.sleep(3600)


async def endless_continue(method, reader, writer):
    """Interim 100 responses, fast and for ever: the final answer never comes."""
    for _ in range(100_000):
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.001)


async def redirect_endless_body(method, reader, writer):
    """A redirect is followed without reading its body, even one that never ends."""
    writer.write(head("302 Found", {"Location": "/ok", "Content-Type": "text/plain"}))
    while True:
        writer.write(b"x" * 65536)
        await writer.drain()


async def close_now(method, reader, writer):
    pass


async def reset_mid_body(method, reader, writer):
    writer.write(head("200 OK", {"Content-Type": "text/html", "Content-Length": "100000"}))
    writer.write(b"<html><body>" + b"x" * 1000)
    await writer.drain()
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def head_differs(head_reply: bytes | None, get_handler: Handler) -> Handler:
    async def serve(method, reader, writer):
        if method == "HEAD":
            if head_reply is None:
                await asyncio.sleep(3600)
            writer.write(head_reply)
            return
        await get_handler(method, reader, writer)
    return serve


async def big_get(method, reader, writer):
    """HEAD said 1 KB; the GET announces and streams 50 MB."""
    writer.write(head("200 OK", {"Content-Type": "text/html", "Content-Length": str(50 << 20)}))
    for _ in range(50):
        writer.write(b"a" * (1 << 20))
        await writer.drain()


def exact_size(size: int, with_length: bool) -> Handler:
    body = b"<p>" + b"word " * ((size - 3) // 5)
    body += b" " * (size - len(body))
    headers = {"Content-Type": "text/plain", "Connection": "close"}
    if with_length:
        headers["Content-Length"] = str(size)
    return fixed(head("200 OK", headers) + body)


def _png() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 200


def _zip() -> bytes:
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.txt", "hello " * 100)
    return buf.getvalue()


def _pdf_claiming_pages(count: int) -> bytes:
    return (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
            b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count " + str(count).encode() + b">>endobj\n"
            b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>endobj\n"
            b"trailer<</Root 1 0 R>>\n%%EOF\n")


def _pdf_bomb(mib: int) -> bytes:
    """A PDF whose one content stream inflates to ``mib`` MiB of spaces (built in ms: after a
    full flush the compressor's output for the same MiB repeats; the stream has no end)."""
    deflate = zlib.compressobj(9)
    block = b" " * (1 << 20)
    first = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    unit = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    stream = first + unit * (mib - 1)
    return (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
            b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
            b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R>>endobj\n"
            b"4 0 obj<</Length " + str(len(stream)).encode() + b"/Filter/FlateDecode>>stream\n"
            + stream
            + b"\nendstream endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")


def _encrypted_pdf() -> bytes:
    # The committed fixture (pypdf, which made it, is not a test dependency).
    return (Path(__file__).parents[1] / "fixtures" / "encrypted.pdf").read_bytes()


BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                  + b"".join(b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10 if i > 1
                                                         else b"&lol;" * 10)
                             for i in range(1, 10))
                  + b"]><lolz>&lol9;</lolz>")
XXE_RSS = (b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
           b'<rss version="2.0"><channel><title>Feed</title><description>d</description>'
           b"<item><title>Item &xxe;</title><link>http://example.com/</link>"
           b"<description>leak &xxe;</description></item></channel></rss>")


@dataclass(frozen=True)
class Case:
    name: str
    handler: Handler
    kinds: frozenset[str]  # acceptable outcomes: error kinds, or "ok"
    listed: bool = True  # False: only reached through another case, or in a run of its own
    # a listener (host) of its own, shared by the cases naming it: a 429/503 pauses its host,
    # a HEAD that hangs marks its host as not doing HEAD — which would change the other cases
    host: str = ""


def _case(name: str, handler: Handler, *kinds: str) -> Case:
    return Case(name, handler, frozenset(kinds))


def build_cases(port: int) -> list[Case]:
    here = f"http://127.0.0.1:{port}"
    html = "text/html"
    return [
        _case("ok", fixed(reply(ARTICLE.encode())), OK),
        Case("dup", fixed(reply(ARTICLE.encode())), frozenset({OK}), listed=False),
        # endless bodies and bombs: stop at max_bytes
        _case("endless", endless(None, None), "too_large"),
        _case("gzip-bomb", _compressing(gzip_stream, "gzip"), "too_large"),
        _case("deflate-bomb", _compressing(lambda: zlib.compressobj(1).compress, "deflate"),
              "too_large"),
        _case("br-bomb", _compressing(lambda: brotli.Compressor(quality=1).process, "br"),
              "too_large"),
        # drips and silence: time out
        _case("drip-status", drip(b"", b"HTTP/1.1 200 OK\r\n"), "timeout"),
        _case("drip-headers", drip(b"HTTP/1.1 200 OK\r\n", b"X-A: b\r\n"), "timeout"),
        _case("drip-body", drip(head("200 OK", {"Content-Type": html,
                                                "Content-Length": "5000"}), b"<p>x"),
              "timeout"),
        _case("never-answers", never_answer, "timeout"),
        # protocol garbage: network
        _case("huge-header", fixed(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (1 << 20)
                                   + b"\r\n\r\nhi"), "network"),
        _case("many-headers", fixed(b"HTTP/1.1 200 OK\r\n"
                                    + b"".join(b"X-%d: v\r\n" % i for i in range(10_000))
                                    + b"Content-Length: 2\r\n\r\nhi"), "network"),
        _case("gzip-lie", fixed(reply(ARTICLE.encode(), extra={"Content-Encoding": "gzip"})),
              "network"),
        _case("br-garbage", fixed(reply(b"\xff\x00garbage" * 50,
                                        extra={"Content-Encoding": "br"})), "network"),
        # compressed streams cut short behind an honest Content-Length
        _case("gzip-truncated", fixed(reply(gzip.compress(ARTICLE.encode() * 50)[:300],
                                            extra={"Content-Encoding": "gzip"})), "network"),
        _case("deflate-truncated", fixed(reply(zlib.compress(ARTICLE.encode() * 50)[:300],
                                               extra={"Content-Encoding": "deflate"})),
              "network"),
        _case("length-short", fixed(head("200 OK", {"Content-Type": html,
                                                    "Content-Length": "5000"})
                                    + ARTICLE.encode()[:500]), "network"),
        _case("length-long", fixed(head("200 OK", {"Content-Type": html,
                                                   "Content-Length": "200"})
                                   + ARTICLE.encode() + b"HTTP/1.1 200 OK\r\n"
                                   b"Content-Length: 4\r\n\r\nEVIL"),
              OK, "empty", "network"),
        _case("chunked-bad", fixed(head("200 OK", {"Content-Type": html,
                                                   "Transfer-Encoding": "chunked"})
                                   + b"zz\r\nhello\r\n0\r\n\r\n"), "network"),
        _case("chunked-and-length", fixed(head("200 OK", {"Content-Type": html,
                                                          "Transfer-Encoding": "chunked",
                                                          "Content-Length": "5"})
                                          + b"5\r\nhello\r\n0\r\n\r\n"), "network"),
        _case("http09", fixed(ARTICLE.encode()), "network"),
        _case("banner", fixed(b"SSH-2.0-OpenSSH_8.9\r\n"), "network"),
        _case("close-now", close_now, "network"),
        _case("reset-mid-body", reset_mid_body, "network"),
        _case("status-999", fixed(reply(b"odd", status="999 Whatever")), "http_status", "network"),
        # redirects
        _case("loop", redirect(f"{here}/loop"), "http_status"),
        *[Case(f"hop{i}", redirect(f"/hop{i + 1}"), frozenset({"http_status"}), listed=i == 0)
          for i in range(30)],
        _case("to-127.0.0.2", redirect(f"http://127.0.0.2:{port}/ok"), "blocked"),
        _case("to-10.0.0.1", redirect("http://10.0.0.1/"), "blocked"),
        _case("to-metadata", redirect("http://169.254.169.254/latest/meta-data/"), "blocked"),
        _case("to-v6-loopback", redirect(f"http://[::1]:{port}/ok"), "blocked"),
        _case("to-hex-ip", redirect(f"http://0x7f000001:{port}/ok"), "blocked"),
        _case("to-file", redirect("file:///etc/passwd"), "blocked"),
        _case("to-javascript", redirect("javascript:alert(1)"), "blocked"),
        _case("odd-relative", redirect("./%6F%6b?q=%E2%82%AC&r=%zz"), OK),
        _case("location-space", redirect("/o k"), "http_status"),
        _case("location-raw-bytes", fixed(b"HTTP/1.1 302 Found\r\nLocation: /\xff\xfe\x00k\r\n"
                                          b"Content-Length: 0\r\nConnection: close\r\n\r\n"),
              "http_status", "invalid_url", "network"),
        # a Location over aiohttp's 8190-byte field limit is a malformed response
        _case("location-huge", redirect("/" + "a" * 20_000), "network"),
        _case("location-8k", redirect("/" + "a" * 8_000), "http_status"),
        _case("location-missing", fixed(reply(b"", status="302 Found")), "http_status", "empty"),
        # throttling with absurd Retry-After values: bounded by the cap, then http_status
        *[Case(f"retry-after-{i}", fixed(reply(b"slow", status="429 Too Many Requests",
                                               extra={"Retry-After": value})),
               frozenset({"http_status"}), host="throttled")
          for i, value in enumerate(["1000000000000", "-5", "soon, maybe",
                                     "Fri, 01 Jan 2099 00:00:00 GMT"])],
        Case("503-forever", fixed(reply(b"down", status="503 Service Unavailable",
                                        extra={"Retry-After": "99999"})),
             frozenset({"http_status"}), host="throttled"),
        # binary and hostile documents
        _case("png-as-html", fixed(reply(_png())), "unsupported_type"),
        _case("elf-as-html", fixed(reply(b"\x7fELF\x02\x01\x01" + b"\x00" * 500)),
              "unsupported_type"),
        _case("zip-as-html", fixed(reply(_zip())), "unsupported_type"),
        _case("nested-divs", fixed(reply(b"<html><body>" + b"<div>" * 100_000
                                         + b"deep text")), OK, "empty", "extract"),
        _case("one-line", fixed(reply(b"word " * 180_000, "text/plain")), OK),
        _case("many-links", fixed(reply(b"<html><body>" + b"".join(
            b"<a href=#%d>x</a>" % i for i in range(50_000)) + b"</body></html>")),
              OK, "empty"),
        _case("bad-utf8", fixed(reply(b"<html><body><p>caf\xe9 \xff\xfe ok text here</p>"
                                      b"</body></html>", "text/html; charset=utf-8")), OK),
        _case("lying-charset", fixed(reply(ARTICLE.encode(), "text/html; charset=utf-16")), OK),
        # a NUL in the sniffed head marks a body binary (a design choice of handlers/sniff)
        _case("nul-early", fixed(reply(ARTICLE.encode().replace(b"fox", b"f\x00ox", 1))),
              "unsupported_type", OK),
        _case("nuls-late", fixed(reply(ARTICLE.encode()[:1100] + ARTICLE.encode()[1100:]
                                       .replace(b"fox", b"f\x00ox"))), OK),
        _case("huge-title", fixed(reply(b"<html><head><title>" + b"T" * 600_000
                                        + b"</title><meta property='og:description' content='"
                                        + b"D" * 300_000 + b"'></head><body>"
                                        + ARTICLE.encode() + b"</body></html>")), OK),
        _case("utf16-bom", fixed(reply(ARTICLE.encode("utf-16"), "text/html")), OK),
        _case("empty-200", fixed(reply(b"", "text/html")), "empty"),
        _case("whitespace-200", fixed(reply(b" \n\t " * 1000, "text/plain")), "empty"),
        _case("zstd-garbage", fixed(reply(b"\x28\xb5\x2f\xfd" + b"\x01" * 300,
                                          extra={"Content-Encoding": "zstd"})),
              "network", "unsupported_type", "decode"),
        _case("unknown-encoding", fixed(reply(ARTICLE.encode(),
                                              extra={"Content-Encoding": "x-rot13"})),
              OK, "network", "unsupported_type"),
        _case("double-length", fixed(head("200 OK", {"Content-Type": html,
                                                     "Content-Length": "5",
                                                     "content-length": "7"}) + b"hello!!"),
              "network"),
        _case("negative-length", fixed(head("200 OK", {"Content-Type": html,
                                                       "Content-Length": "-5"}) + b"hello"),
              "network"),
        _case("endless-100", endless_continue, "timeout", "network"),
        _case("to-localhost", redirect(f"http://localhost:{port}/ok"), OK, "blocked"),
        _case("to-mapped-v6", redirect(f"http://[::ffff:127.0.0.1]:{port}/ok"), "blocked"),
        _case("to-scheme-relative", redirect("//10.0.0.1/x"), "blocked"),
        _case("to-userinfo", redirect("http://127.0.0.1@10.0.0.1/"), "blocked"),
        _case("to-backslash", redirect("http:\\\\10.0.0.1\\x"), "blocked", "invalid_url"),
        _case("to-bad-port", redirect("http://127.0.0.1:99999/"), "invalid_url"),
        _case("to-zero", redirect(f"http://0.0.0.0:{port}/ok"), "blocked"),
        _case("to-decimal", redirect(f"http://2130706433:{port}/ok"), "blocked"),
        _case("exact-max", exact_size(MAX_BYTES, True), OK),
        _case("max-plus-one", exact_size(MAX_BYTES + 1, True), "too_large"),
        _case("exact-max-unlabelled", exact_size(MAX_BYTES, False), OK),
        _case("max-plus-one-unlabelled", exact_size(MAX_BYTES + 1, False), "too_large"),
        # its HEAD is given up after a third of the deadline: in the run of its own that is
        # about deadlines (test_zoo_hosts.py), not among the cases given room
        Case("head-hangs", head_differs(None, fixed(reply(ARTICLE.encode()))), frozenset({OK}),
             listed=False),
        _case("head-small-get-huge", head_differs(
            head("200 OK", {"Content-Type": html, "Content-Length": "1000"}), big_get),
              "too_large"),
        _case("json-deep", fixed(reply(b"[" * 100_000 + b"]" * 100_000, "application/json")),
              "decode", "extract"),
        _case("json-wide", fixed(reply(b"[" + b"1," * 400_000 + b"1]", "application/json")), OK),
        _case("billion-laughs", fixed(reply(BILLION_LAUGHS, "application/xml")),
              OK, "extract", "empty", "decode"),
        _case("xxe-rss", fixed(reply(XXE_RSS, "application/rss+xml")), OK),
        _case("pdf-corrupt", fixed(reply(b"%PDF-1.7\n" + b"\x00garbage" * 100,
                                         "application/pdf")), "extract"),
        _case("pdf-encrypted", fixed(reply(_encrypted_pdf(), "application/pdf")), "extract"),
        _case("slow-steady", drip(head("200 OK", {"Content-Type": "text/plain",
                                                  "Content-Length": "100000"}), b"word ",
                                  every=0.4), "timeout"),
        _case("redirect-endless-body", redirect_endless_body, OK),
        _case("xml-deep", fixed(reply(b"<?xml version='1.0'?>" + b"<a>" * 100_000,
                                      "application/xml")), OK, "extract", "empty", "decode"),
        _case("script-links", fixed(reply(
            b"<html><head><base href='javascript:alert(1)//'></head><body><article>"
            + b"<p>Read <a href='javascript:alert(2)'>this</a> and <a href='x'>that</a> now, "
              b"a long enough sentence for the article to count as readable text.</p>" * 5
            + b"</article></body></html>")), OK),
        _case("no-spaces", fixed(reply(b"<html><body><p>" + b"a" * 900_000
                                       + b"</p></body></html>")), OK),
        _case("type-params", fixed(reply(ARTICLE.encode(), "text/html; " + "; ".join(
            f"p{i}=v{i}" for i in range(500)))), OK),
        _case("pdf-bomb", fixed(reply(_pdf_bomb(800), "application/pdf")), "too_large"),
        _case("pdf-million-pages", fixed(reply(_pdf_claiming_pages(1_000_000),
                                               "application/pdf")), OK, "extract", "empty"),
        *host_cases(),
    ]


HEAD_HANGS_URLS = 40  # more than head_trust (8) probes, all admitted at once


def paused_once(seconds: str) -> Handler:
    """429 with ``Retry-After: seconds`` to the first request (any method), then the page."""
    wait = fixed(reply(b"wait", status="429 Too Many Requests", extra={"Retry-After": seconds}))
    page = fixed(reply(ARTICLE.encode(), "text/plain"))
    asked = []

    async def serve(method, reader, writer):
        await (page if asked else wait)(method, reader, writer)
        asked.append(method)
    return serve


def host_cases() -> list[Case]:
    """Cases about a whole host, run on their own (see test_zoo_hosts.py): many URLs of a
    host whose HEAD hangs while GET works, and one host asking one URL for a short pause and
    another for a long one."""
    page = fixed(reply(ARTICLE.encode(), "text/plain"))
    return [
        *[Case(f"head-hangs-{i}", head_differs(None, page), frozenset({OK}), listed=False,
               host="no-head") for i in range(HEAD_HANGS_URLS)],
        Case("pause-short", paused_once("2"), frozenset({OK}), listed=False, host="pausing"),
        Case("pause-long", paused_once("8"), frozenset({OK}), listed=False, host="pausing"),
    ]


def ends_by_deadline(case: Case) -> bool:
    """A case that may end only when its deadline does (a drip, silence): run with a short
    one. Every other case ends by itself (a cap, a protocol error) and is given room, so a
    busy machine cannot turn its outcome into a timeout."""
    return "timeout" in case.kinds


class Zoo:
    """The listener: dispatches each request to its case by path; counts requests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.seen: Counter[tuple[str, str]] = Counter()
        self.cases: dict[str, Case] = {}
        self.port = 0
        # accepted by the kernel, never read nor answered by anyone
        self.deaf = socket.create_server(("127.0.0.1", 0), backlog=64)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> Zoo:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0, limit=1 << 16), self.loop).result()
        self._server = server
        self.port = server.sockets[0].getsockname()[1]
        self.cases = {case.name: case for case in build_cases(self.port)}
        self._hosts = {name: asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self.loop).result()
            for name in {case.host for case in self.cases.values() if case.host}}
        return self

    def url(self, name: str) -> str:
        case = self.cases.get(name)
        port = self.port
        if case is not None and case.host:
            port = self._hosts[case.host].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/{name}"

    @property
    def deaf_url(self) -> str:
        return f"http://127.0.0.1:{self.deaf.getsockname()[1]}/never-reads"

    def listed(self, *, deadline: bool | None = None) -> list[Case]:
        """The cases a run over the zoo takes; ``deadline``: only those that end by their
        deadline (True) or by themselves (False)."""
        return [case for case in self.cases.values() if case.listed
                and (deadline is None or ends_by_deadline(case) == deadline)]

    def stop(self) -> None:
        async def close() -> None:
            self._server.close()
            for server in self._hosts.values():
                server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.deaf.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            method, target = request.split(b" ", 2)[:2]
            path = unquote(target.decode("latin-1")).split("?", 1)[0].lstrip("/")
            self.seen[(method.decode(), path)] += 1
            case = self.cases.get(path)
            if case is None:
                writer.write(reply(b"not here", status="404 Not Found"))
            else:
                await case.handler(method.decode(), reader, writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError, asyncio.CancelledError):  # cancelled: the zoo is closing
            pass
        finally:
            writer.close()

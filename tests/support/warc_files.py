"""WARC files for tests, written by warcio (a writer other than ours) and read by warcio (a
reader other than the one the WARC input uses).

:func:`common_crawl_like` builds a file as Common Crawl's look: a ``warcinfo`` record, then for
each page a ``request``, a ``response`` and a ``metadata`` record, each a gzip member of its
own; one response kept as crawlers that store the wire bytes do (``Transfer-Encoding:
chunked`` framing and a gzip ``Content-Encoding``), one as Common Crawl stores them (decoded,
the original codings renamed ``X-Crawler-*``), a ``revisit``, a redirect, a PDF-less binary
and a ``dns:`` response.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pipeline.fetch.archive import Exchange

ARTICLE = ("<html><head><title>{title}</title></head><body><nav>Home | About</nav>"
           "<article><h1>{title}</h1>{paragraphs}</article><footer>(c) site</footer>"
           "</body></html>")


def article(title: str, words: str = "lighthouse keepers kept the lamps burning") -> bytes:
    paragraphs = "".join(f"<p>{title}: paragraph {n}, where {words} through the night, "
                         "as the old log books tell in some detail.</p>" for n in range(6))
    return ARTICLE.format(title=title, paragraphs=paragraphs).encode()


def chunked(body: bytes, size: int = 100) -> bytes:
    """``body`` in HTTP/1.1 chunk framing."""
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
             for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def _response(writer: WARCWriter, url: str, status: str, headers: list[tuple[str, str]],
              payload: bytes, **kw: object) -> None:
    http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
    record = writer.create_warc_record(url, "response", payload=io.BytesIO(payload),
                                       http_headers=http, **kw)  # type: ignore[arg-type]
    request = writer.create_warc_record(
        url, "request", payload=io.BytesIO(b""),
        http_headers=StatusAndHeaders(f"GET {url.split('/', 3)[-1] or '/'} HTTP/1.1",
                                      [("Host", "example.test"), ("User-Agent", "test")],
                                      is_http_request=True))
    writer.write_record(request)
    writer.write_record(record)
    meta = writer.create_warc_record(url, "metadata", payload=io.BytesIO(b"fetchTimeMs: 12\r\n"),
                                     warc_content_type="application/warc-fields")
    meta.rec_headers.add_header("WARC-Concurrent-To",
                                record.rec_headers.get_header("WARC-Record-ID"))
    writer.write_record(meta)


def common_crawl_like(path: Path) -> dict[str, bytes]:
    """Write the file; returns {url: decoded HTML} of the pages that must extract."""
    pages = {f"https://example.test/plain/{n}": article(f"Plain page {n}") for n in range(3)}
    pages["https://example.test/wire"] = article("Wire bytes page")
    pages["https://example.test/cc"] = article("Common Crawl page")
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True, warc_version="1.1")
        writer.write_record(writer.create_warcinfo_record(
            path.name, {"software": "test", "format": "WARC File Format 1.1"}))
        for n in range(3):
            url = f"https://example.test/plain/{n}"
            _response(writer, url, "200 OK", [("Content-Type", "text/html; charset=utf-8")],
                      pages[url])
        wire = pages["https://example.test/wire"]
        _response(writer, "https://example.test/wire", "200 OK",
                  [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
                   ("Transfer-Encoding", "chunked")], chunked(gzip.compress(wire)))
        cc = pages["https://example.test/cc"]
        _response(writer, "https://example.test/cc", "200 OK",
                  [("Content-Type", "text/html; charset=UTF-8"),
                   ("X-Crawler-Content-Encoding", "gzip"),
                   ("X-Crawler-Transfer-Encoding", "chunked"),
                   ("Content-Length", str(len(cc)))], cc)
        revisit = writer.create_revisit_record(
            "https://example.test/plain/0", digest="sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            refers_to_uri="https://example.test/plain/0", refers_to_date="2024-01-01T00:00:00Z")
        writer.write_record(revisit)
        _response(writer, "https://example.test/moved", "301 Moved Permanently",
                  [("Location", "https://example.test/plain/1"), ("Content-Length", "0")], b"")
        _response(writer, "https://example.test/logo.png", "200 OK",
                  [("Content-Type", "image/png")], b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
        dns = writer.create_warc_record("dns:example.test", "response",
                                        payload=io.BytesIO(b"example.test. 300 IN A 192.0.2.1"),
                                        warc_content_type="text/dns")
        writer.write_record(dns)
    return pages


def read_all(path: Path) -> Iterator[tuple[str, str | None, int]]:
    """(record type, target URI, payload length) of every record, read to the end of the
    file by warcio with every digest checked (an error if any does not match); a gzipped
    file's members are each read whole by Python's gzip first (warcio passes over a member
    cut short at the end of a file)."""
    if path.name.endswith(".gz"):
        with gzip.open(path) as members:
            while members.read(1 << 20):
                pass
    with open(path, "rb") as handle:
        iterator = ArchiveIterator(handle, check_digests="raise")
        for record in iterator:
            payload = record.content_stream().read()
            yield (record.rec_type, record.rec_headers.get_header("WARC-Target-URI"),
                   len(payload))
        assert handle.read() == b"", "bytes after the last record"


def record_headers(path: Path) -> Iterator[tuple[dict[str, str], StatusAndHeaders | None, bytes]]:
    """(WARC headers, HTTP headers, raw payload as stored) of every record, by warcio."""
    with open(path, "rb") as handle:
        for record in ArchiveIterator(handle, check_digests="raise"):
            yield (dict(record.rec_headers.headers), record.http_headers,
                   record.raw_stream.read())


def exchange(url: str, body: bytes, **fields: object) -> Exchange:
    """A 200 text/html exchange for the WARC writer."""
    values: dict = dict(method="GET", url=url, request_headers={"User-Agent": "test"},
                        status=200, reason="OK", version="HTTP/1.1",
                        headers=[("Content-Type", "text/html")], body=body,
                        sent=datetime.now(UTC))
    values.update(fields)
    return Exchange(**values)


def pages_warc(path: Path, count: int, *, gzipped: bool, bad: int | None = None,
               content_length: bytes = b"") -> list[str]:
    """A WARC of ``count`` HTML response records (http://example.test/N), one gzip member
    each when ``gzipped``; record ``bad`` announces ``content_length`` as its Content-Length
    (as is: too short, negative, not a number, too large). Returns the URLs in order."""
    urls, parts = [], []
    for n in range(count):
        buffer = io.BytesIO()
        writer = WARCWriter(buffer, gzip=False, warc_version="1.1")
        url = f"http://example.test/{n}"
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            url, "response", payload=io.BytesIO(article(f"Page {n}")),
            http_headers=http))  # type: ignore[arg-type]
        raw = buffer.getvalue()
        if n == bad:
            head, blank, rest = raw.partition(b"\r\n\r\n")
            raw = b"\r\n".join(b"Content-Length: " + content_length
                               if line.lower().startswith(b"content-length:") else line
                               for line in head.split(b"\r\n")) + blank + rest
        parts.append(gzip.compress(raw) if gzipped else raw)
        urls.append(url)
    path.write_bytes(b"".join(parts))
    return urls


def warcio_responses(path: Path) -> list[str]:
    """The target URIs of the response records warcio reads, up to where it gives up."""
    found: list[str] = []
    with open(path, "rb") as handle:
        try:
            for record in ArchiveIterator(handle):
                if record.rec_type == "response":
                    found.append(record.rec_headers.get_header("WARC-Target-URI"))
        except Exception:  # where warcio gives up is what is compared
            pass
    return found

"""A local corpus server for throughput benchmarks.

Serves the pages of ``../shared/datasets/article-extraction-benchmark/html/*.html.gz`` under
as many distinct URLs as a benchmark wants: ``/p/<i>`` is page ``i mod len(pages)``. Pages are
decompressed once at start and kept in memory, so serving costs the server little CPU.

* ``--kind html`` serves the pages as ``text/html``; ``--kind text`` serves ``text/plain``
  bodies of the same size made of the pages' visible words (a handler costs next to nothing
  on them, so a run measures the engine and the fetch path); ``--kind article`` serves each
  page's ground-truth article text (``ground-truth.json``) as ``text/plain``: a realistic
  plain-text page of a few KB, so a run measures the engine per URL rather than per byte.
* ``--latency S`` waits S seconds before answering each page request (GET and HEAD),
  standing in for a remote server's round trip without using CPU.
* ``--validators`` gives every page an ``ETag`` and a ``Last-Modified`` and answers a matching
  ``If-None-Match`` / ``If-Modified-Since`` with ``304 Not Modified`` (cache revalidation).
  ``/stats`` counts the page requests served so far by method and status.

It is a minimal HTTP/1.1 server on asyncio's protocol layer, with every response built at
start: it stands in for the rest of the Internet, so its CPU should be near zero. (On the 2
cores of the benchmark machine an aiohttp.web server cost ~0.25 ms per request, which the
client then lost; this one costs a fraction of that — see benchmarks/README.md.)

``--hosts K`` serves the same pages as K hosts (K ports on 127.0.0.1), for runs sharded by
host.

Run it standalone (``python benchmarks/corpus_server.py --port 0 --latency 0.05``: it prints
``LISTENING http://127.0.0.1:PORT ...`` once ready, one base URL per host) or start it from
Python with :func:`serve_in_subprocess`, which runs it in its own process so it does not
share the client's event loop (the process is returned so a benchmark can charge its CPU
separately).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

PageKind = Literal["html", "text", "article"]
DATASET_ENV = "PIPELINE_BENCH_DATASET"
DEFAULT_DATASET = (
    Path(__file__).resolve().parent.parent.parent
    / "shared" / "datasets" / "article-extraction-benchmark"
)
READY_PREFIX = "LISTENING "

_TAG = re.compile(rb"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.S | re.I)
_SPACE = re.compile(rb"\s+")


def dataset_dir() -> Path:
    """The dataset folder: ``$PIPELINE_BENCH_DATASET`` or ``../shared/...`` next to the repo."""
    return Path(os.environ.get(DATASET_ENV) or DEFAULT_DATASET)


def _page_files(directory: Path) -> list[Path]:
    files = sorted(directory.glob("html/*.html.gz"))
    if not files:
        raise FileNotFoundError(f"no html/*.html.gz under {directory}")
    return files


def load_pages(directory: Path | None = None) -> list[bytes]:
    """The corpus pages, decompressed, in a stable (file-name) order."""
    return [gzip.decompress(f.read_bytes()) for f in _page_files(directory or dataset_dir())]


def load_articles(directory: Path | None = None) -> list[str]:
    """The ground-truth article text of each page, in :func:`load_pages` order: the page id is
    the file name without ``.html.gz``; ``""`` for a page that ``ground-truth.json`` does not
    list, or lists without text."""
    directory = directory or dataset_dir()
    truth = json.loads((directory / "ground-truth.json").read_text(encoding="utf-8"))
    ids = (f.name.removesuffix(".html.gz") for f in _page_files(directory))
    return [(truth.get(page_id) or {}).get("articleBody") or "" for page_id in ids]


def _visible_words(html: bytes) -> bytes:
    return _SPACE.sub(b" ", _TAG.sub(b" ", html)).strip()


def text_page(html: bytes) -> bytes:
    """A plain-text body about as long as ``html``, made of its visible words."""
    words = _visible_words(html) or b"empty page"
    paragraph = words[:600].rsplit(b" ", 1)[0] or words[:600]
    body = bytearray()
    while len(body) < len(html):
        body += paragraph + b".\n\n"
    # Cut on a character boundary so the body stays valid UTF-8.
    return bytes(body[: len(html)]).decode("utf-8", "ignore").encode("utf-8")


def article_page(html: bytes, article: str) -> bytes:
    """The page's article text; a page without one (empty ``article``) falls back to the
    page's visible words (once, not repeated to the page's size as in :func:`text_page`)."""
    return article.encode("utf-8") if article.strip() else _visible_words(html) or b"empty page"


def page_bodies(kind: PageKind, pages: list[bytes], articles: list[str] | None = None
                ) -> list[bytes]:
    """What the server sends for each of ``pages`` as ``kind``. ``articles`` (default: none,
    so every article page falls back) is :func:`load_articles` for the same pages."""
    if kind == "text":
        return [text_page(page) for page in pages]
    if kind == "article":
        return [article_page(page, article) for page, article
                in zip(pages, articles or [""] * len(pages), strict=True)]
    return pages


def dataset_bodies(kind: PageKind, directory: Path | None = None) -> list[bytes]:
    """:func:`page_bodies` of the dataset's pages (with its ground truth for ``article``)."""
    articles = load_articles(directory) if kind == "article" else None
    return page_bodies(kind, load_pages(directory), articles)


@dataclass(frozen=True)
class CorpusConfig:
    kind: PageKind = "html"
    latency: float = 0.0
    validators: bool = False


LAST_MODIFIED = "Wed, 01 Jan 2025 00:00:00 GMT"


Schedule = Callable[[float, Callable[[], None]], object]
MAX_HEAD = 64 * 1024  # a request head longer than this is refused


def _response(status: str, content_type: str, body: bytes, *, head: bool = False,
              extra: tuple[str, ...] = ()) -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}",
             f"Content-Length: {len(body)}", *extra, "", ""]
    return "\r\n".join(lines).encode("ascii") + (b"" if head else body)


def _header(head: bytes, name: bytes) -> bytes | None:
    """The value of header ``name`` (lower-case, with the colon) in a request head."""
    start = head.lower().find(b"\r\n" + name)
    if start < 0:
        return None
    start += 2 + len(name)
    end = head.find(b"\r\n", start)
    return head[start:end if end >= 0 else len(head)].strip()


class Corpus:
    """Every answer the server can give, built once: a request costs a lookup and a write."""

    def __init__(self, bodies: list[bytes], config: CorpusConfig) -> None:
        content_type = f"text/{'html' if config.kind == 'html' else 'plain'}; charset=utf-8"
        self.latency = config.latency
        self.validators = config.validators
        self.counts: Counter[str] = Counter()
        extras = [self._validators(i) for i in range(len(bodies))]
        self._get = [_response("200 OK", content_type, body, extra=extra)
                     for body, extra in zip(bodies, extras, strict=True)]
        self._head = [_response("200 OK", content_type, body, head=True, extra=extra)
                      for body, extra in zip(bodies, extras, strict=True)]
        self._not_modified = [_response("304 Not Modified", content_type, b"", extra=extra)
                              for extra in extras]
        self._etags = [f'"{i}"'.encode() for i in range(len(bodies))]
        info = {"pages": len(bodies), "kind": config.kind, "latency": config.latency,
                **({"validators": True} if config.validators else {})}
        self._info = _response("200 OK", "application/json", json.dumps(info).encode())
        self._not_found = _response("404 Not Found", "text/plain", b"not found")
        self._bad_method = _response("405 Method Not Allowed", "text/plain", b"GET or HEAD")

    def _validators(self, index: int) -> tuple[str, ...]:
        return (f'ETag: "{index}"', f"Last-Modified: {LAST_MODIFIED}") if self.validators else ()

    def _unchanged(self, index: int, head: bytes) -> bool:
        etag = _header(head, b"if-none-match:")
        if etag is not None:
            return etag == self._etags[index]
        return _header(head, b"if-modified-since:") == LAST_MODIFIED.encode()

    def answer(self, method: bytes, target: bytes, head: bytes = b"") -> tuple[bytes, float]:
        """(the whole response, seconds to wait before sending it); ``head`` is the request's
        header block (read only for conditional requests)."""
        if method not in (b"GET", b"HEAD"):
            return self._bad_method, 0.0
        path = target.split(b"?", 1)[0]
        if path == b"/info":
            return self._info, 0.0
        if path == b"/stats":
            return _response("200 OK", "application/json",
                             json.dumps(dict(self.counts)).encode()), 0.0
        if path.startswith(b"/p/") and path[3:].isdigit():
            index = int(path[3:]) % len(self._get)
            if method == b"HEAD":
                self.counts["HEAD 200"] += 1
                return self._head[index], self.latency
            if self.validators and self._unchanged(index, head):
                self.counts["GET 304"] += 1
                return self._not_modified[index], self.latency
            self.counts["GET 200"] += 1
            return self._get[index], self.latency
        return self._not_found, 0.0


class CorpusProtocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive, one request at a time per connection (clients here do not
    pipeline; a pipelined request simply waits in the buffer). Request bodies are not
    expected and not read."""

    def __init__(self, corpus: Corpus, schedule: Schedule) -> None:
        self._corpus = corpus
        self._schedule = schedule
        self._buffer = bytearray()
        self._busy = False
        self._close_after = False
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        self._serve_next()

    def _serve_next(self) -> None:
        if self._busy or self._transport is None:
            return
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEAD:
                self._transport.close()
            return
        head = bytes(self._buffer[:end])
        del self._buffer[: end + 4]
        request_line, _, headers = head.partition(b"\r\n")
        parts = request_line.split(b" ")
        if len(parts) != 3:
            self._transport.close()
            return
        self._close_after = b"connection: close" in headers.lower()
        response, delay = self._corpus.answer(parts[0], parts[1], b"\r\n" + headers)
        self._busy = True
        if delay > 0:
            self._schedule(delay, lambda: self._send(response))
        else:
            self._send(response)

    def _send(self, response: bytes) -> None:
        self._busy = False
        if self._transport is None:
            return
        self._transport.write(response)
        if self._close_after:
            self._transport.close()
            return
        self._serve_next()


async def start(config: CorpusConfig, port: int = 0, pages: list[bytes] | None = None,
                schedule: Schedule | None = None) -> asyncio.Server:
    """Listen on 127.0.0.1 (``port`` 0 picks one); ``schedule(delay, callback)`` defaults to
    the loop's ``call_later`` (latency costs a timer, not a task). ``pages`` (HTML) default
    to the dataset's."""
    loop = asyncio.get_running_loop()
    bodies = page_bodies(config.kind, pages) if pages else dataset_bodies(config.kind)
    corpus = Corpus(bodies, config)
    later = schedule or (lambda delay, callback: loop.call_later(delay, callback))
    return await loop.create_server(lambda: CorpusProtocol(corpus, later), "127.0.0.1", port,
                                    backlog=4096)


async def serve(config: CorpusConfig, port: int = 0, pages: list[bytes] | None = None,
                hosts: int = 1) -> None:
    """Serve until cancelled, as ``hosts`` hosts (one port each, the first ``port``); print
    the ready line with their base URLs."""
    servers = [await start(config, port if number == 0 else 0, pages)
               for number in range(hosts)]
    bases = [f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}" for server in servers]
    print(READY_PREFIX + " ".join(bases), flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


@contextlib.contextmanager
def serve_in_subprocess(
    kind: PageKind = "html", latency: float = 0.0, python: str = sys.executable,
    env: dict[str, str] | None = None, validators: bool = False, hosts: int = 1,
) -> Iterator[tuple[list[str], subprocess.Popen[str]]]:
    """Run the server in its own process; yield ``(base URLs, process)`` (one URL per host),
    stop it on exit.

    The dataset folder is read from ``$PIPELINE_BENCH_DATASET`` in ``env`` (default: ours).
    """
    command = [python, str(Path(__file__).resolve()), "--port", "0",
               "--kind", kind, "--latency", str(latency), "--hosts", str(hosts),
               *(["--validators"] if validators else [])]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith(READY_PREFIX):
            raise RuntimeError(f"corpus server did not start (exit {proc.poll()}): {line!r}")
        yield line[len(READY_PREFIX):].split(), proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--kind", choices=get_args(PageKind), default="html")
    parser.add_argument("--hosts", type=int, default=1,
                        help="serve as this many hosts (one port each)")
    parser.add_argument("--validators", action="store_true",
                        help="ETag/Last-Modified on every page, 304 to a matching request")
    args = parser.parse_args(argv)
    config = CorpusConfig(kind=args.kind, latency=args.latency, validators=args.validators)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, args.port, hosts=args.hosts))


if __name__ == "__main__":
    main()

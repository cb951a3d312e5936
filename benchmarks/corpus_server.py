"""A local corpus server for throughput benchmarks.

Serves the pages of ``../shared/datasets/article-extraction-benchmark/html/*.html.gz`` under
as many distinct URLs as a benchmark wants: ``/p/<i>`` is page ``i mod len(pages)``. Pages are
decompressed once at start and kept in memory, so serving costs the server little CPU.

* ``--kind html`` serves the pages as ``text/html``; ``--kind text`` serves ``text/plain``
  bodies of the same size made of the pages' visible words (a handler costs next to nothing
  on them, so a run measures the engine and the fetch path).
* ``--latency S`` sleeps S seconds before answering each request (GET and HEAD), standing in
  for a remote server's round trip without using CPU.

Run it standalone (``python benchmarks/corpus_server.py --port 0 --latency 0.05``: it prints
``LISTENING http://127.0.0.1:PORT`` once ready) or start it from Python with
:func:`serve_in_subprocess`, which runs it in its own process so it does not share the
client's event loop (the process is returned so a benchmark can charge its CPU separately).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from aiohttp import web

PageKind = Literal["html", "text"]
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


def load_pages(directory: Path | None = None) -> list[bytes]:
    """The corpus pages, decompressed, in a stable (file-name) order."""
    files = sorted((directory or dataset_dir()).glob("html/*.html.gz"))
    if not files:
        raise FileNotFoundError(f"no html/*.html.gz under {directory or dataset_dir()}")
    return [gzip.decompress(f.read_bytes()) for f in files]


def text_page(html: bytes) -> bytes:
    """A plain-text body about as long as ``html``, made of its visible words."""
    words = _SPACE.sub(b" ", _TAG.sub(b" ", html)).strip() or b"empty page"
    paragraph = words[:600].rsplit(b" ", 1)[0] or words[:600]
    body = bytearray()
    while len(body) < len(html):
        body += paragraph + b".\n\n"
    # Cut on a character boundary so the body stays valid UTF-8.
    return bytes(body[: len(html)]).decode("utf-8", "ignore").encode("utf-8")


@dataclass(frozen=True)
class CorpusConfig:
    kind: PageKind = "html"
    latency: float = 0.0


def make_app(
    pages: list[bytes], config: CorpusConfig,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> web.Application:
    """The aiohttp application serving ``/p/<i>`` (GET and HEAD) and ``/info``."""
    if config.kind == "text":
        bodies, content_type = [text_page(p) for p in pages], "text/plain; charset=utf-8"
    else:
        bodies, content_type = pages, "text/html; charset=utf-8"
    count = len(bodies)

    async def page(request: web.Request) -> web.Response:
        try:
            index = int(request.match_info["index"])
        except ValueError:
            raise web.HTTPNotFound() from None
        if config.latency > 0:
            await sleep(config.latency)
        body = bodies[index % count]
        headers = {"Content-Type": content_type}
        if request.method == "HEAD":
            # aiohttp drops the body of a HEAD reply but would announce length 0.
            headers["Content-Length"] = str(len(body))
            return web.Response(headers=headers)
        return web.Response(body=body, headers=headers)

    async def info(_: web.Request) -> web.Response:
        return web.json_response({"pages": count, "kind": config.kind, "latency": config.latency})

    app = web.Application()
    app.router.add_get("/p/{index}", page)  # also answers HEAD
    app.router.add_get("/info", info)
    return app


async def serve(config: CorpusConfig, port: int = 0, pages: list[bytes] | None = None) -> None:
    """Serve on 127.0.0.1 until cancelled; print the ready line with the bound port."""
    runner = web.AppRunner(make_app(pages or load_pages(), config), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=4096)
    await site.start()
    bound = runner.addresses[0][1]
    print(f"{READY_PREFIX}http://127.0.0.1:{bound}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


@contextlib.contextmanager
def serve_in_subprocess(
    kind: PageKind = "html", latency: float = 0.0, python: str = sys.executable,
    env: dict[str, str] | None = None,
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run the server in its own process; yield ``(base_url, process)``, stop it on exit.

    The dataset folder is read from ``$PIPELINE_BENCH_DATASET`` in ``env`` (default: ours).
    """
    command = [python, str(Path(__file__).resolve()), "--port", "0",
               "--kind", kind, "--latency", str(latency)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith(READY_PREFIX):
            raise RuntimeError(f"corpus server did not start (exit {proc.poll()}): {line!r}")
        yield line[len(READY_PREFIX):].strip(), proc
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
    parser.add_argument("--kind", choices=("html", "text"), default="html")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(CorpusConfig(kind=args.kind, latency=args.latency), args.port))


if __name__ == "__main__":
    main()

"""Smoke tests of the benchmark corpus server (no timing assertions: timing is benchmarks/)."""

from __future__ import annotations

import asyncio
import gzip
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from benchmarks.corpus_server import (
    DATASET_ENV,
    CorpusConfig,
    load_pages,
    serve_in_subprocess,
    start,
    text_page,
)

PAGES = [
    b"<html><head><title>One</title></head><body><p>First page body text.</p></body></html>",
    "<html><body><script>var x = 1;</script><p>Zweite Seite – größer.</p></body></html>"
    .encode(),
    b"<html><body><article><p>Third.</p><p>More words here.</p></article></body></html>",
]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    (tmp_path / "html").mkdir()
    for index, page in enumerate(PAGES):
        (tmp_path / "html" / f"{index:02d}.html.gz").write_bytes(gzip.compress(page))
    return tmp_path


@asynccontextmanager
async def client_for(config: CorpusConfig,
                     delays: list[float] | None = None) -> AsyncIterator[Callable[..., object]]:
    """A session on an in-process server; ``delays`` records the latency waits (each is
    then run at once)."""

    def record(delay: float, callback: Callable[[], None]) -> None:
        assert delays is not None
        delays.append(delay)
        asyncio.get_running_loop().call_soon(callback)

    server = await start(config, pages=PAGES, schedule=record)
    port = server.sockets[0].getsockname()[1]
    async with server, aiohttp.ClientSession(f"http://127.0.0.1:{port}") as session:
        yield session


def test_load_pages_decompresses_in_file_order(dataset: Path) -> None:
    assert load_pages(dataset) == PAGES


def test_text_page_keeps_size_and_drops_markup() -> None:
    for page in PAGES:
        text = text_page(page)
        assert b"<" not in text and b"var x" not in text
        assert len(page) - 4 <= len(text) <= len(page)
        text.decode("utf-8")  # still valid UTF-8 after the cut


async def test_html_mode_serves_pages_modulo_corpus_size() -> None:
    sleeps: list[float] = []
    async with client_for(CorpusConfig(kind="html"), sleeps) as client:
        first = await client.get("/p/0")
        assert first.status == 200
        assert first.content_type == "text/html"
        assert await first.read() == PAGES[0]
        wrapped = await client.get(f"/p/{len(PAGES) + 1}")
        assert await wrapped.read() == PAGES[1]  # same keep-alive connection
        assert (await client.get("/p/nope")).status == 404
        assert (await client.post("/p/0")).status == 405
    assert sleeps == []  # latency 0: no sleep at all


async def test_head_announces_length_without_body() -> None:
    async with client_for(CorpusConfig(kind="html")) as client:
        response = await client.head("/p/2")
        assert response.status == 200
        assert int(response.headers["Content-Length"]) == len(PAGES[2])
        assert await response.read() == b""


async def test_text_mode_and_latency_are_honoured() -> None:
    sleeps: list[float] = []
    async with client_for(CorpusConfig(kind="text", latency=0.25), sleeps) as client:
        response = await client.get("/p/1")
        assert response.content_type == "text/plain"
        assert await response.read() == text_page(PAGES[1])
        await client.head("/p/1")
        info = await (await client.get("/info")).json()
    assert sleeps == [0.25, 0.25]  # once per page request, GET and HEAD alike
    assert info == {"pages": len(PAGES), "kind": "text", "latency": 0.25}


async def test_standalone_process_honours_its_flags(dataset: Path) -> None:
    env = {**os.environ, DATASET_ENV: str(dataset)}
    with serve_in_subprocess(kind="text", latency=0.01, env=env, hosts=2) as (bases, proc):
        assert len(set(bases)) == 2 and all(b.startswith("http://127.0.0.1:") for b in bases)
        # trust_env=False (the default): no proxy, the request stays on loopback.
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            for base_url in bases:  # every host serves the same pages
                async with session.get(f"{base_url}/info") as response:
                    assert await response.json() == {"pages": 3, "kind": "text", "latency": 0.01}
                async with session.get(f"{base_url}/p/3") as response:
                    assert response.content_type == "text/plain"
                    assert await response.read() == text_page(PAGES[0])
    assert proc.poll() is not None  # stopped on exit


async def test_validators_answer_304_and_stats_count_requests() -> None:
    async with client_for(CorpusConfig(kind="html", validators=True)) as client:
        first = await client.get("/p/4")
        etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
        assert await first.read() == PAGES[1] and etag == '"1"'
        same = await client.get("/p/1", headers={"If-None-Match": etag})
        assert same.status == 304 and await same.read() == b""
        other = await client.get("/p/2", headers={"If-None-Match": etag})
        assert other.status == 200
        dated = await client.get("/p/2", headers={"If-Modified-Since": modified})
        assert dated.status == 304
        await client.head("/p/0")
        stats = await (await client.get("/stats")).json()
    assert stats == {"GET 200": 2, "GET 304": 2, "HEAD 200": 1}


async def test_without_validators_pages_have_none() -> None:
    async with client_for(CorpusConfig(kind="html")) as client:
        response = await client.get("/p/0", headers={"If-None-Match": '"0"'})
        assert response.status == 200 and "ETag" not in response.headers

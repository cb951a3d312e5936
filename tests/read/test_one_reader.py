"""One reader for the library, the tools and the batch command: a stale page with validators
is revalidated with a conditional GET on every path, ``cache_ttl=0`` means "always
revalidate" (not "cache off"), and concurrent identical requests are fetched (or sent to a
vendor) once."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections import Counter
from pathlib import Path

from aiohttp import web

import pipeline
from pipeline.agent.runtime import SharedRuntime
from pipeline.core.settings import Settings
from pipeline.store.cache import DB_NAME
from tests.batch.test_revalidation import versioned_site
from tests.cli.test_end_to_end import LOOPBACK, run_cli
from tests.support.pages import serve
from tests.support.records import read_records

HOLD = 0.5  # how long a request waits for a duplicate that breaks single flight to show it


def loopback(tmp_path: Path, **extra) -> Settings:
    return Settings(allow_net=["127.0.0.1/32"], cache_dir=str(tmp_path / "cache"), **extra)


def age_cache(directory: Path, seconds: float) -> None:
    """Every stored page becomes ``seconds`` older (no test waits for a TTL to pass)."""
    with contextlib.closing(sqlite3.connect(directory / DB_NAME)) as db:
        db.execute("UPDATE entries SET stored = stored - ?", (seconds,))
        db.commit()


async def test_the_library_revalidates_a_stale_page(tmp_path):
    app, requests, _ = versioned_site()
    settings = loopback(tmp_path, cache_ttl=1)
    async with serve(app) as base:
        url = f"{base}/etag/a"
        first = await pipeline.web_extract(url, settings=settings)
        age_cache(tmp_path / "cache", 5)  # past the TTL
        requests.clear()
        second = await pipeline.web_extract(url, settings=settings)
    assert first.records[0].ok and first.records[0].cache is None
    [record] = second.records
    assert record.ok and record.cache == "revalidated"
    assert record.content == first.records[0].content
    assert requests == Counter({("GET", "/etag/a", True): 1})  # one conditional GET, no HEAD


async def test_a_ttl_of_zero_revalidates_every_library_read(tmp_path):
    app, requests, _ = versioned_site()
    settings = loopback(tmp_path, cache_ttl=0)
    async with serve(app) as base:
        url = f"{base}/etag/b"
        records = [(await pipeline.web_extract(url, settings=settings)).records[0]
                   for _ in range(3)]
    assert [r.cache for r in records] == [None, "revalidated", "revalidated"]
    assert requests[("GET", "/etag/b", True)] == 2


async def test_a_ttl_of_zero_revalidates_every_batch_page(tmp_path):
    app, requests, _ = versioned_site()
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{base}/etag/a\n{base}/plain/d\n")
        runs = []
        for n in range(2):
            out = tmp_path / f"out{n}.jsonl"
            code, stderr = await run_cli(str(urls), "-o", str(out), "--cache",
                                         str(tmp_path / "cache"), "--cache-ttl", "0",
                                         "--retries", "0", *LOOPBACK)
            assert code == 0, stderr
            runs.append({r["url"][len(base):]: r["cache"] for r in read_records(out)})
    assert runs == [{"/etag/a": None, "/plain/d": None},
                    {"/etag/a": "revalidated", "/plain/d": None}]
    assert requests[("GET", "/etag/a", True)] == 1


def held_site() -> tuple[web.Application, Counter]:
    """A page whose request is held until a second one arrives (single flight broken: shown
    whatever the machine's load) or ``HOLD`` s pass; counts GETs per path."""
    gets: Counter = Counter()
    crowded = asyncio.Event()

    async def page(request: web.Request) -> web.Response:
        if request.method == "GET":
            gets[request.path] += 1
            if gets[request.path] > 1:
                crowded.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(crowded.wait(), HOLD)
        return web.Response(text="Herons wait in the shallows. " * 20,
                            content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{name}", page)
    return app, gets


async def test_concurrent_library_calls_of_a_runtime_fetch_once(tmp_path):
    app, gets = held_site()
    for cache in (True, False):
        gets.clear()
        settings = loopback(tmp_path, cache=cache)
        async with serve(app) as base, SharedRuntime(settings) as shared:
            url = f"{base}/same-{cache}"
            responses = await asyncio.gather(*(
                pipeline.web_extract(url, settings=settings, runtime=shared)
                for _ in range(3)))
        assert all(r.ok and r.records[0].ok for r in responses)
        assert gets == Counter({f"/same-{cache}": 1}), cache


def jina_fake(server) -> Counter:
    """The vendor reader on the scripted loopback server; counts the URLs it is asked for.
    Its answer is held like :func:`held_site`'s."""
    asked: Counter = Counter()
    crowded = asyncio.Event()

    async def read() -> web.Response:
        url = server.requests[-1].json()["url"]  # appended just before this reply is made
        asked[url] += 1
        if asked[url] > 1:
            crowded.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(crowded.wait(), HOLD)
        return web.json_response({"code": 200, "data": {
            "title": "Read", "url": url, "content": "Readable text. " * 10}})

    server.route("POST", "/", read)
    return asked


async def test_concurrent_vendor_reads_of_a_runtime_go_out_once(tmp_path, server, monkeypatch):
    monkeypatch.setenv("JINA_READER_URL", server.url)
    asked = jina_fake(server)
    url = "https://example.org/page"
    for cache in (True, False):
        asked.clear()
        settings = loopback(tmp_path, cache=cache, extract_backend=["jina"])
        async with SharedRuntime(settings) as shared:
            responses = await asyncio.gather(*(
                pipeline.web_extract(url, settings=settings, runtime=shared)
                for _ in range(3)))
        assert all(r.ok and r.provider == "jina" for r in responses[:1]), responses
        assert all(r.records[0].ok for r in responses)
        assert asked == Counter({url: 1}), cache


async def test_the_batch_command_reads_duplicates_once_through_a_vendor(tmp_path, server,
                                                                       monkeypatch):
    monkeypatch.setenv("JINA_READER_URL", server.url)
    asked = jina_fake(server)
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.org/a\n" * 3)
    out = tmp_path / "out.jsonl"
    code, stderr = await run_cli(str(urls), "-o", str(out), "--extract-backend", "jina",
                                 "--cache", str(tmp_path / "cache"), "--quiet", *LOOPBACK)
    assert code == 0, stderr
    records = read_records(out)
    assert len(records) == 3 and all(r["ok"] for r in records)
    assert asked == Counter({"https://example.org/a": 1})

"""A run stuck on a sitemap still obeys its limits and its signals: the parse runs in a
worker process under ``--handler-timeout``, SIGTERM stops the run as Ctrl-C does (whole
records kept, the resume hint printed), in a plain run and while a sharded run's driver
walks the sitemaps."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from aiohttp import web

from tests.batch.input.sitemap_site import urlset
from tests.cli.test_end_to_end import run_cli, start_cli
from tests.support.pages import serve
from tests.support.records import read_records

ENDLESS = ["--handler", "tests.support.endless_parse:handler"]
LOOPBACK = ["--allow-net", "127.0.0.1/32", "--rate", "1000", "--workers", "1", "--retries",
            "0", "--quiet"]
PATIENCE = 120  # seconds a stopped run may take to exit on a loaded machine


@contextlib.asynccontextmanager
async def site():
    """A sitemap and text pages, the paths served so far; /held.xml never answers."""
    served: set[str] = set()
    never = asyncio.Event()

    async def handle(request: web.Request) -> web.Response:
        if request.method == "GET":
            served.add(request.path)
        if request.path == "/map.xml":
            base = f"http://{request.host}"
            return web.Response(body=urlset([f"{base}/page/{n}" for n in range(3)]),
                                content_type="application/xml")
        if request.path == "/held.xml":
            await never.wait()
        return web.Response(text=f"Page {request.path}. Some words here.",
                            content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    async with serve(app) as base:
        yield base, served
        never.set()


async def _stop_when(served: set[str], paths: set[str], *argv: str) -> tuple[int | None, str]:
    """Start the command, SIGTERM it once ``paths`` were served (their records are done
    a moment later; a stop lets work in flight finish); its exit status and stderr (it is
    killed if it outlives PATIENCE)."""
    proc = await start_cli(*argv)
    try:
        async with asyncio.timeout(PATIENCE):
            while not paths <= served:
                await asyncio.sleep(0.1)
        await asyncio.sleep(1)  # the parse has begun (or is about to: the same stop)
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), PATIENCE)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode, stderr.decode()


async def test_sigterm_stops_a_run_stuck_parsing_a_sitemap(tmp_path):
    """SIGTERM while the sitemap's parse never ends: the run stops at once with the
    list's records written and the hint (before: the parse held the event loop, so the
    signal waited for it)."""
    out = tmp_path / "out.jsonl"
    urls = tmp_path / "urls.txt"
    async with site() as (base, served):
        urls.write_text(f"{base}/listed/1\n{base}/listed/2\n")
        code, stderr = await _stop_when(
            served, {"/map.xml", "/listed/1", "/listed/2"}, str(urls), "--sitemap",
            f"{base}/map.xml", "-o", str(out), *ENDLESS, *LOOPBACK)
    assert code == 130, stderr
    assert "interrupted" in stderr and "--resume" in stderr
    assert sorted(r["url"] for r in read_records(out)) == [f"{base}/listed/1",
                                                           f"{base}/listed/2"]


async def test_a_parse_past_the_handler_timeout_is_the_documents_record(tmp_path):
    out = tmp_path / "out.jsonl"
    async with site() as (base, _):
        code, stderr = await run_cli("--sitemap", f"{base}/map.xml", "-o", str(out),
                                     "--handler-timeout", "2", *ENDLESS, *LOOPBACK,
                                     limit=PATIENCE)
    assert code == 0, stderr
    [record] = read_records(out)
    assert record["url"] == f"{base}/map.xml" and record["error"]["kind"] == "extract"
    assert "parsing the document took longer than 2s" in record["error"]["message"]


async def test_sigterm_stops_a_sharded_run_while_its_driver_walks_the_sitemaps(tmp_path):
    out = tmp_path / "out"
    async with site() as (base, served):
        code, stderr = await _stop_when(
            served, {"/held.xml"}, "--sitemap", f"{base}/held.xml", "-o", str(out),
            "--processes", "2", "--timeout", "600", *LOOPBACK)
    assert code == 130, stderr
    assert "interrupted" in stderr and "--resume" in stderr

"""Per-host limits seen from the servers' side, host isolation, and TLS failures."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import subprocess

import pytest
from aiohttp import web

from pipeline.fetch import FetchError, HttpFetcher
from tests.fetch.conftest import ROOM

pytestmark = pytest.mark.usefixtures("connect_log")


def tracking_app(together: int = 1) -> tuple[web.Application, dict[str, int]]:
    """Records the peak number of requests in flight. The first requests wait until
    ``together`` of them are in flight (if they ever are: at most ``GATHER_WAIT`` s), so a
    peak is reached whatever the machine's load."""
    stats = {"active": 0, "peak": 0, "total": 0}
    gathered = asyncio.Event()

    async def route(request: web.Request) -> web.Response:
        stats["active"] += 1
        stats["total"] += 1
        stats["peak"] = max(stats["peak"], stats["active"])
        if stats["peak"] >= together:
            gathered.set()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(gathered.wait(), GATHER_WAIT)
            return web.Response(text="ok", content_type="text/plain")
        finally:
            stats["active"] -= 1

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    return app, stats


GATHER_WAIT = 5.0  # only a client that never sends `together` requests at once waits this


async def test_per_host_concurrency_seen_by_the_server(make_settings, app_server):
    app, stats = tracking_app(together=2)
    async with app_server(app) as base, \
            HttpFetcher(make_settings(per_host=2, head=False, **ROOM)) as client:
        await asyncio.gather(*(client.fetch(f"{base}/{n}") for n in range(10)))
    assert stats["total"] == 10 and stats["peak"] == 2


async def test_a_hanging_host_does_not_stall_another(make_settings, app_server, raw_server):
    async def hang(reader, writer):
        await asyncio.sleep(30)

    app, _ = tracking_app()
    async with app_server(app) as fast, raw_server(hang) as slow, \
            HttpFetcher(make_settings(per_host=1, retries=0, **ROOM)) as client:
        stuck = [asyncio.create_task(client.fetch(f"{slow}/{n}")) for n in range(3)]
        await asyncio.sleep(0)  # the first one holds the slow host's only place
        results = await asyncio.gather(*(client.fetch(f"{fast}/{n}") for n in range(5)))
        assert all(result.body == b"ok" for result in results)
        assert not any(task.done() for task in stuck)  # still hanging
        for task in stuck:
            task.cancel()
        await asyncio.gather(*stuck, return_exceptions=True)


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> ssl.SSLContext:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=30)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


async def test_untrusted_certificate_is_a_network_error_not_retried(make_settings,
                                                                     self_signed):
    app, stats = tracking_app()
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=self_signed)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        # ROOM: a handshake slowed by a busy machine must not end as a connect timeout.
        async with HttpFetcher(make_settings(**ROOM)) as client:
            with pytest.raises(FetchError) as info:
                await client.fetch(f"https://127.0.0.1:{port}/")
    finally:
        await runner.cleanup()
    assert info.value.kind == "network" and "TLS" in info.value.message
    assert info.value.attempts == 1 and stats["total"] == 0


async def test_queueing_for_a_host_does_not_count_against_the_deadline(make_settings,
                                                                        app_server):
    # 12 URLs of one host, one at a time at 4 requests/s: the last waits ~2.75 s in the
    # queue, far longer than its 1.5 s deadline, and must still succeed (a request has its
    # 1.5 s after admission: far more than a busy machine needs for one on loopback).
    app, stats = tracking_app()
    settings = make_settings(per_host=1, rate=4.0, timeout=1.5, read_timeout=1.0,
                             head=False)
    async with app_server(app) as base, HttpFetcher(settings) as client:
        results = await asyncio.gather(*(client.fetch(f"{base}/{n}") for n in range(12)))
    assert [r.status for r in results] == [200] * 12
    assert stats["peak"] == 1

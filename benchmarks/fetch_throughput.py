"""Throughput of HttpFetcher against a local aiohttp server (run in a child process).

    python benchmarks/fetch_throughput.py --urls 2000 --hosts 8 --concurrency 64 [--no-head]

"Hosts" are ports of the same loopback server, so the per-host gate and connection pools see
distinct hosts. Prints URLs/s and peak RSS; the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiohttp import web

from pipeline.core.settings import Settings
from pipeline.fetch import FetchError, HttpFetcher

PAGE = b"<html><head><title>t</title></head><body>" + b"<p>lorem ipsum</p>" * 500 + b"</body>"


def _serve(ports: list[int], ready) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(body=PAGE, content_type="text/html")

    async def main() -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        for port in ports:
            await web.TCPSite(runner, "127.0.0.1", port).start()
        ready.set()
        await asyncio.Event().wait()

    asyncio.run(main())


def _free_ports(count: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(count)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in socks]
    for sock in socks:
        sock.close()
    return ports


async def _run(args: argparse.Namespace, ports: list[int]) -> tuple[float, int]:
    settings = Settings(allow_net=["127.0.0.1/32"], concurrency=args.concurrency,
                        per_host=args.per_host, rate=args.rate, head=not args.no_head)
    urls = [f"http://127.0.0.1:{ports[n % len(ports)]}/p{n}" for n in range(args.urls)]
    failures = 0
    queue: asyncio.Queue[str] = asyncio.Queue()
    for url in urls:
        queue.put_nowait(url)

    async with HttpFetcher(settings) as fetcher:
        async def worker() -> None:
            nonlocal failures
            while not queue.empty():
                url = queue.get_nowait()
                try:
                    await fetcher.fetch(url)
                except FetchError:
                    failures += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        return time.perf_counter() - started, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--per-host", type=int, default=8)
    parser.add_argument("--rate", type=float, default=10_000.0)
    parser.add_argument("--no-head", action="store_true")
    args = parser.parse_args()
    ports = _free_ports(args.hosts)
    ready = multiprocessing.Event()
    server = multiprocessing.Process(target=_serve, args=(ports, ready), daemon=True)
    server.start()
    try:
        ready.wait(10)
        elapsed, failures = asyncio.run(_run(args, ports))
    finally:
        server.terminate()
        server.join()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.urls} URLs, {args.hosts} hosts, concurrency {args.concurrency}, "
          f"head={'off' if args.no_head else 'on'}: {elapsed:.2f} s, "
          f"{args.urls / elapsed:.0f} URLs/s, {failures} failures, peak RSS {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()

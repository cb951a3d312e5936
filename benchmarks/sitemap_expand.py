"""Expanding a 1,000,000-URL sitemap index served on loopback: memory and time to first record.

A server process (this script with ``--serve``) generates a sitemap index of ``--children``
gzip'd children (served as ``application/gzip``, like ``sitemap-7.xml.gz``) of
``--per-child`` URLs each (default 20 × 50,000 = 1,000,000, the protocol's per-file maximum),
and serves each page as a short text. Then, each in a process of its own:

* ``expand``: the expansion alone (``pipeline.batch.input.expand.Expander`` through the document
  fetcher, each document parsed in one worker process as in a run, no page fetched): time to
  the first URL, wall and CPU time (this process's), the process's RSS
  after 1, 100k, 250k, 500k and every URL, and its peak RSS (``ru_maxrss``);
* ``cli``: ``python -m pipeline --sitemap …/index.xml -o out.jsonl`` (``--rate inf
  --per-host 64 --no-head``): time from start to the first record in the output, then the
  run goes on until ``--records`` records; the batch process's RSS is sampled all along
  (peak and at the end), then it is stopped with SIGINT;
* ``parsers``: one 50,000-URL child parsed by ``ultimate-sitemap-parser``
  (``sitemap_from_str``, if installed) and by ours (``pipeline.batch.input.sitemaps.XmlLinks``, fed
  64 KB at a time): CPU time (an untraced run) and peak traced memory (a second, traced
  run); and feedparser on an RSS feed of 2,000 items (its cost per item).

    python benchmarks/sitemap_expand.py [--children 20] [--per-child 50000] [--records 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def child_xml(base: str, child: int, per_child: int) -> bytes:
    start = child * per_child
    entries = "".join(f"<url><loc>{base}/page/{n}</loc><lastmod>2024-01-01</lastmod>"
                      "<changefreq>weekly</changefreq></url>"
                      for n in range(start, start + per_child))
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{entries}</urlset>'.encode()


def serve(children: int, per_child: int) -> None:
    from aiohttp import web

    async def main() -> None:
        documents: dict[str, tuple[bytes, str]] = {}

        async def handle(request: web.Request) -> web.Response:
            if request.path.startswith("/page/"):
                return web.Response(text=f"Page {request.path[6:]}. A few words.",
                                    content_type="text/plain")
            found = documents.get(request.path)
            if found is None:
                raise web.HTTPNotFound()
            return web.Response(body=found[0], content_type=found[1])

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        locs = "".join(f"<sitemap><loc>{base}/sitemap-{k}.xml.gz</loc></sitemap>"
                       for k in range(children))
        documents["/index.xml"] = (f'<?xml version="1.0"?><sitemapindex {NS}>{locs}'
                                   "</sitemapindex>".encode(), "application/xml")
        for k in range(children):
            documents[f"/sitemap-{k}.xml.gz"] = (gzip.compress(child_xml(base, k, per_child), 6),
                                                 "application/gzip")
        sizes = [len(body) for body, _ in documents.values()]
        print(json.dumps({"base": base, "gzip_bytes": sum(sizes)}), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def rss_mb(pid: int | None = None) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def expand_only(base: str) -> None:
    from pipeline.batch.input.documents import in_worker
    from pipeline.batch.input.expand import Expander
    from pipeline.batch.input.run_input import ExpandOptions
    from pipeline.batch.input.sources import document_fetcher
    from pipeline.batch.pool import ProcessRunner
    from pipeline.core.settings import Settings

    settings = Settings(allow_net=["127.0.0.1/32"], rate=float("inf"), per_host=64)
    marks = {1, 100_000, 250_000, 500_000}

    async def main() -> dict:
        started, cpu = time.monotonic(), time.process_time()
        found: dict = {"rss_mb_at": {}, "rss_mb_start": round(rss_mb(), 1)}
        count = 0
        async with document_fetcher(settings) as fetcher, \
                ProcessRunner(1, settings.handler_timeout) as worker:
            # as a run does: each document parsed in a worker of the handler pool
            expander = Expander(ExpandOptions(sitemaps=(f"{base}/index.xml",)), fetcher,
                                settings.max_bytes,
                                parse=in_worker(worker, settings.max_bytes))
            async for _ in expander.items():
                count += 1
                if count == 1:
                    found["first_url_s"] = round(time.monotonic() - started, 3)
                if count in marks:
                    found["rss_mb_at"][count] = round(rss_mb(), 1)
        found["rss_mb_at"][count] = round(rss_mb(), 1)
        found.update(urls=count, wall_s=round(time.monotonic() - started, 2),
                     cpu_s=round(time.process_time() - cpu, 2),
                     peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                                       1),
                     stats=expander.stats.describe(expander.options))
        return found

    print(json.dumps(asyncio.run(main())))


def cli_run(base: str, records: int, work: Path) -> dict:
    out = work / "out.jsonl"
    command = [sys.executable, "-m", "pipeline", "--sitemap", f"{base}/index.xml", "-o",
               str(out), "--allow-net", "127.0.0.1/32", "--rate", "inf", "--per-host", "64",
               "--no-head", "--format", "text", "--workers", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.PIPE)
    first = None
    peak = 0.0
    lines = 0
    read = 0  # bytes of the output counted so far
    try:
        while process.poll() is None:
            peak = max(peak, rss_mb(process.pid))
            if out.exists() and out.stat().st_size > read:
                if first is None:
                    first = time.monotonic() - started
                with open(out, "rb") as handle:
                    handle.seek(read)
                    chunk = handle.read()
                    read += chunk.rfind(b"\n") + 1
                    lines += chunk.count(b"\n")
                if lines >= records:
                    break
            time.sleep(0.01 if first is None else 0.5)
        end_rss = rss_mb(process.pid) if process.poll() is None else None
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    return {"first_record_s": round(first or 0, 3), "records": lines,
            "seconds": round(elapsed, 1), "records_per_s": round(lines / elapsed),
            "peak_rss_mb": round(peak, 1), "rss_mb_at_end": end_rss and round(end_rss, 1),
            "stderr": stderr.decode()[-400:]}


def parsers(per_child: int) -> dict:
    from pipeline.batch.input.feeds import feed_links
    from pipeline.batch.input.sitemaps import XmlLinks

    body = child_xml("https://s.test", 0, per_child)
    found: dict = {"document_mb": round(len(body) / 2**20, 1)}

    def measure(name: str, work) -> None:
        """CPU time of a plain run, then peak traced memory of a second, traced one."""
        cpu = time.process_time()
        count = work()
        cpu = time.process_time() - cpu
        tracemalloc.start()
        work()
        found[name] = {"urls": count, "cpu_s": round(cpu, 2),
                       "peak_traced_mb": round(tracemalloc.get_traced_memory()[1] / 2**20, 1)}
        tracemalloc.stop()

    def ours() -> int:
        parser, count = XmlLinks(), 0
        for start in range(0, len(body), 64 * 1024):
            count += len(parser.feed(body[start:start + 64 * 1024]))
        return count + len(parser.close())

    measure("ours_xmllinks", ours)
    try:
        from usp.tree import sitemap_from_str
    except ImportError:
        found["ultimate_sitemap_parser"] = "not installed"
    else:
        text = body.decode()
        measure("ultimate_sitemap_parser",
                lambda: sum(1 for _ in sitemap_from_str(text).all_pages()))
    items = "".join(f"<item><title>Item {n}</title><link>https://s.test/{n}</link>"
                    f"<description>{'A few words of summary. ' * 20}</description></item>"
                    for n in range(2000))
    feed = f'<?xml version="1.0"?><rss version="2.0"><channel>{items}</channel></rss>'.encode()
    found["feed_mb"] = round(len(feed) / 2**20, 2)
    measure("feedparser_2000_items", lambda: len(feed_links(feed)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=20)
    parser.add_argument("--per-child", type=int, default=50_000)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--expand", metavar="BASE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.children, args.per_child)
    if args.expand:
        return expand_only(args.expand)
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{args.children} x {args.per_child} URLs, {os.cpu_count()} cores, load average "
          f"at start {load}", flush=True)
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--children",
                               str(args.children), "--per-child", str(args.per_child)],
                              stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        info = json.loads(server.stdout.readline())
        print(f"served: {info['gzip_bytes'] / 2**20:.1f} MB of gzip'd sitemaps", flush=True)
        expanded = subprocess.run([sys.executable, __file__, "--expand", info["base"]],
                                  capture_output=True, check=True, cwd=REPO)
        print("expand:", expanded.stdout.decode().strip(), flush=True)
        with tempfile.TemporaryDirectory() as work:
            print("cli:", json.dumps(cli_run(info["base"], args.records, Path(work))),
                  flush=True)
    finally:
        server.terminate()
        server.wait()
    print("parsers:", json.dumps(parsers(args.per_child)), flush=True)


if __name__ == "__main__":
    main()

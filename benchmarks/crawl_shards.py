"""A sharded crawl against one process: a generated site spread over several hosts.

    python benchmarks/crawl_shards.py [--hosts 8] [--pages 2000] [--latency 0.05]
                                      [--concurrency 16] [--processes 2] [--json FILE]

The site has ``--pages`` pages on ``--hosts`` hosts (ports of 127.0.0.1, which are different
hosts for sharding), page ``i`` on host ``i % hosts``; page ``i`` links to pages ``10i+1`` …
``10i+10`` (so all are reachable from page 0) and to three random pages, every link
absolute, so most links cross to another host — and, sharded, to another shard. Each page
answers after ``--latency`` seconds; robots.txt allows everything; there is no sitemap.

The command line is run twice, as a user runs it, with ``--scope any``: ``-o out.jsonl``
(one process) and ``--processes N -o DIR`` (N shards; ``--concurrency`` is each shard's, as
the flag says). Per run: pages/s (distinct pages written / wall time, start-up included),
CPU-seconds per page and peak RSS of the process tree (:mod:`benchmarks.measure`), pages found
of those reachable, duplicate records and duplicate fetches (counted by the server). The
numbers depend on the machine; benchmarks/README.md has ours.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import sys
import tempfile
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.crawl import WORDS
from benchmarks.measure import run_measured

FANOUT = 10
CROSS_LINKS = 3


def links_of(page: int, pages: int, rng: random.Random) -> list[int]:
    tree = [child for child in range(FANOUT * page + 1, FANOUT * page + FANOUT + 1)
            if child < pages]
    return tree + [rng.randrange(pages) for _ in range(CROSS_LINKS)]


def serve(pages: int, hosts: int, port: int, latency: float,
          ready: Any) -> None:  # pragma: no cover - a child
    """The site on ports ``port`` … ``port + hosts - 1``; ``/__stats`` on any of them
    answers the GETs per page so far."""
    from aiohttp import web

    rng = random.Random(7)
    links = [links_of(page, pages, rng) for page in range(pages)]
    fetched: Counter[int] = Counter()

    def url(page: int) -> str:
        return f"http://127.0.0.1:{port + page % hosts}/p{page}"

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/__stats":
            return web.json_response({str(page): count for page, count in fetched.items()})
        await asyncio.sleep(latency)
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        try:
            page = int(request.path.removeprefix("/p"))
        except ValueError:
            return web.Response(status=404, text="not found")
        if not 0 <= page < pages or request.url.port != port + page % hosts:
            return web.Response(status=404, text="not found")
        fetched[page] += 1
        anchors = "".join(f'<li><a href="{url(link)}">page {link}</a></li>'
                          for link in links[page])
        # distinct prose per page, without digits (the trap guard folds them)
        words = " ".join(random.Random(page).choices(WORDS, k=120))
        return web.Response(content_type="text/html", text=(
            f"<html><head><title>Page {page}</title></head><body><ul>{anchors}</ul>"
            f"<article><h1>Page {page}</h1><p>{words}.</p></article></body></html>"))

    async def main() -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        for host in range(hosts):
            await web.TCPSite(runner, "127.0.0.1", port + host, backlog=1024).start()
        ready.set()
        await asyncio.Event().wait()

    asyncio.run(main())


def written(out: Path) -> list[str]:
    files = sorted(out.glob("part-*.jsonl")) if out.is_dir() else [out]
    return [json.loads(line)["url"] for path in files for line in path.read_text().splitlines()]


def bench(name: str, extra: list[str], out: Path, args: argparse.Namespace) -> dict[str, Any]:
    start = f"http://127.0.0.1:{args.port}/p0"
    command = [sys.executable, "-m", "pipeline", "crawl", start, "--scope", "any",
               "--no-sitemap", "--max-pages", str(args.pages + 10), "--concurrency",
               str(args.concurrency), "--per-host", str(args.concurrency), "--rate", "inf",
               "--no-head",
               "--allow-private", "--no-detect-lang", "--retries", "0", "--quiet",
               "-o", str(out), *extra]
    before = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{args.port}/__stats").read())
    measured = run_measured(command, timeout=args.timeout)
    after = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{args.port}/__stats").read())
    urls = written(out)
    found = len(set(urls))
    fetches = {page: after[page] - before.get(page, 0) for page in after}
    return {
        "run": name, "command": " ".join(command[1:]), "exit": measured.returncode,
        "pages_per_s": round(found / measured.wall_s, 1), "wall_s": round(measured.wall_s, 1),
        "cpu_s_per_page": round(measured.cpu_s / max(found, 1), 4),
        "peak_rss_mb": round(measured.peak_rss_bytes / 2**20), "found": found,
        "reachable": args.pages, "duplicate_records": len(urls) - found,
        "duplicate_fetches": sum(max(0, count - 1) for count in fetches.values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default in (("--hosts", 8), ("--pages", 2_000), ("--latency", 0.05),
                          ("--concurrency", 16), ("--processes", 2), ("--port", 8854),
                          ("--timeout", 1_800.0)):
        parser.add_argument(flag, type=type(default), default=default)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    ready = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(args.pages, args.hosts, args.port,
                                                         args.latency, ready), daemon=True)
    server.start()
    ready.wait(60)
    results = []
    try:
        with tempfile.TemporaryDirectory() as work:
            results.append(bench("one process", [], Path(work) / "out.jsonl", args))
            results.append(bench(f"--processes {args.processes}",
                                 ["--processes", str(args.processes)], Path(work) / "dir", args))
    finally:
        server.terminate()
    for result in results:
        print(json.dumps(result))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

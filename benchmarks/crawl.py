"""Crawl a generated loopback site: our crawler against Scrapy and crawl4ai.

    python benchmarks/crawl.py [--pages 5000] [--latency 0.05] [--concurrency 16]
                               [--tools us,scrapy,crawl4ai] [--json FILE]

The site (:func:`generate`) has ``--pages`` reachable pages, each answered after
``--latency`` seconds, plus orphans no page links to. Its links spell one page several ways —
``/s/7/``, ``/s/7/index.html``, ``/s/7/?utm_source=nav``, ``/s/7/#top`` — the aliases a
crawler must fold into one page, and one link leaves the site. robots.txt allows everything;
there is no sitemap, so every page is found by links.

Each crawler runs in its own process at the same concurrency (requests in flight to the one
host), without politeness delays, and writes one line per page it returns:
- ``us``: :func:`pipeline.crawl.run.crawl`, the entry point of the ``crawl`` command (the
  batch defaults otherwise; the HEAD guard off, since the peers send none);
- ``scrapy``: a ``CrawlSpider`` with one ``LinkExtractor`` rule, trafilatura's markdown in
  the callback (extra ``[crawlbench]``);
- ``crawl4ai``: ``BFSDeepCrawlStrategy`` over ``AsyncHTTPCrawlerStrategy`` (no browser).

Per crawler: pages/s (distinct reachable pages returned / wall time, start-up included),
CPU-seconds per such page and peak RSS of its process tree (:mod:`benchmarks.measure`),
pages found of those reachable, duplicate records
(one page returned twice) and duplicate fetches (one page requested twice, counted by the
server). The numbers depend on the machine; benchmarks/README.md has ours.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measure import run_measured

PAGE_PATH = re.compile(r"^/s/(\d+)/(?:index\.html)?$")
ALIASES = ("/s/{}/", "/s/{}/index.html", "/s/{}/?utm_source=nav", "/s/{}/#top")
FANOUT = 10
CROSS_LINKS = 3
WORDS = ("river", "stone", "harbor", "lantern", "meadow", "copper", "signal", "orchard",
         "ledger", "canvas", "summit", "thread", "beacon", "willow", "quarry", "compass")
TOOLS = ("us", "scrapy", "crawl4ai")


# --------------------------------------------------------------------------- the site

@dataclass
class Site:
    """A generated site: ``links[i]`` are page ``i``'s hrefs; pages ``0..reachable-1`` are
    linked from the start page (0), the rest are orphans."""

    reachable: int
    orphans: int
    links: list[list[str]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    @property
    def pages(self) -> int:
        return self.reachable + self.orphans


def generate(reachable: int, *, orphans: int = 50, seed: int = 7) -> Site:
    """A tree of ``FANOUT`` children per page, a parent link and ``CROSS_LINKS`` random
    links per page, each written as one of :data:`ALIASES`; orphans link into the site but
    nothing links to them."""
    rng = random.Random(seed)
    site = Site(reachable, orphans)
    for page in range(site.pages):
        hrefs = []
        if page < reachable:
            children = range(page * FANOUT + 1, min(page * FANOUT + FANOUT + 1, reachable))
            targets = [*children, (page - 1) // FANOUT if page else 0,
                       *(rng.randrange(reachable) for _ in range(CROSS_LINKS))]
        else:
            targets = [rng.randrange(reachable) for _ in range(CROSS_LINKS)]
        hrefs = [ALIASES[(page + n) % len(ALIASES)].format(t) for n, t in enumerate(targets)]
        hrefs.append("http://elsewhere.invalid/leave")
        site.links.append(hrefs)
        paragraphs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 90))).capitalize()
                      + "." for _ in range(6)]
        site.text.append("\n".join(f"<p>{p}</p>" for p in paragraphs))
    return site


def page_id(url: str) -> int | None:
    """The page a URL of the site stands for (any alias), None for anything else."""
    from urllib.parse import urlsplit

    match = PAGE_PATH.match(urlsplit(url).path)
    return int(match.group(1)) if match else None


def html(site: Site, page: int) -> str:
    links = "".join(f'<li><a href="{href}">link {n}</a></li>'
                    for n, href in enumerate(site.links[page]))
    return (f"<!doctype html><html lang=en><head><title>Page {page}</title></head><body>"
            f"<nav><ul>{links}</ul></nav><main><article><h1>Page {page}</h1>"
            f"{site.text[page]}</article></main><footer>Site footer</footer></body></html>")


def serve(site: Site, latency: float, port: int, ready) -> None:  # pragma: no cover - a child
    """The site on 127.0.0.1:``port``; ``/__stats`` answers the GETs per page so far."""
    from aiohttp import web

    fetched: Counter[int] = Counter()
    other = Counter[str]()
    flight = Counter[str]()  # "now" in flight, "most" at once: the concurrency really used

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/__stats":
            return web.json_response({"fetched": {str(k): v for k, v in fetched.items()},
                                      "other": dict(other), "most_in_flight": flight["most"]})
        if request.path == "/__reset":
            fetched.clear()
            other.clear()
            flight.clear()
            return web.Response(text="ok")
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        try:
            await asyncio.sleep(latency)
        finally:
            flight["now"] -= 1
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        number = page_id(str(request.url))
        if number is None or number >= site.pages:
            other[request.path] += 1
            return web.Response(status=404, text="not found")
        if request.method == "GET":
            fetched[number] += 1
        return web.Response(text=html(site, number), content_type="text/html")

    async def main() -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
        ready.set()
        await asyncio.Event().wait()

    asyncio.run(main())


# --------------------------------------------------------------------------- counting

@dataclass
class Count:
    """What a crawler returned and fetched, judged against the site."""

    records: int
    found: int  # distinct reachable pages returned
    reachable: int
    duplicate_records: int  # records beyond the first for one page
    duplicate_fetches: int  # GETs beyond the first for one page (server side)
    orphans_returned: int


def count(site: Site, urls: list[str], fetched: dict[int, int]) -> Count:
    """Judge a crawler's returned ``urls`` and the server's GETs per page."""
    ids = [page_id(url) for url in urls]
    pages = Counter(i for i in ids if i is not None)
    return Count(records=len(urls),
                 found=sum(1 for i in pages if i < site.reachable),
                 reachable=site.reachable,
                 duplicate_records=sum(n - 1 for n in pages.values()),
                 duplicate_fetches=sum(n - 1 for n in fetched.values() if n > 1),
                 orphans_returned=sum(1 for i in pages if i >= site.reachable))


# --------------------------------------------------------------------------- the crawlers

def run_scrapy(start: str, out: Path, concurrency: int, max_pages: int) -> None:
    """A CrawlSpider: one rule following every in-domain link, trafilatura in the callback."""
    import trafilatura
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    class SiteSpider(CrawlSpider):
        name = "site"
        allowed_domains = ("127.0.0.1",)
        start_urls = (start,)
        rules = (Rule(LinkExtractor(), callback="parse_item", follow=True),)

        def parse_start_url(self, response, **kwargs):  # the start page is a page too
            return self.parse_item(response)

        def parse_item(self, response):
            text = trafilatura.extract(response.text, output_format="markdown",
                                       url=response.url)
            yield {"url": response.url, "chars": len(text or "")}

    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_DELAY": 0, "ROBOTSTXT_OBEY": True, "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False, "CLOSESPIDER_ITEMCOUNT": max_pages,
        "FEEDS": {str(out): {"format": "jsonlines"}}})
    process.crawl(SiteSpider)
    process.start()


def run_crawl4ai(start: str, out: Path, concurrency: int, max_pages: int) -> None:
    """crawl4ai's breadth-first deep crawl over its HTTP strategy (no browser)."""
    from crawl4ai import AsyncWebCrawler, CacheMode, CrawlerRunConfig, HTTPCrawlerConfig
    from crawl4ai.async_crawler_strategy import AsyncHTTPCrawlerStrategy
    from crawl4ai.deep_crawling import BFSDeepCrawlStrategy

    async def main() -> None:
        strategy = AsyncHTTPCrawlerStrategy(browser_config=HTTPCrawlerConfig(),
                                            max_connections=concurrency)
        config = CrawlerRunConfig(
            deep_crawl_strategy=BFSDeepCrawlStrategy(max_depth=100, max_pages=max_pages,
                                                     include_external=False),
            semaphore_count=concurrency, mean_delay=0.0, max_range=0.0, stream=True,
            cache_mode=CacheMode.BYPASS, verbose=False)
        with out.open("w") as sink:
            async with AsyncWebCrawler(crawler_strategy=strategy) as crawler:
                async for result in await crawler.arun(start, config=config):
                    if result.success:
                        sink.write(json.dumps({"url": result.url}) + "\n")

    asyncio.run(main())


def run_us(start: str, out: Path, concurrency: int, max_pages: int) -> None:
    """Our crawler through its library entry point (the one the ``crawl`` command runs),
    politeness set like the peers' (no delay, the same concurrency, no HEAD guard: the peers
    send none), each record written as it comes."""
    from pipeline.core.settings import Settings
    from pipeline.crawl.run import CrawlOptions, crawl

    settings = Settings(concurrency=concurrency, per_host=concurrency, rate=100_000.0,
                        head=False, allow_net=["127.0.0.1/32"], quiet=True)
    with out.open("w") as sink:
        def write(record) -> None:
            sink.write(json.dumps({"url": record.url, "final_url": record.final_url,
                                   "ok": record.ok}) + "\n")

        asyncio.run(crawl([start], CrawlOptions(max_pages=max_pages, max_depth=100), settings,
                          on_record=write))


def read_urls(out: Path) -> list[str]:
    """The URL of every page a crawler returned (``final_url`` where ours sets it)."""
    urls = []
    if out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                if row.get("ok", True):
                    urls.append(row.get("final_url") or row["url"])
    return urls


# --------------------------------------------------------------------------- the run

def fetch_stats(base: str, path: str = "/__stats") -> dict:
    import urllib.request

    with urllib.request.urlopen(base + path, timeout=10) as answer:  # loopback only
        return json.loads(answer.read() or b"{}") if path == "/__stats" else {}


def bench(tool: str, site: Site, base: str, args: argparse.Namespace, work: Path) -> dict:
    fetch_stats(base, "/__reset")
    out = work / f"{tool}.jsonl"
    out.unlink(missing_ok=True)
    start = f"{base}/s/0/"
    env = {**os.environ, "CRAWL4_AI_BASE_DIRECTORY": str(work)}
    max_pages = site.pages * 10  # no budget stops a crawler: duplicates count against it
    command = [sys.executable, __file__, "--run", tool, "--start", start, "--out", str(out),
               "--concurrency", str(args.concurrency), "--max-pages", str(max_pages)]
    measured = run_measured(command, env=env, timeout=args.timeout)
    urls = read_urls(out)
    stats = fetch_stats(base)
    counted = count(site, urls, {int(k): v for k, v in stats["fetched"].items()})
    pages = max(counted.found, 1)
    return {"tool": tool, "returncode": measured.returncode,
            "pages_per_s": round(counted.found / measured.wall_s, 1),
            "wall_s": round(measured.wall_s, 1),
            "cpu_s_per_page": round(measured.cpu_s / pages, 4),
            "peak_rss_mb": round(measured.peak_rss_bytes / 2**20),
            "most_in_flight": stats.get("most_in_flight"),
            **counted.__dict__,
            "stderr_tail": measured.stderr.strip().splitlines()[-3:] if measured.returncode
            else []}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--timeout", type=float, default=1_800)
    parser.add_argument("--port", type=int, default=8754)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--run", choices=TOOLS, help=argparse.SUPPRESS)
    parser.add_argument("--start", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--max-pages", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:  # one peer, in its own process
        runner = {"us": run_us, "scrapy": run_scrapy, "crawl4ai": run_crawl4ai}[args.run]
        runner(args.start, Path(args.out), args.concurrency, args.max_pages)
        return 0
    site = generate(args.pages)
    ready = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(site, args.latency, args.port, ready),
                                     daemon=True)
    server.start()
    ready.wait(30)
    base = f"http://127.0.0.1:{args.port}"
    results = []
    try:
        with tempfile.TemporaryDirectory() as work:
            for tool in args.tools.split(","):
                result = bench(tool, site, base, args, Path(work))
                results.append(result)
                print(json.dumps(result), flush=True)
    finally:
        server.terminate()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

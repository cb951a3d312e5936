"""web_crawl / web_map with the native crawler (the default) on a generated loopback site,
and through the MCP server's shared fetcher."""

import asyncio
from collections import Counter

from aiohttp import web

import pipeline
from pipeline.agent.runtime import SharedRuntime
from pipeline.core.settings import Settings
from tests.support.pages import serve

WORDS = "Herons wait in the shallows while the tide turns over the stones. " * 8


def site() -> tuple[web.Application, Counter, Counter]:
    """Home links to /a and /b (and /a again as /a/index.html, with utm_ and a fragment);
    /a links to /c; /b is a 404; another origin is linked from home."""
    gets: Counter = Counter()
    flight = Counter()  # "now": requests in flight, "most": the most at once
    links = {"/": ["/a/", "/a/index.html?utm_source=x", "/b/", "/a/#top",
                   "http://other.invalid/x"],
             "/a/": ["/c/", "/"], "/c/": ["/"]}

    async def page(request: web.Request) -> web.Response:
        path = request.path.removesuffix("index.html")
        if request.method == "GET":
            gets[path] += 1
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        await asyncio.sleep(0.02)  # room for requests to overlap if a budget let them
        flight["now"] -= 1
        if path not in links:
            return web.Response(status=404, text="missing")
        anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links[path])
        body = (f"<html><head><title>Page {path}</title></head><body><nav><ul>{anchors}"
                f"</ul></nav><main><article><h1>Page {path}</h1><p>{WORDS}</p>"
                "</article></main></body></html>")
        return web.Response(text=body, content_type="text/html")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/{tail:.*}", page)
    return app, gets, flight


def loopback(tmp_path, **extra) -> Settings:
    return Settings(allow_net=["127.0.0.1/32"], cache_dir=str(tmp_path / "cache"), head=False,
                    **extra)


async def test_native_crawl_reads_each_page_once_with_where_it_was_found(tmp_path):
    app, gets, _ = site()
    async with serve(app) as base:
        found = await pipeline.web_crawl(f"{base}/", max_pages=10, settings=loopback(tmp_path))
    assert found.ok and found.provider == "native", found.error
    by_url = {page.url: page for page in found.pages}
    assert set(by_url) == {f"{base}/", f"{base}/a/", f"{base}/b/", f"{base}/c/"}
    assert by_url[f"{base}/c/"].depth == 2 and by_url[f"{base}/c/"].parent == f"{base}/a/"
    assert by_url[f"{base}/b/"].error is not None
    assert "Herons wait" in by_url[f"{base}/a/"].content
    assert all(count == 1 for count in gets.values())  # aliases fold into one page
    assert found.skipped.get("out_of_scope", 0) >= 1


async def test_native_crawl_holds_the_page_budget_and_counts_what_it_left(tmp_path):
    app, _, _ = site()
    async with serve(app) as base:
        found = await pipeline.web_crawl(f"{base}/", max_pages=2, settings=loopback(tmp_path))
        mapped = await pipeline.web_map(f"{base}/", limit=2, settings=loopback(tmp_path))
    assert found.ok and len(found.pages) == 2 and found.left
    assert mapped.ok and len(mapped.urls) == 2 and mapped.urls[0].url == f"{base}/"


async def test_native_crawl_with_the_shared_fetcher_spends_its_per_host_budget(tmp_path):
    app, _, flight = site()
    settings = loopback(tmp_path, per_host=1)
    async with serve(app) as base, SharedRuntime(settings) as shared:
        provider = shared.registry.build("native", settings, capability="crawl")
        assert provider._fetcher is shared._fetcher
        calls = [pipeline.web_crawl(f"{base}/", settings=settings, registry=shared.registry),
                 *(pipeline.web_extract(f"{base}/{name}/", settings=settings,
                                        registry=shared.registry) for name in "ac")]
        found, *read = await asyncio.gather(*calls)
    assert found.ok and all(r.ok for r in read)
    assert flight["most"] == 1  # one connection to the host across every call



def page_of(text: str, links: tuple[str, ...] = ()) -> web.Response:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return web.Response(text=f"<html><head><title>{text}</title></head><body><nav>{anchors}"
                        f"</nav><main><article><h1>{text}</h1><p>{WORDS}</p></article></main>"
                        "</body></html>", content_type="text/html")


async def test_native_crawl_with_the_shared_fetcher_follows_no_redirect_out_of_scope(tmp_path):
    other_gets: Counter = Counter()

    async def elsewhere(request: web.Request) -> web.Response:
        other_gets[request.path] += 1
        return page_of("Elsewhere")

    other = web.Application()
    other.router.add_get("/{tail:.*}", elsewhere)
    settings = loopback(tmp_path)
    async with serve(other) as away:
        async def home(request: web.Request) -> web.Response:
            return page_of("Home", ("/away/", "/stay/"))

        async def hop(request: web.Request) -> web.Response:
            raise web.HTTPFound(f"{away}/landed")  # another port: out of the origin

        async def stay(request: web.Request) -> web.Response:
            return page_of("Stay")

        app = web.Application()
        app.router.add_get("/", home)
        app.router.add_get("/away/", hop)
        app.router.add_get("/stay/", stay)
        async with serve(app) as base, SharedRuntime(settings) as shared:
            found = await pipeline.web_crawl(f"{base}/", settings=settings,
                                             registry=shared.registry)
    assert found.ok, found.error
    assert other_gets == Counter()  # the hop out of the origin was never requested
    assert {page.url for page in found.pages} >= {f"{base}/", f"{base}/stay/"}
    assert f"{away}/landed" not in {page.url for page in found.pages}


def pools_started(monkeypatch) -> list[int]:
    """Each handler pool a run starts (its size), the pool still started as it would be."""
    from pipeline.batch.pool import ProcessRunner

    started: list[int] = []
    new_pool = ProcessRunner._new_pool

    def spy(self: ProcessRunner):
        started.append(self.size)
        return new_pool(self)

    monkeypatch.setattr(ProcessRunner, "_new_pool", spy)
    return started


async def test_native_crawl_and_map_extract_in_process_with_no_handler_pool(tmp_path,
                                                                           monkeypatch):
    started = pools_started(monkeypatch)
    app, _, _ = site()
    async with serve(app) as base:
        found = await pipeline.web_crawl(f"{base}/", max_pages=10, settings=loopback(tmp_path))
        mapped = await pipeline.web_map(f"{base}/", limit=10, settings=loopback(tmp_path))
    assert found.ok and mapped.ok
    assert "Herons wait" in {p.url: p for p in found.pages}[f"{base}/a/"].content
    assert {u.url for u in mapped.urls} >= {f"{base}/", f"{base}/a/", f"{base}/c/"}
    assert started == []  # every HTML page went through a handler, none in a worker process


async def test_the_crawl_command_s_run_keeps_the_handler_pool(tmp_path, monkeypatch):
    from pipeline.batch.run import RunOutput
    from pipeline.crawl.run import CrawlOptions, run_crawl

    started = pools_started(monkeypatch)
    app, _, _ = site()
    records = []
    async with serve(app) as base:
        await run_crawl([f"{base}/"], CrawlOptions(max_pages=3), loopback(tmp_path, workers=1),
                        lambda: RunOutput(records.append, lambda: None))
    assert len(records) == 3 and started == [1]

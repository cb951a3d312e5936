"""Firecrawl's and Tavily's crawl and map against loopback fakes of their APIs, and through
web_crawl / web_map: job polling, deadlines, errors, timeouts, a provider down."""

import pytest

from pipeline.agent.crawl import web_crawl, web_map
from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings
from pipeline.providers.base import CrawlOptions, MapOptions
from pipeline.providers.common import glob_regex, path_filter
from pipeline.providers.firecrawl import FirecrawlProvider
from pipeline.providers.tavily import TavilyProvider
from tests.support.scripted_server import reply_json, reply_slow

SITE = "https://docs.example/"


def page(url, markdown, status=200, title="T"):
    return {"markdown": markdown, "metadata": {"sourceURL": url, "url": url, "title": title,
                                               "statusCode": status}}


@pytest.fixture
def firecrawl(server, settings, sleeps):
    return FirecrawlProvider(settings, {"FIRECRAWL_API_URL": server.url,
                                        "FIRECRAWL_API_KEY": "fc-k"}, sleep=sleeps)


def test_globs_become_path_regexes():
    assert glob_regex("/docs/**") == "^/docs/.*$"
    assert glob_regex("*.pdf") == r"^(?:.*/)?[^/]*\.pdf$"
    assert glob_regex("/v[!0]/?") == "^/v[^0]/.$"
    keep = path_filter(["/docs/**"], ["**/old/**"])
    assert keep(f"{SITE}docs/a") and not keep(f"{SITE}blog/a")
    assert not keep(f"{SITE}docs/old/a")


async def test_firecrawl_crawl_starts_a_job_polls_it_and_reads_every_data_page(
        server, firecrawl, sleeps):
    server.route("POST", "/v2/crawl", reply_json({"success": True, "id": "job 1",
                                                  "url": f"{server.url}/v2/crawl/job%201"}))
    server.route("GET", "/v2/crawl/job 1",
                 reply_json({"status": "scraping", "total": 3, "completed": 1, "data": []}),
                 reply_json({"status": "completed", "total": 3, "completed": 3,
                             "next": f"{server.url}/v2/crawl/job%201?skip=2",
                             "data": [page(SITE, "# Home"), page(f"{SITE}a", "# A")]}),
                 reply_json({"status": "completed", "data": [
                     page(f"{SITE}gone", "", status=404)]}))
    async with firecrawl:
        found = await firecrawl.crawl(SITE, CrawlOptions(max_pages=5, max_depth=1,
                                                         include=["/docs/**"], deadline=60))
    sent = server.requests[0].json()
    assert server.requests[0].headers["Authorization"] == "Bearer fc-k"
    assert sent == {"url": SITE, "limit": 5, "maxDiscoveryDepth": 1,
                    "includePaths": ["^/docs/.*$"],
                    "scrapeOptions": {"formats": ["markdown"], "onlyMainContent": True}}
    assert [r.method for r in server.requests] == ["POST", "GET", "GET", "GET"]
    assert server.requests[3].query == {"skip": "2"}
    assert sleeps.waits == [2.0]
    assert [p["url"] for p in found.pages] == [SITE, f"{SITE}a", f"{SITE}gone"]
    assert found.pages[0]["content"] == "# Home" and found.pages[0]["title"] == "T"
    assert found.pages[2]["error"] == "the page answered HTTP 404"


async def test_firecrawl_crawl_past_its_deadline_stops_the_job_and_answers_what_it_has(
        server, firecrawl, sleeps):
    server.route("POST", "/v2/crawl", reply_json({"success": True, "id": "j2"}))
    server.route("GET", "/v2/crawl/j2", reply_json({
        "status": "scraping", "completed": 1, "data": [page(SITE, "# Home")]}))
    server.route("DELETE", "/v2/crawl/j2", reply_json({"status": "cancelled"}))
    async with firecrawl:
        found = await firecrawl.crawl(SITE, CrawlOptions(deadline=6))
    assert [r.method for r in server.requests] == ["POST", "GET", "GET", "GET", "DELETE"]
    assert sleeps.waits == [2.0, 2.0]
    assert [p["url"] for p in found.pages] == [SITE]
    assert any("deadline of 6 s reached" in w for w in found.warnings)


async def test_firecrawl_never_sends_its_key_to_a_next_page_on_another_host(server, firecrawl):
    server.route("POST", "/v2/crawl", reply_json({"success": True, "id": "j3"}))
    server.route("GET", "/v2/crawl/j3", reply_json({
        "status": "completed", "next": "https://elsewhere.example/steal",
        "data": [page(SITE, "# Home")]}))
    async with firecrawl:
        found = await firecrawl.crawl(SITE, CrawlOptions())
    assert len(server.requests) == 2 and len(found.pages) == 1


async def test_firecrawl_failed_job_and_refused_start_are_provider_errors(server, firecrawl):
    server.route("POST", "/v2/crawl", reply_json({"success": True, "id": "j4"}),
                 reply_json({"success": False, "error": "Insufficient credits"}))
    server.route("GET", "/v2/crawl/j4", reply_json({"status": "failed", "error": "boom"}))
    async with firecrawl:
        with pytest.raises(PipelineError, match="boom"):
            await firecrawl.crawl(SITE, CrawlOptions())
        with pytest.raises(PipelineError, match="Insufficient credits") as refused:
            await firecrawl.crawl(SITE, CrawlOptions())
    assert refused.value.fatal


async def test_firecrawl_map_v2_objects_filtered_by_the_globs(server, firecrawl):
    server.route("POST", "/v2/map", reply_json({"success": True, "links": [
        {"url": f"{SITE}docs/a", "title": "A", "description": "d"},
        {"url": f"{SITE}blog/b"}, 42, {"title": "no url"}]}))
    async with firecrawl:
        found = await firecrawl.map(SITE, MapOptions(limit=10, include=["/docs/**"]))
    assert server.requests[0].json() == {"url": SITE, "limit": 10, "includeSubdomains": False}
    assert found.pages == [{"url": f"{SITE}docs/a", "title": "A"}]


async def test_firecrawl_map_v1_bare_urls(server, settings, sleeps):
    v1 = FirecrawlProvider(settings, {"FIRECRAWL_API_URL": server.url,
                                      "FIRECRAWL_API_VERSION": "v1"}, sleep=sleeps)
    server.route("POST", "/v1/map", reply_json({"success": True, "links": [SITE, f"{SITE}x"]}))
    async with v1:
        found = await v1.map(SITE, MapOptions())
    assert [p["url"] for p in found.pages] == [SITE, f"{SITE}x"]


# --------------------------------------------------------------------------- Tavily

@pytest.fixture
def tavily(server, settings, sleeps):
    return TavilyProvider(settings, {"TAVILY_BASE_URL": server.url, "TAVILY_API_KEY": "tvly-k"},
                          sleep=sleeps)


async def test_tavily_crawl_request_and_answer(server, tavily):
    server.route("POST", "/crawl", reply_json({"base_url": SITE, "response_time": 2.1,
                                               "results": [{"url": SITE, "raw_content": "# H"},
                                                           {"url": f"{SITE}a",
                                                            "raw_content": None}]}))
    async with tavily:
        found = await tavily.crawl(SITE, CrawlOptions(max_pages=7, max_depth=9,
                                                      exclude=["/old/**"], deadline=600))
    assert server.requests[0].json() == {
        "url": SITE, "max_depth": 5, "limit": 7, "timeout": 150,
        "exclude_paths": ["^/old/.*$"], "format": "markdown", "extract_depth": "basic"}
    assert [p["url"] for p in found.pages] == [SITE, f"{SITE}a"]
    assert found.pages[0]["content"] == "# H"
    assert any("at most 5" in w for w in found.warnings)


async def test_tavily_depth_zero_is_the_start_page_alone_and_map_reads_bare_urls(server, tavily):
    server.route("POST", "/crawl", reply_json({"results": [{"url": SITE, "raw_content": "x"}]}))
    server.route("POST", "/map", reply_json({"base_url": SITE, "results": [SITE, f"{SITE}b"]}))
    async with tavily:
        await tavily.crawl(SITE, CrawlOptions(max_pages=9, max_depth=0))
        mapped = await tavily.map(SITE, MapOptions(limit=40, include=["/b"]))
    first, second = (r.json() for r in server.requests)
    assert first["max_depth"] == 1 and first["limit"] == 1
    assert second == {"url": SITE, "max_depth": 2, "limit": 40, "timeout": 60,
                      "select_paths": ["^/b$"]}
    assert [p["url"] for p in mapped.pages] == [SITE, f"{SITE}b"]


# --------------------------------------------------------------------------- through the kernel

def vendor_settings(server, **extra):
    env = {"FIRECRAWL_API_URL": server.url, "FIRECRAWL_API_KEY": "fc-k",
           "TAVILY_BASE_URL": server.url, "TAVILY_API_KEY": "tvly-k"}
    return Settings(retries=0, timeout=5, connect_timeout=2, read_timeout=2, cache=False,
                    provider_env=env, **extra)


async def test_a_vendor_down_is_a_typed_error_value_never_an_exception(server):
    server.route("POST", "/v2/crawl", reply_json({"error": "upstream"}, status=503))
    server.route("POST", "/crawl", reply_json({"detail": {"error": "plan"}}, status=432))
    found = await web_crawl(SITE, backend="firecrawl", settings=vendor_settings(server))
    assert not found.ok and found.error.kind == "provider"
    assert "firecrawl" in found.error.message and "503" in found.error.message
    both = await web_crawl(SITE, settings=vendor_settings(
        server, crawl_backend=["firecrawl", "tavily"]))
    assert not both.ok and "every provider failed" in both.error.message
    assert "plan usage limit exceeded" in both.error.message


async def test_a_vendor_that_does_not_answer_in_time_is_a_timeout_value(server):
    server.route("POST", "/map", reply_slow(5))
    settings = vendor_settings(server).model_copy(update={"timeout": 0.3,
                                                          "read_timeout": 0.3})
    mapped = await web_map(SITE, backend="tavily", settings=settings)
    assert not mapped.ok and mapped.error.kind == "provider"
    assert "timed out" in mapped.error.message


async def test_the_next_vendor_takes_over_and_its_pages_are_rechecked(server):
    server.route("POST", "/v2/crawl", reply_json({"error": "down"}, status=500))
    server.route("POST", "/crawl", reply_json({"results": [
        {"url": SITE, "raw_content": "# Home\n\nText."},
        {"url": "http://10.0.0.1/internal", "raw_content": "secret"}]}))
    found = await web_crawl(SITE, settings=vendor_settings(
        server, crawl_backend=["firecrawl", "tavily"]))
    assert found.ok and found.provider == "tavily"
    assert [p.url for p in found.pages] == [SITE]
    assert any("firecrawl failed" in w for w in found.warnings)
    assert any("refused" in w for w in found.warnings)

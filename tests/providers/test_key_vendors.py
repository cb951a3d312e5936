"""Tavily, Exa, Firecrawl and Jina against responses shaped like their documented ones."""

import pytest
from aiohttp import web

from pipeline.core.errors import PipelineError
from pipeline.core.models import ExtractOptions
from pipeline.core.settings import Settings
from pipeline.providers.base import SearchOptions
from pipeline.providers.exa import ExaProvider
from pipeline.providers.firecrawl import FirecrawlProvider
from pipeline.providers.jina import JinaProvider
from pipeline.providers.tavily import TavilyProvider
from tests.support.scripted_server import reply_json, reply_text

OPTS = ExtractOptions(format="markdown", max_chars=1000)
A, B, C = "https://a.example/", "https://b.example/doc", "https://c.example/"


# --------------------------------------------------------------------------- Tavily

@pytest.fixture
def tavily(server, settings, sleeps):
    return TavilyProvider(settings, {"TAVILY_BASE_URL": server.url, "TAVILY_API_KEY": "tvly-k"},
                          sleep=sleeps)


async def test_tavily_search(server, tavily):
    server.route("POST", "/search", reply_json({
        "query": "q", "answer": None, "images": [], "response_time": 1.2,
        "results": [{"title": "T1", "url": A, "content": "snippet one", "score": 0.81,
                     "raw_content": None},
                    {"title": "T2", "url": B, "content": "two", "score": 0.5,
                     "published_date": "Mon, 01 Jan 2024"}]}))
    async with tavily:
        page = await tavily.search("q", SearchOptions(
            max_results=30, time_range="day", include_domains=["a.example"],
            exclude_domains=["x.example"], language="fr"))
    sent = server.requests[0]
    assert sent.headers["Authorization"] == "Bearer tvly-k"
    assert sent.json() == {"query": "q", "max_results": 20, "time_range": "day",
                           "include_domains": ["a.example"], "exclude_domains": ["x.example"]}
    assert page.rows[0] == {"title": "T1", "url": A, "snippet": "snippet one", "score": 0.81,
                            "published": None}
    assert page.rows[1]["published"] == "Mon, 01 Jan 2024"
    assert any("at most 20" in w for w in page.warnings)
    assert any("language" in w for w in page.warnings)


async def test_tavily_extract_results_and_failed_results_in_input_order(server, tavily):
    server.route("POST", "/extract", reply_json({
        "results": [{"url": B, "raw_content": "# Doc\n\nBody text.", "images": []}],
        "failed_results": [{"url": A, "error": "Failed to fetch url"}],
        "response_time": 0.4}))
    async with tavily:
        records = await tavily.extract([A, B, C], OPTS)
    assert server.requests[0].json() == {"urls": [A, B, C], "format": "markdown",
                                         "extract_depth": "basic"}
    assert [r.url for r in records] == [A, B, C]
    assert records[0].error.kind == "provider" and "Failed to fetch url" in records[0].error.message
    assert records[1].ok and records[1].content == "# Doc\n\nBody text."
    assert records[1].metadata["provider"] == "tavily"
    assert records[2].error.message == "tavily: no result for this URL in the answer"


async def test_tavily_extract_batches_of_20(server, tavily):
    urls = [f"https://e{i}.example/" for i in range(25)]
    server.route("POST", "/extract", reply_json({"results": [], "failed_results": []}))
    async with tavily:
        records = await tavily.extract(urls, OPTS)
    assert [len(r.json()["urls"]) for r in server.requests] == [20, 5]
    assert len(records) == 25


async def test_tavily_extract_refuses_binary_and_truncates(server, tavily):
    server.route("POST", "/extract", reply_json({"results": [
        {"url": A, "raw_content": "%PDF-1.7\x00\x01\x02\x03binary"},
        {"url": B, "raw_content": "word " * 1000}]}))
    async with tavily:
        records = await tavily.extract([A, B], OPTS)
    assert records[0].error.kind == "unsupported_type"
    assert records[1].truncated and len(records[1].content) <= 1000


async def test_tavily_401_raises_for_failover(server, tavily):
    server.route("POST", "/extract", reply_json({"detail": {"error": "Unauthorized: missing or "
                                                            "invalid API key."}}, status=401))
    async with tavily:
        with pytest.raises(PipelineError, match="tavily: invalid or expired key"):
            await tavily.extract([A], OPTS)


# --------------------------------------------------------------------------- Exa

@pytest.fixture
def exa(server, settings, sleeps):
    return ExaProvider(settings, {"EXA_BASE_URL": server.url, "EXA_API_KEY": "exa-k"},
                       sleep=sleeps)


async def test_exa_search(server, exa):
    server.route("POST", "/search", reply_json({
        "requestId": "r1", "resolvedSearchType": "neural",
        "results": [{"id": A, "title": "Exa A", "url": A,
                     "publishedDate": "2024-03-01T00:00:00.000Z", "author": "X",
                     "score": 0.33, "text": "Short text."}],
        "costDollars": {"total": 0.005}}))
    async with exa:
        page = await exa.search("q", SearchOptions(max_results=5, time_range="week",
                                                   exclude_domains=["b.example"], region="us"))
    sent = server.requests[0]
    body = sent.json()
    assert sent.headers["x-api-key"] == "exa-k"
    assert body["numResults"] == 5 and body["excludeDomains"] == ["b.example"]
    assert body["startPublishedDate"].endswith("Z") and body["userLocation"] == "US"
    assert page.rows == [{"title": "Exa A", "url": A, "snippet": "Short text.", "score": 0.33,
                          "published": "2024-03-01T00:00:00.000Z"}]
    assert page.warnings == []


async def test_exa_contents_with_statuses(server, exa):
    server.route("POST", "/contents", reply_json({
        "requestId": "r2",
        "results": [{"id": B, "url": "https://b.example/doc-canonical", "title": "Doc",
                     "text": "Plain body.", "author": "Ann", "publishedDate": None}],
        "statuses": [{"id": B, "status": "success"},
                     {"id": A, "status": "error",
                      "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404}}]}))
    async with exa:
        records = await exa.extract([A, B], OPTS)
    assert server.requests[0].json() == {"urls": [A, B], "text": True}
    assert records[0].error.message == "exa: CRAWL_NOT_FOUND (HTTP 404)"
    assert records[1].ok and records[1].final_url == "https://b.example/doc-canonical"
    assert records[1].format == "text" and records[1].metadata["byline"] == "Ann"


@pytest.mark.parametrize("final, kind", [
    ("file:///etc/passwd", "blocked"),
    ("http://169.254.169.254/latest/meta-data/", "blocked"),
    ("http://10.1.2.3/admin", "blocked"),
    ("http://[::1]/", "blocked"),
    ("not a url", "invalid_result"),
])
async def test_exa_final_url_rechecked_by_the_policy(server, exa, final, kind):
    server.route("POST", "/contents", reply_json({"results": [
        {"id": A, "url": final, "text": "secret"}], "statuses": []}))
    async with exa:
        records = await exa.extract([A], OPTS)
    assert records[0].error.kind == kind and "final URL refused" in records[0].error.message
    assert records[0].content is None


async def test_exa_private_final_url_allowed_when_the_policy_allows(server, sleeps):
    settings = Settings(allow_private=True)
    exa = ExaProvider(settings, {"EXA_BASE_URL": server.url, "EXA_API_KEY": "k"}, sleep=sleeps)
    server.route("POST", "/contents", reply_json({"results": [
        {"id": A, "url": "http://10.1.2.3/wiki", "text": "intranet page"}], "statuses": []}))
    async with exa:
        records = await exa.extract([A], OPTS)
    assert records[0].ok and records[0].final_url == "http://10.1.2.3/wiki"


async def test_exa_bad_json(server, exa):
    server.route("POST", "/contents", reply_text("<html>gateway</html>"))
    async with exa:
        with pytest.raises(PipelineError, match="exa: unparseable response"):
            await exa.extract([A], OPTS)


# --------------------------------------------------------------------------- Firecrawl

@pytest.fixture
def firecrawl(server, settings, sleeps):
    return FirecrawlProvider(settings, {"FIRECRAWL_API_URL": server.url,
                                        "FIRECRAWL_API_KEY": "fc-k"}, sleep=sleeps)


async def test_firecrawl_v2_search(server, firecrawl):
    server.route("POST", "/v2/search", reply_json({"success": True, "data": {
        "web": [{"url": A, "title": "Fire A", "description": "desc", "position": 1}],
        "images": [{"title": "img", "imageUrl": "https://i.example/x.png", "url": C,
                    "position": 1}]}}))
    async with firecrawl:
        page = await firecrawl.search("q", SearchOptions(max_results=3, time_range="month",
                                                         include_domains=["a.example"]))
    body = server.requests[0].json()
    assert server.requests[0].headers["Authorization"] == "Bearer fc-k"
    assert body == {"query": "q site:a.example", "limit": 3, "tbs": "qdr:m"}
    assert page.rows == [{"title": "Fire A", "url": A, "snippet": "desc"}]


async def test_firecrawl_v1_search_shape(server, settings, sleeps):
    provider = FirecrawlProvider(settings, {"FIRECRAWL_API_URL": server.url + "/fc",
                                            "FIRECRAWL_API_VERSION": "v1"}, sleep=sleeps)
    server.route("POST", "/fc/v1/search", reply_json({"success": True, "data": [
        {"url": B, "title": "Old", "description": "v1 row"}]}))
    async with provider:
        page = await provider.search("q", SearchOptions())
    assert provider.is_configured()  # a self-hosted URL needs no key
    assert "Authorization" not in server.requests[0].headers
    assert page.rows[0]["url"] == B


async def test_firecrawl_scrape_per_url(server, firecrawl):
    answers = {
        A: {"success": True, "data": {"markdown": "# A\n\nText.", "metadata": {
            "title": "Page A", "sourceURL": A, "url": A + "final", "statusCode": 200,
            "contentType": "text/html", "language": "en"}}},
        B: {"success": True, "data": {"markdown": "", "metadata": {
            "sourceURL": B, "statusCode": 404}}},
    }

    async def route():
        # runs before any await, so the last request seen is the one being answered
        body = server.requests[-1].json()
        if body["url"] == C:
            return web.json_response({"success": False, "error": "Failed to scrape"},
                                     status=500)
        return web.json_response(answers[body["url"]])

    server.route("POST", "/v2/scrape", route)
    async with firecrawl:
        records = await firecrawl.extract([A, B, C], OPTS)
    assert server.requests[0].json()["formats"] == ["markdown"]
    assert records[0].ok and records[0].final_url == A + "final"
    assert records[0].title == "Page A" and records[0].metadata["lang"] == "en"
    assert records[0].content_type == "text/html" and records[0].status == 200
    assert records[1].error.kind == "provider" and "HTTP 404" in records[1].error.message
    assert records[2].error.kind == "provider" and records[2].error.retryable
    assert "Failed to scrape" in records[2].error.message


async def test_firecrawl_402_fails_the_provider(server, firecrawl):
    server.route("POST", "/v2/scrape", reply_json(
        {"success": False, "error": "Insufficient credits"}, status=402))
    async with firecrawl:
        with pytest.raises(PipelineError, match="payment required"):
            await firecrawl.extract([A, B], OPTS)


def test_firecrawl_unconfigured_without_key_or_url(settings):
    assert not FirecrawlProvider(settings, {}).is_configured()


# --------------------------------------------------------------------------- Jina

@pytest.fixture
def jina(server, settings, sleeps):
    return JinaProvider(settings, {"JINA_READER_URL": server.url + "/r",
                                   "JINA_SEARCH_URL": server.url + "/s",
                                   "JINA_API_KEY": "jina_k"}, sleep=sleeps)


async def test_jina_search(server, jina):
    server.route("POST", "/s/", reply_json({"code": 200, "status": 20000, "data": [
        {"title": "J", "url": A, "description": "jd", "content": ""}]}))
    async with jina:
        page = await jina.search("q", SearchOptions(include_domains=["a.example"],
                                                    time_range="day"))
    sent = server.requests[0]
    assert sent.json() == {"q": "q"} and sent.headers["X-Site"] == "a.example"
    assert sent.headers["Authorization"] == "Bearer jina_k"
    assert page.rows == [{"title": "J", "url": A, "snippet": "jd", "published": None}]
    assert any("time_range" in w for w in page.warnings)


async def test_jina_search_falls_back_to_get_where_post_is_not_routed(server, jina):
    server.route("GET", "/s/", reply_json({"code": 200, "status": 20000, "data": [
        {"title": "J", "url": A, "description": "jd"}]}))
    async with jina:
        page = await jina.search("q", SearchOptions(max_results=3))
    assert [(r.method, r.query) for r in server.requests] == [
        ("POST", {}), ("GET", {"q": "q", "num": "3"})]
    assert [row["url"] for row in page.rows] == [A]


async def test_jina_search_needs_key(settings):
    provider = JinaProvider(settings, {})
    assert provider.configured_for("extract") and not provider.configured_for("search")
    with pytest.raises(PipelineError, match="needs JINA_API_KEY"):
        await provider.search("q", SearchOptions())


async def test_jina_reader(server, settings, sleeps):
    provider = JinaProvider(settings, {"JINA_READER_URL": server.url + "/r"}, sleep=sleeps)
    server.route("POST", "/r/", reply_json({"code": 200, "status": 20000, "data": {
        "title": "Read", "description": "d", "url": A, "content": "Readable text.",
        "publishedTime": "2024-02-02", "usage": {"tokens": 5}}}))
    async with provider:
        records = await provider.extract([A], ExtractOptions(format="text", max_chars=500))
    sent = server.requests[0]
    assert sent.json() == {"url": A} and sent.headers["X-Return-Format"] == "text"
    assert "Authorization" not in sent.headers
    assert records[0].ok and records[0].content == "Readable text."
    assert records[0].metadata["published"] == "2024-02-02"


async def test_jina_reader_rate_limited_is_a_retryable_record(server, settings, sleeps):
    provider = JinaProvider(settings, {"JINA_READER_URL": server.url}, sleep=sleeps)
    server.route("POST", "/", reply_json({"code": 429, "name": "RateLimitTriggeredError"},
                                         status=429, headers={"Retry-After": "2"}))
    async with provider:
        records = await provider.extract([A], OPTS)
    assert records[0].error.kind == "provider" and records[0].error.retryable
    assert "rate limited" in records[0].error.message
    assert sleeps.waits == [2.0]


# --------------------------------------------------------------------------- vendor words

NOISY = "\x1b[31mboom\x00\n" + "x" * 5000


async def test_vendor_reasons_are_sanitised_and_short(server, tavily, firecrawl):
    server.route("POST", "/extract", reply_json({"results": [], "failed_results": [
        {"url": A, "error": NOISY}, {"url": B, "error": {"nested": "object"}}]}))
    server.route("POST", "/v2/scrape", reply_json({"success": False, "error": NOISY}))
    async with tavily, firecrawl:
        tavily_records = await tavily.extract([A, B], OPTS)
        [scraped] = await firecrawl.extract([C], OPTS)
    for record in (tavily_records[0], scraped):
        message = record.error.message
        assert "boom" in message and len(message) < 200
        assert not any(ord(ch) < 32 for ch in message)
    assert tavily_records[1].error.message == "tavily: extraction failed"

"""Every key vendor at its real, default endpoint (a fake transport: nothing leaves the
process) answering with the shapes its documentation shows; each test asserts the documented
request (method, URL, auth header, body fields) and how the answer is read."""

import json
import re

import aiohttp
import pytest

from pipeline.core.errors import PipelineError
from pipeline.core.models import ExtractOptions
from pipeline.fetch.transport import FakeResponse, FakeTransport, Request
from pipeline.providers.base import SearchOptions
from pipeline.providers.brave import BraveProvider
from pipeline.providers.common import url_matcher
from pipeline.providers.exa import ExaProvider
from pipeline.providers.firecrawl import FirecrawlProvider
from pipeline.providers.http import error_detail, rate_limit_reset
from pipeline.providers.jina import JinaProvider
from pipeline.providers.tavily import TavilyProvider
from tests.providers import vendor_answers as va

OPTS = ExtractOptions(format="markdown", max_chars=2000)
BRAVE_URL = re.compile(r"^https://api\.search\.brave\.com/res/v1/web/search\?")


class Vendors:
    """Canned vendor answers behind a :class:`FakeTransport`: each one registered answers
    one matching request, in the order registered; a request nothing answers fails as a
    refused connection would."""

    def __init__(self):
        self.answers = []
        self.transport = FakeTransport(self._answer)

    def get(self, url, **answer):
        self.answers.append(("GET", url, answer))

    def post(self, url, **answer):
        self.answers.append(("POST", url, answer))

    def _answer(self, request: Request) -> FakeResponse:
        bare = str(request.url.with_query(None))
        for place, (method, url, answer) in enumerate(self.answers):
            matches = (url.match(str(request.url)) if isinstance(url, re.Pattern)
                       else url in (bare, str(request.url)))
            if method == request.method and matches:
                del self.answers[place]
                headers = {"Content-Type": "application/json", **answer.get("headers", {})}
                return FakeResponse(answer.get("status", 200), headers,
                                    json.dumps(answer["payload"]).encode())
        raise aiohttp.ClientConnectionError(f"no answer for {request.method} {request.url}")


@pytest.fixture
def mocked():
    return Vendors()


def calls(vendors, method):
    """``(url, sent)`` of every request sent with ``method``, in order: ``sent`` holds its
    ``headers``, its query as ``params`` and its JSON body as ``json``."""
    return [(str(request.url), {"headers": request.headers, "params": dict(request.url.query),
                                "json": json.loads(request.body) if request.body else None})
            for request in vendors.transport.requests if request.method == method]


def provider(vendors, cls, settings, sleeps, **env):
    return cls(settings, env, sleep=sleeps, transport=vendors.transport)


# --------------------------------------------------------------------------- Brave

async def test_brave_documented_request(mocked, settings, sleeps):
    mocked.get(BRAVE_URL, payload=va.BRAVE_ANSWER)
    async with provider(mocked, BraveProvider, settings, sleeps, BRAVE_API_KEY="BSA-k") as brave:
        page = await brave.search("rust async", SearchOptions(
            max_results=5, time_range="week", region="gb", language="en-GB"))
    [(url, sent)] = calls(mocked, "GET")
    assert url.startswith("https://api.search.brave.com/res/v1/web/search?")
    assert sent["headers"]["X-Subscription-Token"] == "BSA-k"
    assert sent["headers"]["Accept"] == "application/json"
    assert sent["params"] == {"q": "rust async", "count": "5", "freshness": "pw",
                              "country": "GB", "search_lang": "en-gb"}
    assert [row["url"] for row in page.rows] == ["https://rust-lang.org/async",
                                                 "https://tokio.rs/"]


async def test_brave_no_web_key_is_no_results(mocked, settings, sleeps):
    mocked.get(BRAVE_URL, payload=va.BRAVE_NO_RESULTS)
    async with provider(mocked, BraveProvider, settings, sleeps, BRAVE_API_KEY="k") as brave:
        page = await brave.search("zzqx", SearchOptions())
    assert page.rows == [] and page.warnings == []


async def test_brave_per_second_limit_waits_for_its_reset(mocked, settings, sleeps):
    mocked.get(BRAVE_URL, status=429, payload=va.BRAVE_RATE_LIMITED, headers={
        "X-RateLimit-Limit": "1, 15000", "X-RateLimit-Remaining": "0, 14000",
        "X-RateLimit-Reset": "1, 1419704"})
    mocked.get(BRAVE_URL, payload=va.BRAVE_ANSWER)
    async with provider(mocked, BraveProvider, settings, sleeps, BRAVE_API_KEY="k") as brave:
        page = await brave.search("q", SearchOptions())
    assert sleeps.waits == [1.0] and len(page.rows) == 2


async def test_brave_monthly_quota_fails_without_retrying(mocked, settings, sleeps):
    mocked.get(BRAVE_URL, status=429, payload=va.BRAVE_RATE_LIMITED, headers={
        "X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 1419704"})
    async with provider(mocked, BraveProvider, settings, sleeps, BRAVE_API_KEY="k") as brave:
        with pytest.raises(PipelineError, match="quota exhausted") as info:
            await brave.search("q", SearchOptions())
    assert info.value.fatal and not info.value.retryable
    assert "Request rate limit exceeded for plan" in info.value.message
    assert len(calls(mocked, "GET")) == 1 and sleeps.waits == []


# --------------------------------------------------------------------------- Tavily

async def test_tavily_documented_search(mocked, settings, sleeps):
    mocked.post("https://api.tavily.com/search", payload=va.TAVILY_SEARCH)
    async with provider(mocked, TavilyProvider, settings, sleeps,
                        TAVILY_API_KEY="tvly-k") as tavily:
        page = await tavily.search("who is Leo Messi?", SearchOptions(
            max_results=2, time_range="month", include_domains=["wikipedia.org"]))
    [(url, sent)] = calls(mocked, "POST")
    assert url == "https://api.tavily.com/search"
    assert sent["headers"]["Authorization"] == "Bearer tvly-k"
    assert sent["json"] == {"query": "who is Leo Messi?", "max_results": 2,
                            "time_range": "month", "include_domains": ["wikipedia.org"]}
    assert page.rows[0] == {"title": "Lionel Messi - Wikipedia",
                            "url": "https://en.wikipedia.org/wiki/Lionel_Messi",
                            "snippet": "Lionel Andrés Messi is an Argentine footballer.",
                            "score": 0.81, "published": None}
    assert page.rows[1]["published"] == "Mon, 01 Jan 2024 10:00:00 GMT"


async def test_tavily_documented_extract(mocked, settings, sleeps):
    mocked.post("https://api.tavily.com/extract", payload=va.TAVILY_EXTRACT)
    # asked with a trailing slash: Tavily echoes the URL it read, matched all the same
    ai = "https://en.wikipedia.org/wiki/Artificial_intelligence/"
    urls = [ai, "https://unreachable.example/", "https://never.example/"]
    async with provider(mocked, TavilyProvider, settings, sleeps,
                        TAVILY_API_KEY="tvly-k") as tavily:
        records = await tavily.extract(urls, OPTS)
    [(url, sent)] = calls(mocked, "POST")
    assert url == "https://api.tavily.com/extract"
    assert sent["json"] == {"urls": urls, "format": "markdown", "extract_depth": "basic"}
    assert [r.url for r in records] == urls
    assert records[0].ok and records[0].content.startswith("# Artificial intelligence")
    assert records[1].error.message == "tavily: Failed to fetch url"
    assert records[2].error.message == "tavily: no result for this URL in the answer"


async def test_tavily_failed_results_as_bare_urls(mocked, settings, sleeps):
    mocked.post("https://api.tavily.com/extract",
                payload={"results": [], "failed_results": ["https://a.example/"]})
    async with provider(mocked, TavilyProvider, settings, sleeps, TAVILY_API_KEY="k") as tavily:
        [record] = await tavily.extract(["https://a.example/"], OPTS)
    assert record.error.kind == "provider"
    assert record.error.message == "tavily: extraction failed"


@pytest.mark.parametrize("status, body, message", [
    (401, va.TAVILY_UNAUTHORIZED, r"invalid or expired key \(HTTP 401\) \(Unauthorized: missing"),
    (432, va.TAVILY_PLAN_LIMIT, r"plan usage limit exceeded \(HTTP 432\) \(This request"),
    (433, {"detail": {"error": "pay-as-you-go limit"}}, r"pay-as-you-go limit exceeded"),
])
async def test_tavily_account_errors_fail_the_provider(mocked, settings, sleeps, status, body,
                                                       message):
    mocked.post("https://api.tavily.com/search", status=status, payload=body)
    async with provider(mocked, TavilyProvider, settings, sleeps, TAVILY_API_KEY="k") as tavily:
        with pytest.raises(PipelineError, match=message) as info:
            await tavily.search("q", SearchOptions())
    assert info.value.kind == "provider" and info.value.fatal and not info.value.retryable
    assert len(calls(mocked, "POST")) == 1


@pytest.mark.parametrize(("cls", "key", "url", "payload", "message"), [
    (TavilyProvider, "TAVILY_API_KEY", "https://api.tavily.com/search",
     va.TAVILY_UNAUTHORIZED, "tavily: error answer: Unauthorized"),
    (FirecrawlProvider, "FIRECRAWL_API_KEY", "https://api.firecrawl.dev/v2/search",
     va.FIRECRAWL_FAILED, "firecrawl: An unexpected error"),  # success: false
])
async def test_a_200_with_an_error_body_is_a_provider_error(mocked, settings, sleeps, cls, key,
                                                            url, payload, message):
    mocked.post(url, payload=payload)
    async with provider(mocked, cls, settings, sleeps, **{key: "k"}) as vendor:
        with pytest.raises(PipelineError, match=message) as info:
            await vendor.search("q", SearchOptions())
    assert info.value.kind == "provider"


# --------------------------------------------------------------------------- Exa

async def test_exa_documented_search(mocked, settings, sleeps):
    mocked.post("https://api.exa.ai/search", payload=va.EXA_SEARCH)
    async with provider(mocked, ExaProvider, settings, sleeps, EXA_API_KEY="exa-k") as exa:
        page = await exa.search("LLM overview", SearchOptions(
            max_results=7, include_domains=["arxiv.org"], time_range="year", region="fr",
            language="fr"))
    [(url, sent)] = calls(mocked, "POST")
    body = sent["json"]
    assert url == "https://api.exa.ai/search" and sent["headers"]["x-api-key"] == "exa-k"
    assert body["query"] == "LLM overview" and body["numResults"] == 7
    assert body["includeDomains"] == ["arxiv.org"] and body["userLocation"] == "FR"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z", body["startPublishedDate"])
    assert body["contents"] == {"text": {"maxCharacters": 300}}
    assert page.rows == [{"title": "A Comprehensive Overview of Large Language Models",
                          "url": "https://arxiv.org/pdf/2307.06435.pdf",
                          "snippet": "Large Language Models (LLMs) have recently...",
                          "score": 0.4421, "published": "2023-11-16T01:36:32.547Z"}]
    assert page.warnings == ["language is not supported; ignored"]


async def test_exa_documented_contents(mocked, settings, sleeps):
    mocked.post("https://api.exa.ai/contents", payload=va.EXA_CONTENTS)
    urls = ["https://arxiv.org/abs/2307.06435", "https://gone.example/"]
    async with provider(mocked, ExaProvider, settings, sleeps, EXA_API_KEY="exa-k") as exa:
        records = await exa.extract(urls, OPTS)
    [(url, sent)] = calls(mocked, "POST")
    assert url == "https://api.exa.ai/contents" and sent["headers"]["x-api-key"] == "exa-k"
    assert sent["json"] == {"urls": urls, "text": True}
    assert records[0].ok and records[0].title.startswith("A Comprehensive Overview")
    assert records[1].error.message == "exa: CRAWL_NOT_FOUND (HTTP 404)"


async def test_exa_402_is_fatal_with_exas_words(mocked, settings, sleeps):
    mocked.post("https://api.exa.ai/contents", status=402, payload=va.EXA_NO_CREDITS)
    async with provider(mocked, ExaProvider, settings, sleeps, EXA_API_KEY="k") as exa:
        with pytest.raises(PipelineError, match=r"payment required \(HTTP 402\) \(Account"):
            await exa.extract(["https://a.example/"], OPTS)


# --------------------------------------------------------------------------- Firecrawl

async def test_firecrawl_documented_v2_search(mocked, settings, sleeps):
    mocked.post("https://api.firecrawl.dev/v2/search", payload=va.FIRECRAWL_SEARCH_V2)
    async with provider(mocked, FirecrawlProvider, settings, sleeps,
                        FIRECRAWL_API_KEY="fc-k") as fc:
        page = await fc.search("firecrawl", SearchOptions(max_results=4, time_range="day",
                                                          region="de"))
    [(url, sent)] = calls(mocked, "POST")
    assert url == "https://api.firecrawl.dev/v2/search"
    assert sent["headers"]["Authorization"] == "Bearer fc-k"
    assert sent["json"] == {"query": "firecrawl", "limit": 4, "tbs": "qdr:d", "country": "DE"}
    assert page.rows == [{"title": "Firecrawl", "url": "https://www.firecrawl.dev/",
                          "snippet": "The web crawling, scraping, and search API for AI."}]


async def test_firecrawl_v1_search_shape(mocked, settings, sleeps):
    mocked.post("https://api.firecrawl.dev/v1/search", payload=va.FIRECRAWL_SEARCH_V1)
    async with provider(mocked, FirecrawlProvider, settings, sleeps, FIRECRAWL_API_KEY="fc-k",
                        FIRECRAWL_API_VERSION="v1") as fc:
        page = await fc.search("firecrawl", SearchOptions())
    assert [row["url"] for row in page.rows] == ["https://www.firecrawl.dev/"]


@pytest.mark.parametrize("answer", [{"success": True, "data": {}},
                                    {"success": True, "data": {"web": []}}])
async def test_firecrawl_empty_search(mocked, settings, sleeps, answer):
    mocked.post("https://api.firecrawl.dev/v2/search", payload=answer)
    async with provider(mocked, FirecrawlProvider, settings, sleeps, FIRECRAWL_API_KEY="k") as fc:
        assert (await fc.search("zzqx", SearchOptions())).rows == []


async def test_firecrawl_documented_scrape(mocked, settings, sleeps):
    mocked.post("https://api.firecrawl.dev/v2/scrape", payload=va.FIRECRAWL_SCRAPE)
    mocked.post("https://api.firecrawl.dev/v2/scrape", payload=va.FIRECRAWL_SCRAPE_404)
    async with provider(mocked, FirecrawlProvider, settings, sleeps,
                        FIRECRAWL_API_KEY="fc-k") as fc:
        # one at a time, so the answers go to the URLs in order
        [page] = await fc.extract(["https://example.com"], OPTS)
        [missing] = await fc.extract(["https://example.com/missing"], OPTS)
    url, sent = calls(mocked, "POST")[0]
    assert url == "https://api.firecrawl.dev/v2/scrape"
    assert sent["headers"]["Authorization"] == "Bearer fc-k"
    assert sent["json"] == {"url": "https://example.com", "formats": ["markdown"],
                            "onlyMainContent": True}
    # title and language may come as lists of strings
    assert page.ok and page.title == "Example Domain" and page.metadata["lang"] == "en"
    assert page.final_url == "https://example.com/" and page.status == 200
    assert page.content_type == "text/html; charset=utf-8"
    assert missing.error.message == "firecrawl: the page answered HTTP 404 (Not Found)"


# --------------------------------------------------------------------------- Jina

async def test_jina_documented_search(mocked, settings, sleeps):
    mocked.post("https://s.jina.ai/", payload=va.JINA_SEARCH)
    async with provider(mocked, JinaProvider, settings, sleeps, JINA_API_KEY="jina_k") as jina:
        page = await jina.search("jina", SearchOptions(
            max_results=3, include_domains=["jina.ai"], region="us", language="en-US",
            time_range="day"))
    [(url, sent)] = calls(mocked, "POST")
    assert url == "https://s.jina.ai/"
    assert sent["json"] == {"q": "jina", "num": 3, "gl": "us", "hl": "en"}
    headers = sent["headers"]
    assert headers["Authorization"] == "Bearer jina_k" and headers["X-Site"] == "jina.ai"
    assert headers["Accept"] == "application/json"
    assert headers["X-Respond-With"] == "no-content"
    assert page.rows == [{"title": "Jina AI - Search Foundation", "url": "https://jina.ai/",
                          "snippet": "Best-in-class embeddings, rerankers, web reader.",
                          "published": None}]
    assert page.warnings == ["time_range is not supported; ignored"]


async def test_jina_search_without_results_is_empty(mocked, settings, sleeps):
    mocked.post("https://s.jina.ai/", status=422, payload=va.JINA_NO_RESULTS)
    async with provider(mocked, JinaProvider, settings, sleeps, JINA_API_KEY="k") as jina:
        page = await jina.search("zzqx", SearchOptions())
    assert page.rows == []


async def test_jina_documented_reader(mocked, settings, sleeps):
    mocked.post("https://r.jina.ai/", payload=va.JINA_READ)
    async with provider(mocked, JinaProvider, settings, sleeps, JINA_API_KEY="jina_k") as jina:
        [record] = await jina.extract(["https://example.com/"], OPTS)
    [(url, sent)] = calls(mocked, "POST")
    assert url == "https://r.jina.ai/" and sent["json"] == {"url": "https://example.com/"}
    assert sent["headers"]["Authorization"] == "Bearer jina_k"
    assert sent["headers"]["X-Return-Format"] == "markdown"
    assert record.ok and record.content.startswith("This domain is for use")


async def test_jina_reader_text_format_reads_the_text_field(mocked, settings, sleeps):
    mocked.post("https://r.jina.ai/", payload=va.JINA_READ_TEXT)
    async with provider(mocked, JinaProvider, settings, sleeps) as jina:
        [record] = await jina.extract(["https://example.com/"],
                                      ExtractOptions(format="text", max_chars=500))
    [(_, sent)] = calls(mocked, "POST")
    assert sent["headers"]["X-Return-Format"] == "text"
    assert "Authorization" not in sent["headers"]  # the reader works without a key
    assert record.ok and record.format == "text"
    assert record.content == "Example Domain\nThis domain is for use in illustrative examples."


async def test_jina_bad_key_fails_the_provider(mocked, settings, sleeps):
    mocked.post("https://r.jina.ai/", status=401, payload=va.JINA_UNAUTHORIZED)
    async with provider(mocked, JinaProvider, settings, sleeps, JINA_API_KEY="bad") as jina:
        with pytest.raises(PipelineError, match=r"invalid or expired key \(HTTP 401\) \(Invalid"):
            await jina.extract(["https://example.com/"], OPTS)


async def test_jina_reader_error_body_with_200(mocked, settings, sleeps):
    mocked.post("https://r.jina.ai/", payload={"code": 422, "data": None,
                                               "message": "Failed to goto https://x.example/"})
    async with provider(mocked, JinaProvider, settings, sleeps) as jina:
        [record] = await jina.extract(["https://x.example/"], OPTS)
    assert record.error.kind == "provider"
    assert record.error.message == "jina: error answer: Failed to goto https://x.example/"


# --------------------------------------------------------------------------- shared reading

@pytest.mark.parametrize("answer, reason", [
    ({"error": "plain"}, "plain"),
    ({"detail": {"error": "tavily nests it"}}, "tavily nests it"),
    ({"type": "ErrorResponse", "error": {"code": "X", "detail": "brave nests it"}},
     "brave nests it"),
    ({"message": "  "}, ""),
    ([1], ""),
])
def test_error_detail(answer, reason):
    assert error_detail(answer) == reason


@pytest.mark.parametrize("headers, seconds", [
    ({}, None),
    ({"X-RateLimit-Reset": "1, 1419704"}, 1.0),
    ({"X-RateLimit-Reset": "1, 1419704", "X-RateLimit-Remaining": "0, 10"}, 1.0),
    ({"X-RateLimit-Reset": "1, 1419704", "X-RateLimit-Remaining": "0, 0"}, 1419704.0),
    ({"X-RateLimit-Reset": "soon"}, None),
])
def test_rate_limit_reset(headers, seconds):
    assert rate_limit_reset(headers) == seconds


def test_url_matcher_prefers_the_exact_spelling():
    match = url_matcher(["https://a.example/x", "https://a.example/x/", "https://B.example/"])
    assert match("https://a.example/x/") == "https://a.example/x/"
    assert match("https://a.example/x") == "https://a.example/x"
    assert match("HTTPS://b.example") == "https://B.example/"
    assert match("https://a.example/x#top") == "https://a.example/x"
    assert match("https://c.example/") is None and match(["not", "a", "url"]) is None

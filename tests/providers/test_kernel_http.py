"""End to end: the kernel selecting real vendor providers that talk to a local server."""

import pytest

from pipeline.agent.kernel import web_extract, web_search
from pipeline.core.settings import Settings
from tests.providers.vendor_answers import BRAVE_ANSWER, DDG_PAGE
from tests.support.scripted_server import reply_json, reply_text

KEYS = ("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY",
        "FIRECRAWL_API_KEY", "FIRECRAWL_API_URL", "JINA_API_KEY", "SEARXNG_URL")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


async def test_zero_key_default_is_duckduckgo(server, monkeypatch):
    monkeypatch.setenv("DUCKDUCKGO_BASE_URL", server.url)
    server.route("POST", "/html/", reply_text(DDG_PAGE))
    response = await web_search("python", max_results=1, settings=Settings(retries=0))
    assert response.ok and response.provider == "duckduckgo"
    assert [r.url for r in response.results] == ["https://example.com/a?x=1&y=2"]


async def test_auto_detected_brave_fails_over_to_duckduckgo(server, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "expired")
    monkeypatch.setenv("BRAVE_BASE_URL", server.url)
    monkeypatch.setenv("DUCKDUCKGO_BASE_URL", server.url)
    server.route("GET", "/res/v1/web/search", reply_json({"error": "bad token"}, status=401))
    server.route("POST", "/html/", reply_text(DDG_PAGE))
    response = await web_search("python", settings=Settings(retries=0))
    assert response.ok and response.provider == "duckduckgo"
    assert any("brave: invalid or expired key" in w for w in response.warnings)


async def test_brave_end_to_end(server, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    monkeypatch.setenv("BRAVE_BASE_URL", server.url)
    server.route("GET", "/res/v1/web/search", reply_json(BRAVE_ANSWER))
    response = await web_search("rust", backend="brave", max_results=9999,
                                settings=Settings(retries=0))
    assert response.ok and response.provider == "brave" and len(response.results) == 2
    assert server.requests[0].query["count"] == "20"
    assert any("at most 20" in w for w in response.warnings)


async def test_vendor_extract_through_the_kernel(server, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "k")
    monkeypatch.setenv("TAVILY_BASE_URL", server.url)
    server.route("POST", "/extract", reply_json({
        "results": [{"url": "https://a.example/", "raw_content": "Body. " * 100}],
        "failed_results": []}))
    response = await web_extract(["https://a.example/", "nope://x"], backend="tavily",
                                 max_chars=100, settings=Settings(retries=0))
    assert response.ok and response.provider == "tavily"
    first, second = response.records
    assert first.ok and first.truncated and len(first.content) <= 100
    assert second.error.kind == "invalid_url"
    assert server.requests[0].json()["urls"] == ["https://a.example/"]


async def test_search_only_provider_for_extraction_is_config_error():
    response = await web_extract(["https://a.example/"], backend="brave", settings=Settings())
    assert not response.ok and response.error.kind == "config"
    assert "tavily" in response.error.message and "native" in response.error.message


@pytest.mark.parametrize("env, method, path, answer", [
    ({"SEARXNG_URL": "{url}"}, "GET", "/search", {"query": "q", "results": []}),
    ({"TAVILY_API_KEY": "k", "TAVILY_BASE_URL": "{url}"}, "POST", "/search",
     {"query": "q", "results": [], "response_time": 0.1}),
    ({"EXA_API_KEY": "k", "EXA_BASE_URL": "{url}"}, "POST", "/search",
     {"requestId": "r", "results": []}),
    ({"FIRECRAWL_API_KEY": "k", "FIRECRAWL_API_URL": "{url}"}, "POST", "/v2/search",
     {"success": True, "data": {"web": []}}),
    ({"JINA_API_KEY": "k", "JINA_SEARCH_URL": "{url}"}, "POST", "/",
     {"code": 200, "status": 20000, "data": []}),
])
async def test_empty_answers_are_success_for_every_vendor(server, monkeypatch, env, method,
                                                          path, answer):
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(url=server.url))
    server.route(method, path, reply_json(answer))
    response = await web_search("q", settings=Settings(retries=0))
    assert response.ok and response.results == [] and response.provider != "duckduckgo"


async def test_a_vendor_row_with_a_bad_url_fails_closed(server, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", server.url)
    server.route("GET", "/search", reply_json({"results": [
        {"url": "https://ok.example/", "title": "fine", "content": ""},
        {"url": "javascript:alert(1)", "title": "evil", "content": ""}]}))
    response = await web_search("q", backend="searxng", settings=Settings(retries=0))
    assert not response.ok and response.error.kind == "invalid_result"
    assert response.results == []

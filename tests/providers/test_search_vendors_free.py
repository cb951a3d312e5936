"""DuckDuckGo (HTML), Brave and SearXNG against responses shaped like the real ones."""

import pytest

from pipeline.core.errors import PipelineError
from pipeline.providers.base import SearchOptions
from pipeline.providers.brave import BraveProvider
from pipeline.providers.brave import search_lang as brave_search_lang
from pipeline.providers.duckduckgo import DuckDuckGoProvider, unwrap_link
from pipeline.providers.searxng import SearxngProvider
from tests.providers.vendor_answers import BRAVE_ANSWER, DDG_EMPTY, DDG_PAGE, SEARX_ANSWER
from tests.support.scripted_server import reply_json, reply_text


@pytest.fixture
def ddg(server, settings, sleeps):
    return DuckDuckGoProvider(settings, {"DUCKDUCKGO_BASE_URL": server.url}, sleep=sleeps)


async def test_ddg_parses_results_unwraps_and_skips_ads(server, ddg):
    server.route("POST", "/html/", reply_text(DDG_PAGE))
    async with ddg:
        page = await ddg.search("python", SearchOptions(time_range="week", region="us-en"))
    assert page.rows == [
        {"title": "Example A", "url": "https://example.com/a?x=1&y=2",
         "snippet": "First result snippet."},
        {"title": "Direct B", "url": "https://docs.example.org/b", "snippet": "Second."},
    ]
    sent = server.requests[0]
    assert b"q=python" in sent.body and b"df=w" in sent.body and b"kl=us-en" in sent.body


@pytest.mark.parametrize("options, kl, warned", [
    ({"region": "de-de"}, "de-de", None),
    ({"region": "DE", "language": "de-DE"}, "de-de", None),
    ({"region": "us"}, None, "region"),
    ({"language": "fr"}, None, "language"),
])
async def test_ddg_region_codes(server, ddg, options, kl, warned):
    server.route("POST", "/html/", reply_text(DDG_EMPTY))
    async with ddg:
        page = await ddg.search("x", SearchOptions(**options))
    body = server.requests[0].body.decode()
    assert (f"kl={kl}" in body) if kl else ("kl=" not in body)
    assert any(w.startswith(warned) for w in page.warnings) if warned else not page.warnings


async def test_ddg_403_is_not_a_key_problem(server, ddg):
    server.route("POST", "/html/", reply_text("blocked", status=403))
    async with ddg:
        with pytest.raises(PipelineError, match="duckduckgo: refused the request"):
            await ddg.search("x", SearchOptions())


async def test_ddg_domains_become_operators_and_language_warns(server, ddg):
    server.route("POST", "/html/", reply_text(DDG_EMPTY))
    async with ddg:
        page = await ddg.search("x", SearchOptions(include_domains=["a.org"],
                                                   exclude_domains=["b.com"], language="de"))
    assert page.rows == []
    assert "site%3Aa.org" in server.requests[0].body.decode()
    assert "-site%3Ab.com" in server.requests[0].body.decode()
    assert any("language" in w for w in page.warnings)


@pytest.mark.parametrize("html, message", [
    ("<html><body><div class='anomaly-modal'>Unfortunately, bots use DuckDuckGo too."
     "</div></body></html>", "bot challenge"),
    ("<html><body>Completely different layout</body></html>", "unrecognised results page"),
])
async def test_ddg_non_result_pages_fail(server, ddg, html, message):
    server.route("POST", "/html/", reply_text(html))
    async with ddg:
        with pytest.raises(PipelineError, match=message):
            await ddg.search("x", SearchOptions())


@pytest.mark.parametrize("href, expected", [
    ("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.com%2F&rut=1", "https://a.com/"),
    ("https://duckduckgo.com/y.js?ad=1", None),
    ("/html/?q=next", None),
    ("https://b.com/x", "https://b.com/x"),
])
def test_unwrap_link(href, expected):
    assert unwrap_link(href, "https://html.duckduckgo.com/html/") == expected



@pytest.fixture
def brave(server, settings, sleeps):
    return BraveProvider(settings, {"BRAVE_BASE_URL": server.url, "BRAVE_API_KEY": "k1"},
                         sleep=sleeps)


async def test_brave_request_and_mapping(server, brave):
    server.route("GET", "/res/v1/web/search", reply_json(BRAVE_ANSWER))
    async with brave:
        page = await brave.search("rust async", SearchOptions(
            max_results=50, time_range="month", region="de", language="de-DE"))
    sent = server.requests[0]
    assert sent.headers["X-Subscription-Token"] == "k1"
    assert sent.query == {"q": "rust async", "count": "20", "freshness": "pm",
                          "country": "DE", "search_lang": "de"}
    assert page.rows[0] == {"title": "Async in Rust", "url": "https://rust-lang.org/async",
                            "snippet": "The async book.",
                            "published": "2024-05-01T10:00:00"}
    assert len(page.rows) == 2
    assert any("at most 20" in w for w in page.warnings)


@pytest.mark.parametrize("tag, sent", [
    ("en", "en"), ("de-DE", "de"), ("en_GB", "en-gb"), ("pt-BR", "pt-br"), ("pt", "pt-pt"),
    ("ja", "jp"), ("zh", "zh-hans"), ("zh-TW", "zh-hant"), ("no", "nb"),
])
def test_brave_search_lang_uses_braves_codes(tag, sent):
    assert brave_search_lang(tag) == sent


@pytest.mark.parametrize("answer, rows", [
    ({"type": "search", "query": {"original": "x"}}, 0),  # no "web" key: no results
    ({"web": {"results": []}}, 0),
])
async def test_brave_empty(server, brave, answer, rows):
    server.route("GET", "/res/v1/web/search", reply_json(answer))
    async with brave:
        assert len((await brave.search("x", SearchOptions())).rows) == rows


@pytest.mark.parametrize("answer", [[1, 2], {"web": {"results": "oops"}}])
async def test_brave_wrong_shape_fails(server, brave, answer):
    server.route("GET", "/res/v1/web/search", reply_json(answer))
    async with brave:
        with pytest.raises(PipelineError, match="brave: unexpected answer shape"):
            await brave.search("x", SearchOptions())


async def test_brave_401(server, brave):
    server.route("GET", "/res/v1/web/search", reply_json(
        {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID",
                                            "detail": "The provided subscription token is invalid.",
                                            "status": 401}}, status=401))
    async with brave:
        with pytest.raises(PipelineError, match="brave: invalid or expired key"):
            await brave.search("x", SearchOptions())


def test_brave_key_aliases(settings):
    assert BraveProvider(settings, {"BRAVE_SEARCH_API_KEY": "k"}).is_configured()
    assert not BraveProvider(settings, {"BRAVE_API_KEY": " "}).is_configured()



@pytest.fixture
def searx(server, settings, sleeps):
    return SearxngProvider(settings, {"SEARXNG_URL": server.url + "/searx/"}, sleep=sleeps)


async def test_searxng_mapping_and_prefix(server, searx):
    server.route("GET", "/searx/search", reply_json(SEARX_ANSWER))
    async with searx:
        page = await searx.search("open source", SearchOptions(time_range="year",
                                                               language="en", region="us"))
    assert server.requests[0].query == {"q": "open source", "format": "json",
                                        "time_range": "year", "language": "en-US"}
    assert page.rows[0] == {"title": "Open Source Initiative", "url": "https://opensource.org/",
                            "snippet": "The steward of the OSD.", "score": 4.0,
                            "published": None}
    assert page.rows[1]["published"] == "2024-01-02T00:00:00"


async def test_searxng_403_explains_json_format(server, searx):
    server.route("GET", "/searx/search", reply_text("Forbidden", status=403))
    async with searx:
        with pytest.raises(PipelineError, match=r"search\.formats"):
            await searx.search("x", SearchOptions())


def test_searxng_configured_only_with_url(settings):
    assert not SearxngProvider(settings, {}).is_configured()
    assert SearxngProvider(settings, {"SEARXNG_URL": "http://localhost:8080"}).is_configured()

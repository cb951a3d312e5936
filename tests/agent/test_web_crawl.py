"""web_crawl / web_map: validation in and out, budgets, failover, deadline, tools and MCP."""

import asyncio
import json

import pytest

import pipeline
from pipeline.agent.crawl import fit_budget, web_crawl, web_map
from pipeline.agent.rendering import render
from pipeline.agent.tools import run_tool, tool_definitions, web_tools
from pipeline.core.errors import PipelineError
from pipeline.core.models import CrawledPage, ErrorInfo
from pipeline.core.settings import Settings
from pipeline.providers.base import CrawlPage
from pipeline.providers.fake import FakeCrawlProvider
from pipeline.providers.registry import ProviderSpec, Registry

HOME = "https://site.example/"
SITE = {
    HOME: ("# Home\n\n" + "Welcome here. " * 40, [f"{HOME}a", f"{HOME}b", "https://other.example/"]),
    f"{HOME}a": ("# A\n\n" + "Alpha text. " * 40, [f"{HOME}c", HOME]),
    f"{HOME}b": ErrorInfo(kind="http_status", message="HTTP 500"),
    f"{HOME}c": ("# C\n\nShort.", []),
}
SETTINGS = Settings(max_chars=2_000, cache=False)


async def test_crawl_reads_pages_in_order_with_where_they_were_found():
    fake = FakeCrawlProvider(SITE)
    found = await web_crawl(HOME, backend=fake, settings=SETTINGS)
    assert found.ok and found.provider == "fake"
    assert [p.url for p in found.pages] == [HOME, f"{HOME}a", f"{HOME}b", f"{HOME}c"]
    assert [p.depth for p in found.pages] == [0, 1, 1, 2]
    assert found.pages[0].via == "start" and found.pages[3].parent == f"{HOME}a"
    assert found.pages[2].error is not None and found.pages[2].content is None
    assert found.skipped == {"out_of_scope": 1}
    _, url, options = fake.calls[0]
    assert url == HOME and options.max_pages == 10 and options.max_depth == 2
    assert options.deadline == SETTINGS.crawl_deadline


async def test_one_character_budget_for_all_pages():
    found = await web_crawl(HOME, backend=FakeCrawlProvider(SITE), max_chars=300,
                            settings=SETTINGS)
    assert sum(p.chars for p in found.pages) <= 300
    assert sum(len(p.content or "") for p in found.pages) <= 300
    assert found.pages[0].truncated and found.pages[-1].content == "# C\n\nShort."


def test_fit_budget_gives_unused_shares_to_later_pages():
    pages = [CrawledPage(url=f"{HOME}{i}", content=text)
             for i, text in enumerate(["tiny", "word " * 200, "word " * 200])]
    fitted = fit_budget(pages, 600)
    assert fitted[0].content == "tiny"
    assert fitted[1].chars > 200 and fitted[2].chars > 200  # 596 left, split in two
    assert sum(p.chars for p in fitted) <= 600
    starved = fit_budget(pages, 60)  # 20 a page: below the floor, kept without content
    assert starved[0].content is None and starved[0].truncated


async def test_max_pages_is_clamped_to_50_and_held_whatever_the_provider_sends():
    site = {f"{HOME}{i}": (f"page {i}", [f"{HOME}{i + 1}"]) for i in range(80)}
    site[HOME] = ("home", [f"{HOME}0"])
    found = await web_crawl(HOME, max_pages=500, max_depth=10, backend=FakeCrawlProvider(site),
                            settings=SETTINGS)
    assert found.ok and len(found.pages) <= 50

    class Overshoot(FakeCrawlProvider):
        async def crawl(self, url, options):
            rows = [{"url": f"{HOME}{i}", "content": "x"} for i in range(options.max_pages + 5)]
            return CrawlPage(pages=rows)

    over = await web_crawl(HOME, max_pages=3, backend=Overshoot(), settings=SETTINGS)
    assert len(over.pages) == 3 and any("past the budget" in w for w in over.warnings)


async def test_pages_the_policy_refuses_or_that_are_not_text_are_dropped_or_failed():
    class Hostile(FakeCrawlProvider):
        async def crawl(self, url, options):
            return CrawlPage(pages=[
                {"url": HOME, "content": "fine", "via": "bogus", "depth": -3},
                {"url": "http://127.0.0.1/admin", "content": "secret"},
                {"url": "javascript:alert(1)", "content": "x"},
                "not an object",
                {"url": f"{HOME}bin", "content": "\x00\x01\x02" * 50},
                {"url": f"{HOME}none", "content": None},
                {"url": HOME, "content": "again"},
            ], skipped={"robots": 2, "<script>": 5, "budget": 0}, left=-1)

    found = await web_crawl(HOME, backend=Hostile(), settings=SETTINGS)
    assert [p.url for p in found.pages] == [HOME, f"{HOME}bin", f"{HOME}none"]
    assert found.pages[0].via is None and found.pages[0].depth is None
    assert found.pages[1].error.message == "binary payload refused"
    assert found.pages[2].error is not None
    assert found.skipped == {"robots": 2} and found.left is None
    assert any("3 page(s) refused" in w for w in found.warnings)


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"url": "ftp://site.example/"}, "scheme"),
    ({"url": "not a url"}, ""),
    ({"url": HOME, "max_depth": 99}, "max_depth"),
    ({"url": HOME, "include": ["/docs/ x"]}, "include"),
    ({"url": HOME, "include": "/docs/**"}, "include"),
    ({"url": HOME, "max_chars": 10}, "max_chars"),
    ({"url": 42}, ""),
])
async def test_bad_requests_are_values_and_reach_no_provider(kwargs, needle):
    fake = FakeCrawlProvider(SITE)
    url = kwargs.pop("url")
    found = await web_crawl(url, backend=fake, settings=SETTINGS, **kwargs)
    assert not found.ok and found.error.kind in ("invalid_request", "invalid_url", "blocked")
    assert needle in found.error.message
    assert fake.calls == []


async def test_a_refused_address_is_blocked_before_any_provider():
    fake = FakeCrawlProvider(SITE)
    found = await web_crawl("http://127.0.0.1:9/", backend=fake, settings=SETTINGS)
    assert found.error.kind == "blocked" and fake.calls == []


def registry_with(*providers):
    registry = Registry(specs=[ProviderSpec(p.name, frozenset({"crawl"}),
                                            (lambda s, e, p=p: p)) for p in providers],
                        defaults={"search": "x", "extract": "x", "crawl": providers[0].name})
    return registry


async def test_a_provider_down_hands_over_to_the_next_and_all_down_is_a_value():
    down = FakeCrawlProvider(name="down", error=PipelineError("provider", "down: HTTP 503"))
    up = FakeCrawlProvider(SITE, name="up")
    registry = registry_with(down, up)
    chain = SETTINGS.model_copy(update={"crawl_backend": ["down", "up"]})
    found = await web_crawl(HOME, settings=chain, registry=registry)
    assert found.ok and found.provider == "up"
    assert any("down failed" in w for w in found.warnings)
    alone = SETTINGS.model_copy(update={"crawl_backend": ["down"]})
    failed = await web_crawl(HOME, settings=alone, registry=registry)
    assert not failed.ok and failed.error.kind == "provider" and "503" in failed.error.message
    mapped = await web_map(HOME, settings=alone, registry=registry)
    assert not mapped.ok and mapped.error.kind == "provider"


async def test_a_provider_past_the_deadline_is_cut_as_a_timeout_value(monkeypatch):
    monkeypatch.setattr("pipeline.agent.crawl.GRACE", 0.0)

    class Hangs(FakeCrawlProvider):
        async def crawl(self, url, options):
            await asyncio.Event().wait()

    quick = SETTINGS.model_copy(update={"crawl_deadline": 0.05})
    found = await web_crawl(HOME, backend=Hangs(), settings=quick)
    assert not found.ok and found.error.kind == "timeout" and found.error.retryable


async def test_a_provider_bug_is_a_value():
    class Broken(FakeCrawlProvider):
        async def crawl(self, url, options):
            raise KeyError("oops")

    found = await web_crawl(HOME, backend=Broken(), settings=SETTINGS)
    assert not found.ok and found.error.kind == "provider"


async def test_map_lists_urls_with_depth_and_clamps_the_limit():
    fake = FakeCrawlProvider(SITE)
    mapped = await web_map(HOME, limit=2, backend=fake, settings=SETTINGS)
    assert mapped.ok and [u.url for u in mapped.urls] == [HOME, f"{HOME}a"]
    assert mapped.urls[1].depth == 1 and mapped.urls[1].parent == HOME
    huge = await web_map(HOME, limit=10**9, backend=fake, settings=SETTINGS)
    assert huge.ok and fake.calls[-1][2].limit == 5_000


async def test_the_native_crawler_is_the_default_crawl_backend():
    resolution = Registry().resolve("crawl", Settings())
    assert resolution.chain == ["native"]
    env = {"FIRECRAWL_API_KEY": "fc-k", "TAVILY_API_KEY": "tvly-k"}
    assert Registry().resolve("crawl", Settings(provider_env=env)).chain == ["native"]
    named = Settings(provider_env=env, crawl_backend=["firecrawl", "tavily", "native"])
    assert Registry().resolve("crawl", named).chain[:2] == ["firecrawl", "tavily"]


def test_tool_definitions_carry_crawl_and_map_in_every_flavor():
    for flavor in ("openai_chat", "openai_responses", "anthropic", "mcp"):
        names = [json.dumps(d) for d in tool_definitions(flavor, strict=flavor != "anthropic")]
        assert any('"web_crawl"' in n for n in names) and any('"web_map"' in n for n in names)
    crawl = next(d for d in tool_definitions("anthropic") if d["name"] == "web_crawl")
    props = crawl["input_schema"]["properties"]
    assert set(props) == {"url", "max_pages", "max_depth", "include", "exclude", "max_chars"}
    assert props["max_pages"]["maximum"] == 50


async def test_run_tool_answers_a_crawl_as_text_within_the_operators_budget():
    spec = next(s for s in web_tools(registry_with(FakeCrawlProvider(SITE)))
                if s.name == "web_crawl")
    response = await spec.call({"url": HOME, "max_chars": 9_000}, SETTINGS)
    assert sum(p.chars for p in response.pages) <= SETTINGS.max_chars  # a ceiling
    text = render(response, untrusted=True)
    assert "Source: https://site.example/a (depth 1, linked from https://site.example/)" in text
    assert "Skipped: out_of_scope 1." in text and "untrusted-web-content" in text
    bad = await run_tool("web_crawl", '{"url": "ftp://x"}', settings=SETTINGS)
    assert bad.startswith("The web_crawl call failed") or "failed" in bad


def test_library_exports():
    assert pipeline.web_crawl is web_crawl and pipeline.web_map is web_map
    assert callable(pipeline.web_crawl_sync) and callable(pipeline.web_map_sync)

"""The kernel: validation, clamping, re-validation (fail closed), failover, extract contract."""

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from pipeline.agent.kernel import (
    ExtractArgs,
    SearchArgs,
    validate_rows,
    web_extract,
    web_extract_sync,
    web_search,
    web_search_sync,
)
from pipeline.core.errors import PipelineError
from pipeline.core.models import ErrorInfo, Record
from pipeline.core.settings import Settings
from pipeline.providers.fake import FakeExtractProvider, FakeSearchProvider
from pipeline.providers.registry import BOTH, EXTRACT, ProviderSpec, Registry

ROWS = [{"title": "A", "url": "https://a.example/", "snippet": "aa"},
        {"title": "B", "url": "http://b.example/x", "snippet": "bb", "score": 0.5},
        {"title": "C", "url": "https://c.example/", "published": "2024-01-01"}]
S = Settings()


async def test_search_success_renumbers_and_names_provider():
    fake = FakeSearchProvider(ROWS, name="f")
    response = await web_search("  hello ", backend=fake, settings=S)
    assert response.ok and response.provider == "f" and response.query == "hello"
    assert [r.position for r in response.results] == [1, 2, 3]
    assert response.results[1].score == 0.5
    assert fake.calls[0][0] == "hello"


@pytest.mark.parametrize("given, sent", [(9999, 100), (0, 1), (-5, 1), (7, 7), (None, None)])
async def test_max_results_clamped_before_the_provider(given, sent):
    fake = FakeSearchProvider(ROWS)
    response = await web_search("q", max_results=given, backend=fake, settings=S)
    assert response.ok
    assert fake.calls[0][1].max_results == sent


async def test_results_cut_to_max_results():
    response = await web_search("q", max_results=2, backend=FakeSearchProvider(ROWS), settings=S)
    assert [r.title for r in response.results] == ["A", "B"]


async def test_empty_search_is_success():
    response = await web_search("q", backend=FakeSearchProvider([]), settings=S)
    assert response.ok and response.results == [] and response.error is None


@pytest.mark.parametrize("kwargs", [
    {"query": ""}, {"query": "   "}, {"query": 42}, {"query": None},
    {"query": "q", "max_results": "lots"}, {"query": "q", "max_results": True},
    {"query": "q", "time_range": "decade"},
    {"query": "q", "include_domains": ["not a domain"]},
    {"query": "q", "exclude_domains": ["x.com/path"]},
    {"query": "q", "language": "english!"},
])
async def test_invalid_search_requests_are_values(kwargs):
    fake = FakeSearchProvider(ROWS)
    query = kwargs.pop("query")
    response = await web_search(query, backend=fake, settings=S, **kwargs)
    assert not response.ok and response.error.kind == "invalid_request"
    assert fake.calls == []


@pytest.mark.parametrize("bad_row", [
    {"title": "x", "url": "/relative"},
    {"title": "x", "url": "ftp://a.example/"},
    {"title": "x", "url": "javascript:alert(1)"},
    {"title": "x"},
    {"title": "x", "url": 5},
    {"title": ["x"], "url": "https://ok.example/"},
    {"title": "x", "url": "https://ok.example/", "score": "high"},
    {"title": "x", "url": "https://ok.example/", "score": float("nan")},
    "https://not-an-object.example/",
])
async def test_one_bad_row_fails_the_whole_search_closed(bad_row):
    fake = FakeSearchProvider([*ROWS, bad_row])
    response = await web_search("q", backend=fake, settings=S)
    assert not response.ok and response.results == []
    assert response.error.kind == "invalid_result"


def test_validate_rows_drops_duplicates_and_defaults_title():
    rows = validate_rows([{"url": "https://a.example/"},
                          {"url": "https://a.example/", "title": "d"},
                          {"url": "https://b.example/", "title": "t\x00\n x"}])
    assert [(r.position, r.title) for r in rows] == [(1, "https://a.example/"), (2, "t x")]


async def test_provider_failure_is_a_value():
    fake = FakeSearchProvider(error=PipelineError("provider", "brave: rate limited",
                                                  retryable=True))
    response = await web_search("q", backend=fake, settings=S)
    assert not response.ok
    assert response.error.kind == "provider" and response.error.retryable


class Crashing:
    name = "crash"

    async def search(self, query, options):
        raise ZeroDivisionError


async def test_provider_crash_is_a_value():
    response = await web_search("q", backend=Crashing(), settings=S)
    assert not response.ok and response.error.kind == "provider"
    assert "crashed" in response.error.message


def chain_registry(**providers):
    specs = [ProviderSpec(name, BOTH if isinstance(p, FakeSearchProvider) else EXTRACT,
                          (lambda s, e, p=p: p)) for name, p in providers.items()]
    return Registry(specs, defaults={"search": next(iter(providers)),
                                     "extract": next(iter(providers))}, auto_detect={})


async def test_failover_to_next_provider_and_response_names_it():
    down = FakeSearchProvider(name="down", error=PipelineError("provider", "down: HTTP 503"))
    up = FakeSearchProvider(ROWS, name="up")
    registry = chain_registry(down=down, up=up)
    response = await web_search("q", backend=["down", "up"], settings=S, registry=registry)
    assert response.ok and response.provider == "up"
    assert any("down failed" in w and "trying up" in w for w in response.warnings)


async def test_failover_also_from_settings_chain():
    down = FakeSearchProvider(name="down", error=PipelineError("provider", "down: HTTP 503"))
    up = FakeSearchProvider(ROWS, name="up")
    response = await web_search("q", settings=Settings(search_backend=["down", "up"]),
                                registry=chain_registry(down=down, up=up))
    assert response.provider == "up"


async def test_no_failover_on_empty_result():
    empty = FakeSearchProvider([], name="empty")
    up = FakeSearchProvider(ROWS, name="up")
    response = await web_search("q", backend=["empty", "up"], settings=S,
                                registry=chain_registry(empty=empty, up=up))
    assert response.ok and response.provider == "empty" and response.results == []
    assert up.calls == []


async def test_whole_chain_failing_reports_every_cause():
    a = FakeSearchProvider(name="a", error=PipelineError("provider", "a: HTTP 500"))
    b = FakeSearchProvider(name="b", error=PipelineError("provider", "b: timed out",
                                                         retryable=True))
    response = await web_search("q", backend=["a", "b"], settings=S,
                                registry=chain_registry(a=a, b=b))
    assert not response.ok and response.error.kind == "provider"
    assert "a: HTTP 500" in response.error.message and "b: timed out" in response.error.message
    assert response.error.retryable


async def test_unknown_backend_is_config_error_value():
    response = await web_search("q", backend="nope", settings=S)
    assert not response.ok and response.error.kind == "config"
    assert "duckduckgo" in response.error.message


async def test_provider_warnings_are_passed_on():
    fake = FakeSearchProvider(ROWS, name="f", warnings=["language ignored"])
    response = await web_search("q", backend=fake, settings=S)
    assert response.warnings == ["f: language ignored"]


def test_sync_twins_work_inside_and_outside_a_loop():
    response = web_search_sync("q", backend=FakeSearchProvider(ROWS), settings=S)
    assert response.ok and len(response.results) == 3


async def test_sync_twin_inside_running_loop():
    response = web_extract_sync(["https://a.example/"],
                                backend=FakeExtractProvider({"https://a.example/": "hi"}),
                                settings=S)
    assert response.ok and response.records[0].content == "hi"


# --------------------------------------------------------------------------- extract

PAGES = {"https://a.example/": "Alpha page. " * 20, "https://b.example/": "Beta."}


async def test_extract_one_record_per_url_in_order_with_syntax_failures():
    fake = FakeExtractProvider(PAGES)
    urls = ["https://b.example/", "not a url", "https://a.example/", "ftp://x.example/",
            "https://b.example/", "https://missing.example/"]
    response = await web_extract(urls, backend=fake, settings=S)
    assert response.ok and response.provider == "fake"
    assert [r.url for r in response.records] == urls
    assert [r.ok for r in response.records] == [True, False, True, False, True, False]
    assert response.records[1].error.kind == "invalid_url"
    assert response.records[5].error.kind == "network"
    # each distinct valid URL reaches the provider once
    assert fake.calls == [["https://b.example/", "https://a.example/",
                           "https://missing.example/"]]


async def test_extract_max_chars_and_format_reach_the_provider():
    response = await web_extract(["https://a.example/"], max_chars=60, format="text",
                                 backend=FakeExtractProvider(PAGES), settings=S)
    record = response.records[0]
    assert record.truncated and len(record.content) <= 60 and record.format == "text"


@pytest.mark.parametrize("urls", [[1, 2], [], None, b"https://a.example/", 42,
                                  ["https://a.example/"] * 101])
async def test_extract_invalid_requests(urls):
    fake = FakeExtractProvider(PAGES)
    response = await web_extract(urls, backend=fake, settings=S)
    assert not response.ok and response.error.kind == "invalid_request"
    assert response.records == [] and fake.calls == []


async def test_extract_takes_a_bare_url_string_as_a_list_of_one():
    fake = FakeExtractProvider(PAGES)
    response = await web_extract("https://a.example/", backend=fake, settings=S)
    assert response.ok and [r.url for r in response.records] == ["https://a.example/"]
    assert response.records[0].ok and fake.calls == [["https://a.example/"]]
    assert ExtractArgs(urls="https://a.example/").urls == ["https://a.example/"]
    assert web_extract_sync("https://a.example/", backend=fake, settings=S).records[0].ok


async def test_extract_provider_failure_fails_over_then_reports_per_url():
    down = FakeExtractProvider(name="down", error=PipelineError("provider", "down: HTTP 401"))
    up = FakeExtractProvider(PAGES, name="up")
    registry = chain_registry(down=down, up=up)
    response = await web_extract(["https://a.example/"], backend=["down", "up"], settings=S,
                                 registry=registry)
    assert response.ok and response.provider == "up" and response.records[0].ok
    response = await web_extract(["https://a.example/"], backend=["down"], settings=S,
                                 registry=registry)
    assert not response.ok and response.error.kind == "provider"
    assert [r.error.kind for r in response.records] == ["provider"]


class Broken:
    """An extract provider that breaks its contract."""

    name = "broken"

    def __init__(self, answer):
        self.answer = answer

    async def extract(self, urls, options):
        return self.answer(urls)


@pytest.mark.parametrize("answer", [
    lambda urls: [],
    lambda urls: [Record(url="https://other.example/", ok=True, content="x")],
    lambda urls: "nonsense",
])
async def test_extract_provider_breaking_contract_is_invalid_result(answer):
    response = await web_extract(["https://a.example/"], backend=Broken(answer), settings=S)
    assert not response.ok and response.error.kind == "invalid_result"


async def test_extract_enforces_max_chars_even_if_provider_does_not():
    response = await web_extract(
        ["https://a.example/"], max_chars=100, settings=S,
        backend=Broken(lambda urls: [Record(url=urls[0], ok=True, content="y" * 5000)]))
    assert len(response.records[0].content) <= 100 and response.records[0].truncated


def test_argument_models_make_schemas():
    search = SearchArgs.model_json_schema()
    extract = ExtractArgs.model_json_schema()
    assert search["required"] == ["query"] and "max_results" in search["properties"]
    assert extract["required"] == ["urls"]


async def test_record_errors_are_values_not_exceptions():
    fake = FakeExtractProvider({"https://a.example/": ErrorInfo(kind="timeout", message="t")})
    response = await web_extract(["https://a.example/"], backend=fake, settings=S)
    assert response.ok and response.records[0].error.kind == "timeout"


_row = st.fixed_dictionaries(
    {"url": st.one_of(st.sampled_from(["https://ok.example/a", "http://ok.example/b",
                                       "ftp://x/", "/rel", "", "https://"]), st.text(max_size=30),
                      st.none(), st.integers())},
    optional={"title": st.one_of(st.text(max_size=40), st.none(), st.integers()),
              "snippet": st.one_of(st.text(max_size=40), st.none()),
              "score": st.one_of(st.floats(allow_nan=True), st.none(), st.text(max_size=3))})


@hypothesis_settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_row, max_size=8))
def test_validate_rows_all_valid_or_fails_closed(rows):
    try:
        results = validate_rows(rows)
    except PipelineError as exc:
        assert exc.kind == "invalid_result"
        return
    assert [r.position for r in results] == list(range(1, len(results) + 1))
    assert all(r.url.startswith(("http://", "https://")) for r in results)
    assert len({r.url for r in results}) == len(results)


def test_import_pipeline_stays_light():
    code = ("import sys, pipeline; assert 'aiohttp' not in sys.modules; "
            "assert 'pipeline.agent.kernel' not in sys.modules; pipeline.web_search; "
            "assert 'pipeline.agent.kernel' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_malformed_rows_fail_over_to_the_next_provider():
    bad = FakeSearchProvider([{"title": "x", "url": "javascript:1"}], name="bad")
    good = FakeSearchProvider(ROWS, name="good")
    response = await web_search("q", backend=["bad", "good"], settings=S,
                                registry=chain_registry(bad=bad, good=good))
    assert response.ok and response.provider == "good"
    assert all(r.url.startswith("http") for r in response.results)
    assert any("bad failed" in w for w in response.warnings)


async def test_bad_environment_settings_are_a_config_value(monkeypatch):
    monkeypatch.setenv("PIPELINE_MAX_CHARS", "lots")
    response = await web_search("q", backend=FakeSearchProvider(ROWS))
    assert not response.ok and response.error.kind == "config"
    extracted = await web_extract(["https://a.example/"], backend=FakeExtractProvider(PAGES))
    assert not extracted.ok and extracted.error.kind == "config"


async def test_extract_url_spellings_share_one_read_and_keep_their_own_url():
    fake = FakeExtractProvider(PAGES)
    urls = ["  https://a.example/ ", "https://a.example/", "bad"]
    response = await web_extract(urls, backend=fake, settings=S)
    assert fake.calls == [["https://a.example/"]]
    assert [r.url for r in response.records] == urls
    assert [r.ok for r in response.records] == [True, True, False]


async def test_whole_failure_keeps_invalid_url_records():
    down = FakeExtractProvider(error=PipelineError("provider", "down: HTTP 500"))
    response = await web_extract(["https://a.example/", "bad"], backend=down, settings=S)
    assert not response.ok
    assert [r.error.kind for r in response.records] == ["provider", "invalid_url"]


@pytest.mark.parametrize("url", ["http://127.0.0.1/", "http://169.254.169.254/latest",
                                 "http://[::ffff:10.0.0.1]/", "file:///etc/passwd",
                                 "http://0x7f000001/"])
async def test_refused_addresses_never_reach_a_provider(url):
    fake = FakeExtractProvider(PAGES)
    response = await web_extract([url, "https://a.example/"], backend=fake, settings=S)
    assert response.records[0].error.kind == "blocked"
    assert fake.calls == [["https://a.example/"]]


async def test_allow_private_opens_private_literals_for_providers():
    fake = FakeExtractProvider({"http://10.0.0.7/": "intranet"})
    response = await web_extract(["http://10.0.0.7/"], backend=fake,
                                 settings=Settings(allow_private=True))
    assert response.records[0].ok

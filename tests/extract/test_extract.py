"""NativeExtractor: fetch → handler → truncation → Record, never raising per URL."""

from __future__ import annotations

import pytest

from pipeline.core.models import ExtractOptions
from pipeline.core.settings import load_settings
from pipeline.core.truncate import MARKER
from pipeline.extract.native import NativeExtractor
from pipeline.extract.runners import InlineRunner
from pipeline.fetch.base import FakeFetcher, FetchError
from pipeline.providers.base import ExtractProvider
from tests.support.pages import page

SETTINGS = load_settings({"max_chars": 200}, env={})


class Exploding:
    """A fetcher with a bug: it raises something that is not a FetchError."""

    async def fetch(self, url):
        raise ZeroDivisionError("oops")


async def extract(routes, url, **kwargs):
    async with NativeExtractor(SETTINGS, fetcher=FakeFetcher(routes)) as native:
        return await native.extract_one(url, **kwargs)


async def test_ok_record_carries_fetch_and_handler_fields():
    url = "http://example.test/a"
    routes = {url: page(url, b"# Hello\n\nSome text.", "text/markdown",
                        final_url="http://example.test/b", attempts=2)}
    record = await extract(routes, url, index=7)
    assert record.ok and record.error is None
    assert (record.url, record.index, record.final_url) == (url, 7, "http://example.test/b")
    assert (record.status, record.content_type, record.handler) == (200, "text/markdown", "text")
    assert record.title == "Hello" and record.content == "# Hello\n\nSome text."
    assert record.chars == len(record.content) and record.bytes == 19
    assert record.attempts == 2 and record.format == "markdown"


async def test_long_content_is_truncated_with_offset():
    url = "http://example.test/long"
    text = ("A sentence of some length. " * 40).encode()
    record = await extract({url: page(url, text)}, url)
    assert record.ok and record.truncated and record.content.endswith(MARKER)
    assert len(record.content) <= 200 and record.chars == len(record.content)
    assert record.next_offset is not None and record.next_offset > 0


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (FetchError("timeout", "too slow", attempts=3), "timeout"),
        (FetchError("http_status", "HTTP 404", status=404, final_url="http://x.test/404"),
         "http_status"),
        (page("u", b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"), "unsupported_type"),
        (page("u", b"   \n\n ", "text/plain"), "empty"),
        (page("u", b'{"a": 1,, }', "application/json"), "decode"),
    ],
)
async def test_per_url_failures_become_error_records(answer, kind):
    url = "http://example.test/x"
    record = await extract({url: answer}, url)
    assert not record.ok and record.error is not None and record.error.kind == kind
    assert record.content is None
    if isinstance(answer, FetchError):
        assert (record.attempts, record.status) == (answer.attempts, answer.status)


async def test_invalid_url_is_refused_before_fetching():
    fetcher = FakeFetcher({})
    async with NativeExtractor(SETTINGS, fetcher=fetcher) as native:
        records = [await native.extract_one(u) for u in ("ftp://x.test/", "not a url", "")]
    assert [r.error.kind for r in records] == ["blocked", "invalid_url", "invalid_url"]
    assert fetcher.calls == {}


async def test_unexpected_exception_is_an_extract_error():
    async with NativeExtractor(SETTINGS, fetcher=Exploding()) as native:
        record = await native.extract_one("http://example.test/")
    assert record.error.kind == "extract" and "ZeroDivisionError" in record.error.message


async def test_provider_contract_order_dedup_and_options():
    a, b = "http://example.test/a", "http://example.test/b"
    fetcher = FakeFetcher({a: page(a, b"alpha " * 100),
                           b: page(b, b'{"k": 1}', "application/json")})
    native = NativeExtractor(SETTINGS, fetcher=fetcher)
    assert isinstance(native, ExtractProvider) and native.name == "native"
    assert native.is_configured()
    records = await native.extract([b, a, b, "bad"], ExtractOptions(format="text", max_chars=60))
    assert [r.url for r in records] == [b, a, b, "bad"]
    assert fetcher.calls == {a: 1, b: 1}
    assert records[0].content == '{\n  "k": 1\n}' and records[0].format == "text"
    assert len(records[1].content) <= 60 and records[1].truncated
    assert records[3].error.kind == "invalid_url"
    assert records[0] is not records[2]


async def test_single_url_caller_gets_an_inline_runner_not_a_pool():
    native = NativeExtractor(SETTINGS, fetcher=FakeFetcher({}))
    async with native:
        assert isinstance(native._runner, InlineRunner)


def test_unknown_handler_spec_is_a_config_error():
    from pipeline.core.errors import PipelineError

    with pytest.raises(PipelineError) as caught:
        NativeExtractor(load_settings({"handlers": ["nowhere.module:thing"]}, env={}))
    assert caught.value.kind == "config"


def test_media_types_no_handler_could_take_are_rejected_early():
    native = NativeExtractor(SETTINGS, fetcher=FakeFetcher({}))
    assert native.rejects_media_type("video/mp4")
    assert native.rejects_media_type("image/png; charset=binary")
    assert not native.rejects_media_type("application/pdf")
    assert not native.rejects_media_type("text/plain")
    assert not native.rejects_media_type("application/octet-stream")
    assert not native.rejects_media_type(None)


async def test_an_app_shell_names_the_flag_that_renders_it_and_a_bot_wall_does_not():
    shell, wall = "http://example.test/app", "http://example.test/wall"
    routes = {
        shell: page(shell, b'<!doctype html><html><head><title>App</title></head><body>'
                    b'<div id="root"></div><script src="/app.js"></script></body></html>',
                    "text/html"),
        wall: page(wall, b"<html><head><title>Just a moment...</title></head><body><p>"
                   b"Checking your browser before accessing the site.</p></body></html>",
                   "text/html"),
    }
    app = await extract(routes, shell)
    assert app.error is not None and app.error.kind == "challenge"
    assert app.error.message.startswith("JavaScript app shell")
    assert app.error.message.endswith("a browser renders it: --render auto")
    bot = await extract(routes, wall)
    assert bot.error is not None and bot.error.kind == "challenge"
    assert "--render" not in bot.error.message  # a browser is no way around a bot wall

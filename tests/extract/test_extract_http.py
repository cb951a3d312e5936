"""The native extractor with the real HTTP fetcher, against a server on 127.0.0.1."""

from __future__ import annotations

from aiohttp import web

from pipeline.core.models import ExtractOptions
from pipeline.core.settings import load_settings
from pipeline.extract.native import NativeExtractor
from pipeline.fetch import HttpFetcher
from tests.support.pages import serve

SETTINGS = load_settings({"allow_net": ["127.0.0.1/32"], "rate": 1000, "timeout": 5,
                          "retries": 0}, env={})


def app() -> tuple[web.Application, list[str]]:
    seen: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen.append(f"{request.method} {request.path}")
        if request.path == "/doc.json":
            return web.json_response({"title": "A JSON doc", "items": [1, 2]})
        if request.path == "/image.png":
            return web.Response(body=b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
                                content_type="image/png")
        return web.Response(text="Plain words. " * 30, content_type="text/plain")

    application = web.Application()
    application.router.add_route("*", "/{tail:.*}", page)
    return application, seen


async def test_library_extract_with_the_default_fetcher():
    application, seen = app()
    async with serve(application) as base:
        records = await NativeExtractor(SETTINGS).extract(
            [f"{base}/doc.json", f"{base}/a.txt", f"{base}/a.txt", f"{base}/image.png"],
            ExtractOptions(format="markdown", max_chars=120))
    json_record, text_record, duplicate, image = records
    assert json_record.ok and json_record.title == "A JSON doc"
    assert json_record.content.startswith("```json\n{")
    assert text_record.ok and text_record.truncated and len(text_record.content) <= 120
    assert duplicate.content == text_record.content and duplicate.url == text_record.url
    assert seen.count("GET /a.txt") == 1
    assert image.error.kind == "unsupported_type"
    assert "GET /image.png" not in seen  # refused on its HEAD, before the body


async def test_an_injected_http_fetcher_is_used_as_is():
    application, seen = app()
    no_head = SETTINGS.model_copy(update={"head": False})
    async with serve(application) as base, HttpFetcher(no_head) as fetcher:
        async with NativeExtractor(SETTINGS, fetcher=fetcher) as native:
            record = await native.extract_one(f"{base}/b.txt", index=3)
        after = await fetcher.fetch(f"{base}/c.txt")  # still open: it is the caller's
    assert record.ok and record.index == 3 and record.status == 200 and record.handler == "text"
    assert record.attempts == 1 and record.bytes == len("Plain words. " * 30)
    assert after.status == 200
    assert seen == ["GET /b.txt", "GET /c.txt"]  # the injected fetcher (no HEAD) was used

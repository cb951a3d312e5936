"""Settings that shape what a handler does reach it through the handler context."""

from __future__ import annotations

from handlers import HandlerContext, HandlerRegistry
from pipeline.core.models import Document
from pipeline.core.settings import Settings
from pipeline.extract.native import NativeExtractor
from pipeline.fetch import FakeFetcher


class _Recorder:
    name = "recorder"
    media_types = ("text/html",)

    def __init__(self) -> None:
        self.seen: list[HandlerContext] = []

    def sniff(self, head: bytes) -> bool:
        return False

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        self.seen.append(ctx)
        return Document(content="text", format=ctx.format)


async def test_pdf_bounds_and_comments_reach_the_handler():
    recorder = _Recorder()
    registry = HandlerRegistry([recorder])
    settings = Settings(pdf_max_pages=7, pdf_time_limit=3.5, include_comments=True)
    fetcher = FakeFetcher({"https://example.com/": b"<p>x</p>"})
    async with NativeExtractor(settings, fetcher=fetcher, registry=registry) as extractor:
        record = await extractor.extract_one("https://example.com/", max_chars=500)
    assert record.ok, record.error
    options = recorder.seen[0].options
    assert options["pdf_max_pages"] == 7
    assert options["pdf_time_limit"] == 3.5
    assert options["include_comments"] is True
    assert options["max_chars"] == 500

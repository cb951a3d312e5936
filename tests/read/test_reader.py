"""The reader with a fake provider chain: windows from the cache, one call per batch of
misses, keys by options, and the stage registry (a new stage is one registration)."""

from __future__ import annotations

import re

from pipeline.core.errors import PipelineError
from pipeline.core.models import ErrorInfo, ExtractOptions, Record
from pipeline.core.settings import Settings
from pipeline.core.truncate import MARKER
from pipeline.providers.chain import ChainExtractor, ProviderChain
from pipeline.read import stages
from pipeline.read.reader import Reader, ReadRuntime
from pipeline.read.stages import FakeStage, StageContext, StageSpec, build_stages
from pipeline.store.cache import TextCache
from pipeline.store.paging import FULL_TEXT_CHARS

TEXT = "\n\n".join(f"Paragraph {i}. " + "word " * 30 for i in range(40))


class FakeVendor:
    """An extract provider that records its calls; URLs with "bad" fail."""

    name = "vendor"

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], str, int]] = []

    async def extract(self, urls: list[str], options: ExtractOptions) -> list[Record]:
        self.calls.append((list(urls), options.format, options.max_chars))
        return [Record(url=u, ok=True, content=TEXT, chars=len(TEXT)) if "bad" not in u
                else Record.failure(u, ErrorInfo(kind="timeout", message="slow"))
                for u in urls]


def reader(vendor: FakeVendor, runtime: ReadRuntime, settings: Settings | None = None,
           **options) -> Reader:
    extractor = ChainExtractor(ProviderChain([("vendor", lambda: vendor)]))
    return Reader(extractor, runtime, settings or Settings(),
                  **{"format": "markdown", "budget": FULL_TEXT_CHARS, **options})


async def test_windows_are_read_from_the_cache(tmp_path):
    vendor = FakeVendor()
    runtime = ReadRuntime(TextCache(tmp_path))
    async with reader(vendor, runtime) as read:
        [first] = await read.read(["https://a.test/"], max_chars=500)
        assert first.truncated and len(first.content) <= 500 and first.next_offset
        pieces, offset = [first.content], first.next_offset
        while offset is not None:
            [window] = await read.read(["https://a.test/"], max_chars=500, offset=offset)
            assert window.cache == "hit"
            pieces.append(window.content)
            offset = window.next_offset
    assert vendor.calls == [(["https://a.test/"], "markdown", FULL_TEXT_CHARS)]
    kept = "".join(p.removesuffix(MARKER) for p in pieces)
    assert re.sub(r"\s+", "", kept) == re.sub(r"\s+", "", TEXT)


async def test_misses_go_in_one_call_and_keys_follow_the_options(tmp_path):
    vendor = FakeVendor()
    runtime = ReadRuntime(TextCache(tmp_path))
    urls = ["https://a.test/", "https://b.test/", "https://bad.test/"]
    async with reader(vendor, runtime) as read:
        records = await read.read(urls, max_chars=100_000)
        assert [r.ok for r in records] == [True, True, False]
        await read.read(urls, max_chars=100_000)
    assert [c[0] for c in vendor.calls] == [urls, ["https://bad.test/"]]  # failures not kept
    async with reader(vendor, runtime, format="text") as read:
        await read.read(urls[:1], max_chars=100_000)
    async with reader(vendor, runtime, Settings(handlers=["x:y"])) as read:
        await read.read(urls[:1], max_chars=100_000)
    assert [c[0] for c in vendor.calls[2:]] == [urls[:1], urls[:1]]  # other keys: read again


async def test_stages_run_in_order_on_every_windowed_record(tmp_path):
    vendor = FakeVendor()
    first = FakeStage("first", lambda r: r.model_copy(update={"content": "one"}))
    second = FakeStage("second")
    async with reader(vendor, ReadRuntime(TextCache(None)), stages=[first, second]) as read:
        [record] = await read.read(["https://a.test/"], max_chars=500)
    assert first.seen[0].chars <= 500  # stages see the window, not the full text
    assert [r.content for r in second.seen] == ["one"] and record.content == "one"


def test_a_registered_stage_is_built_after_the_others(monkeypatch):
    scrubber = FakeStage("scrub")
    monkeypatch.setattr(stages, "STAGES", [*stages.STAGES, StageSpec("scrub", lambda c: scrubber)])
    context = StageContext(Settings(languages=["en"]), foreign=True, max_chars=1000)
    assert [stage.name for stage in build_stages(context)] == ["language", "scrub"]


async def test_one_url_is_held_to_the_policy_and_a_failed_chain_is_its_record(tmp_path):
    vendor = FakeVendor()
    async with reader(vendor, ReadRuntime(TextCache(None))) as read:
        record = await read.read_one(" https://A.example ", max_chars=500)
        blocked = await read.read_one("http://127.0.0.1/", max_chars=500)
    assert record.ok and record.url == " https://A.example "
    assert blocked.error is not None and blocked.error.kind == "blocked"
    assert vendor.calls == [(["https://a.example/"], "markdown", FULL_TEXT_CHARS)]

    class Down(FakeVendor):
        async def extract(self, urls, options):
            raise PipelineError("provider", "down: HTTP 500")

    async with reader(Down(), ReadRuntime(TextCache(None))) as read:
        failed = await read.read_one("https://a.example/", max_chars=500)
    assert failed.url == "https://a.example/" and failed.error.kind == "provider"

"""The batch command's extract callable: our own extractor, vendors with failover, compress."""

import pytest

from pipeline.batch.extract_stage import batch_extract
from pipeline.core.errors import PipelineError
from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.providers.fake import FakeExtractProvider
from pipeline.providers.registry import BOTH, SEARCH, ProviderSpec, Registry

URL = "https://a.example/"


class FakeNative(FakeExtractProvider):
    """Stands in for NativeExtractor: an async context manager with ``extract_validated``."""

    def __init__(self):
        super().__init__({URL: "native text " * 10}, name="native")
        self.entered = self.exited = 0

    async def __aenter__(self):
        self.entered += 1
        return self

    async def __aexit__(self, *exc):
        self.exited += 1

    async def extract_validated(self, url, *, format=None, max_chars=None, cached=None):
        record = Record(url=url, ok=True, content="native one", chars=10, handler="html")
        return record, None


def registry(vendor):
    return Registry([ProviderSpec("duckduckgo", SEARCH, lambda s, e: None),
                     ProviderSpec("vendor", BOTH, lambda s, e: vendor)], auto_detect={})


async def test_native_only_reads_through_our_own_extractor():
    native = FakeNative()
    async with batch_extract(Settings(), native, registry=registry(None)) as extract:
        record = await extract(URL)
    assert record.content == "native one"
    assert (native.entered, native.exited) == (1, 1)


async def test_extract_backend_goes_through_the_vendor_with_failover_to_native():
    native = FakeNative()
    vendor = FakeExtractProvider(name="vendor", error=PipelineError("provider", "vendor: 503"))
    settings = Settings(extract_backend=["vendor", "native"])
    async with batch_extract(settings, native, registry=registry(vendor)) as extract:
        record = await extract(URL)
        blocked = await extract("http://10.0.0.1/")
    assert record.ok and record.content.startswith("native text")
    assert vendor.calls == [[URL]]
    assert blocked.error.kind == "blocked"


async def test_compress_wraps_the_call_and_needs_a_model(monkeypatch):
    monkeypatch.delenv("PIPELINE_COMPRESS_MODEL", raising=False)
    with pytest.raises(PipelineError) as info:
        async with batch_extract(Settings(compress=True), FakeNative(), registry=registry(None)):
            pass
    assert info.value.kind == "config"


async def test_unknown_backend_is_a_config_error_before_work():
    native = FakeNative()
    with pytest.raises(PipelineError) as info:
        async with batch_extract(Settings(extract_backend=["nope"]), native,
                                 registry=registry(None)):
            pass
    assert info.value.kind == "config" and native.entered == 0


async def test_compress_end_to_end_against_a_local_model(server, monkeypatch):
    from tests.support.scripted_server import reply_json

    for name in ("PIPELINE_COMPRESS_MODEL", "PIPELINE_COMPRESS_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    server.route("POST", "/v1/chat/completions", reply_json(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": "gist"}}]}))
    settings = Settings(compress=True, compress_floor=5, retries=0, provider_env={
        "PIPELINE_COMPRESS_MODEL": "m", "PIPELINE_COMPRESS_BASE_URL": server.url + "/v1"})
    async with batch_extract(settings, FakeNative(), registry=registry(None)) as extract:
        record = await extract(URL)
    assert record.compressed and record.content == "gist"
    assert record.metadata["original_chars"] == len("native one")

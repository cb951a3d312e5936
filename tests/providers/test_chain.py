"""Failover chains and the chain extractor the batch engine uses."""

import asyncio

import pytest

from pipeline.core.errors import PipelineError
from pipeline.core.models import ExtractOptions
from pipeline.core.settings import Settings
from pipeline.providers.chain import ProviderChain, open_chain, open_extractor
from pipeline.providers.fake import FakeExtractProvider
from pipeline.providers.http import VendorError
from pipeline.providers.registry import EXTRACT, ProviderSpec, Registry

OPTS = ExtractOptions(max_chars=500)
URL = "https://a.example/"


class Tracked(FakeExtractProvider):
    """Counts how often it is opened and closed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.opened = self.closed = 0

    async def __aenter__(self):
        await asyncio.sleep(0)  # let a concurrent caller race the opening
        self.opened += 1
        return self

    async def __aexit__(self, *exc):
        self.closed += 1


def registry_of(**providers):
    return Registry([ProviderSpec(n, EXTRACT, (lambda s, e, p=p: p))
                     for n, p in providers.items()],
                    defaults={"search": "x", "extract": next(iter(providers))}, auto_detect={})


async def test_fatal_failure_is_not_retried_on_later_calls():
    bad = Tracked(name="bad", error=VendorError("bad", "invalid or expired key", fatal=True))
    good = Tracked({URL: "text"}, name="good")
    registry = registry_of(bad=bad, good=good)
    async with open_extractor(Settings(extract_backend=["bad", "good"]),
                              registry=registry) as extractor:
        for _ in range(3):
            records = await extractor.extract([URL], OPTS)
            assert records[0].content == "text" and extractor.served_by == "good"
    assert len(bad.calls) == 1 and len(good.calls) == 3
    assert (good.opened, good.closed) == (1, 1)  # opened once, closed with the chain


async def test_transient_failure_is_retried_on_the_next_call():
    flaky = Tracked(name="flaky", error=VendorError("flaky", "HTTP 503", retryable=True))
    good = Tracked({URL: "text"}, name="good")
    async with open_extractor(Settings(), backend=["flaky", "good"],
                              registry=registry_of(flaky=flaky, good=good)) as extractor:
        await extractor.extract([URL], OPTS)
        await extractor.extract([URL], OPTS)
    assert len(flaky.calls) == 2


async def test_concurrent_first_calls_open_a_provider_once():
    good = Tracked({URL: "text"}, name="good")
    async with open_extractor(Settings(), registry=registry_of(good=good)) as extractor:
        await asyncio.gather(*(extractor.extract([URL], OPTS) for _ in range(5)))
    assert good.opened == 1 and len(good.calls) == 5


async def test_whole_chain_failure_raises_combined():
    a = Tracked(name="a", error=PipelineError("provider", "a: HTTP 500"))
    b = Tracked(name="b", error=VendorError("b", "timed out", retryable=True))
    async with open_extractor(Settings(), backend=["a", "b"],
                              registry=registry_of(a=a, b=b)) as extractor:
        with pytest.raises(PipelineError) as info:
            await extractor.extract([URL], OPTS)
    assert info.value.kind == "provider" and info.value.retryable
    assert "a: HTTP 500" in info.value.message and "b: timed out" in info.value.message


async def test_injected_provider_is_not_closed_by_the_chain():
    mine = Tracked({URL: "t"}, name="mine")
    async with open_chain("extract", Settings(), backend=mine) as chain:
        name, _ = await chain.call(lambda n, p: p.extract([URL], OPTS))
    assert name == "mine" and mine.closed == 0 and mine.opened == 0


async def test_empty_chain_is_a_config_error():
    with pytest.raises(PipelineError) as info:
        await ProviderChain([]).call(lambda n, p: None)
    assert info.value.kind == "config"

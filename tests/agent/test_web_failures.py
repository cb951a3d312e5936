"""The kernel never raises for a provider, network or page failure — whatever a provider
throws — while cancellation and interrupts still propagate."""

import asyncio
import socket

import aiohttp
import pytest

from pipeline.agent.kernel import web_extract, web_extract_sync, web_search, web_search_sync
from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings

S = Settings(cache=False)
URLS = ["https://a.example/", "https://b.example/"]

# Everything derived from Exception becomes an error value, MemoryError and RecursionError
# included: they come from one provider call whose frames are gone by the time the kernel
# answers, and an agent loop is better served by "the provider failed" than by a crash.
FAILURES = [
    ValueError("bad value"),
    KeyError("results"),
    TypeError("'NoneType' object is not subscriptable"),
    AttributeError("no attribute 'rows'"),
    ZeroDivisionError(),
    RecursionError("maximum recursion depth exceeded"),
    MemoryError(),
    OSError("connection reset"),
    TimeoutError(),
    aiohttp.ClientConnectionError("refused"),
    aiohttp.ClientPayloadError("truncated body"),
    UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    PipelineError("provider", "vendor: rate limited", retryable=True),
    PipelineError("invalid_result", "vendor: malformed answer"),
]


class Throwing:
    """A provider whose every call raises ``error``."""

    name = "thrower"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def search(self, query, options):
        raise self.error

    async def extract(self, urls, options):
        raise self.error


class Returning:
    """A provider that answers with something that breaks the contract."""

    name = "liar"

    def __init__(self, answer):
        self.answer = answer

    async def search(self, query, options):
        return self.answer

    async def extract(self, urls, options):
        return self.answer


def _kind(error: BaseException) -> str:
    return error.kind if isinstance(error, PipelineError) else "provider"


@pytest.mark.parametrize("error", FAILURES, ids=lambda e: type(e).__name__)
async def test_search_turns_every_provider_exception_into_a_value(error):
    response = await web_search("q", backend=Throwing(error), settings=S)
    assert not response.ok and response.results == []
    assert response.error.kind == _kind(error)


@pytest.mark.parametrize("error", FAILURES, ids=lambda e: type(e).__name__)
async def test_extract_turns_every_provider_exception_into_a_value(error):
    response = await web_extract(URLS, backend=Throwing(error), settings=S)
    assert not response.ok and response.error.kind == _kind(error)
    assert [r.url for r in response.records] == URLS
    assert all(not r.ok and r.error.kind == _kind(error) for r in response.records)


@pytest.mark.parametrize("answer", [None, 42, "text", [None], {"rows": "x"}])
async def test_contract_breaking_answers_are_values(answer):
    search = await web_search("q", backend=Returning(answer), settings=S)
    extract = await web_extract(URLS, backend=Returning(answer), settings=S)
    assert not search.ok and search.error is not None
    assert not extract.ok and extract.error is not None


@pytest.mark.parametrize("error", [asyncio.CancelledError(), KeyboardInterrupt()],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("call", ["search", "extract"])
async def test_cancellation_and_interrupts_propagate(error, call):
    provider = Throwing(error)
    with pytest.raises(type(error)):
        if call == "search":
            await web_search("q", backend=provider, settings=S)
        else:
            await web_extract(URLS, backend=provider, settings=S)


@pytest.mark.parametrize("bad", [5, "example.com", "localhost", object()])
async def test_malformed_domain_filters_are_invalid_requests(bad):
    response = await web_search("q", include_domains=bad, backend=Throwing(ValueError()),
                                settings=S)
    assert not response.ok and response.error.kind == "invalid_request"


async def test_cancelling_a_running_search_cancels_it():
    started = asyncio.Event()

    class Slow:
        name = "slow"

        async def search(self, query, options):
            started.set()
            await asyncio.sleep(3600)

    task = asyncio.ensure_future(web_search("q", backend=Slow(), settings=S))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_sync_twins_inside_a_running_loop_return_values_not_errors():
    # As in Jupyter or an async agent: asyncio.run would refuse here, the twins must not.
    search = web_search_sync("q", backend=Throwing(KeyError("x")), settings=S)
    extract = web_extract_sync(URLS, backend=Throwing(OSError("down")), settings=S)
    assert not search.ok and search.error.kind == "provider"
    assert [r.url for r in extract.records] == URLS and not extract.ok


@pytest.mark.parametrize("code, retryable", [
    (socket.EAI_NONAME, False),  # the name does not exist: asking again will not help
    (socket.EAI_AGAIN, True),  # the resolver says the failure is temporary
])
async def test_a_dns_failure_is_judged_alike_in_search_and_fetch(monkeypatch, code, retryable):
    """No lookup leaves the machine: the resolver itself answers with the failure."""
    from aiohttp.resolver import ThreadedResolver

    async def failing(self, host, port=0, family=socket.AF_INET):
        raise socket.gaierror(code, "lookup failed")

    monkeypatch.setattr(ThreadedResolver, "resolve", failing)
    monkeypatch.setenv("SEARXNG_URL", "http://search.example")
    settings = Settings(cache=False, retries=0)
    found = await web_search("q", backend="searxng", settings=settings)
    read = await web_extract(["http://page.example/"], settings=settings)
    [record] = read.records
    assert not found.ok and not record.ok
    assert record.error.kind == "network" and "DNS" in record.error.message
    assert (found.error.retryable, record.error.retryable) == (retryable, retryable)

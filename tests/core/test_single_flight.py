"""The single-flight helper: one load per key among concurrent callers, one call per batch,
errors shared, a caller's cancel not cancelling the others, an abandoned load cancelled."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.core.single_flight import SingleFlight


async def test_concurrent_callers_of_a_key_share_one_load():
    flights: SingleFlight[str, int] = SingleFlight()
    release = asyncio.Event()
    calls: list[str] = []

    async def load() -> int:
        calls.append("x")
        await release.wait()
        return 7

    waiting = [asyncio.create_task(flights.run("k", load)) for _ in range(3)]
    await asyncio.sleep(0)
    assert flights.pending == 1
    release.set()
    assert await asyncio.gather(*waiting) == [7, 7, 7]
    assert calls == ["x"] and flights.pending == 0
    assert await flights.run("k", load) == 7 and calls == ["x", "x"]  # done: loaded again


async def test_a_batch_is_one_call_and_shares_keys_already_loading():
    flights: SingleFlight[str, str] = SingleFlight()
    release = asyncio.Event()
    batches: list[list[str]] = []

    async def load(keys: list[str]) -> dict[str, str]:
        batches.append(keys)
        await release.wait()
        return {key: key.upper() for key in keys}

    first = asyncio.create_task(flights.run_many(["a", "b"], load))
    await asyncio.sleep(0)
    second = asyncio.create_task(flights.run_many(["b", "c"], load))
    await asyncio.sleep(0)
    release.set()
    assert await first == {"a": "A", "b": "B"}
    assert await second == {"b": "B", "c": "C"}
    assert batches == [["a", "b"], ["c"]]


async def test_an_error_reaches_every_caller():
    flights: SingleFlight[str, int] = SingleFlight()
    release = asyncio.Event()

    async def load() -> int:
        await release.wait()
        raise ValueError("broken")

    waiting = [asyncio.create_task(flights.run("k", load)) for _ in range(2)]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert [type(r) for r in results] == [ValueError, ValueError]


async def test_one_caller_cancelling_leaves_the_load_to_the_others():
    flights: SingleFlight[str, int] = SingleFlight()
    release = asyncio.Event()

    async def load() -> int:
        await release.wait()
        return 1

    first = asyncio.create_task(flights.run("k", load))
    await asyncio.sleep(0)
    second = asyncio.create_task(flights.run("k", load))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    release.set()
    assert await second == 1


async def test_a_load_nobody_waits_for_is_cancelled():
    flights: SingleFlight[str, int] = SingleFlight()
    started, stopped = asyncio.Event(), asyncio.Event()

    async def load() -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return 1

    caller = asyncio.create_task(flights.run("k", load))
    await started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await stopped.wait()
    assert flights.pending == 0

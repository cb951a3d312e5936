"""The per-host gate: concurrency, rate, slow-downs, isolation between hosts, bounded memory."""

from __future__ import annotations

import asyncio
import math

import pytest

from pipeline.fetch.hosts import HostGate, HostThrottled


async def test_per_host_concurrency_is_bounded():
    gate = HostGate(per_host=2, rate=1000)
    active = peak = 0

    async def request() -> None:
        nonlocal active, peak
        async with gate.admit("a"):
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    await asyncio.gather(*(request() for _ in range(10)))
    assert peak == 2


async def test_slow_host_does_not_stall_other_hosts():
    gate = HostGate(per_host=1, rate=1000)
    gate.slow_down("slow", 30)
    slow = asyncio.create_task(_enter(gate, "slow"))
    await asyncio.wait_for(_enter(gate, "fast"), 1)  # admitted at once
    assert not slow.done()
    slow.cancel()


async def _enter(gate: HostGate, host: str) -> None:
    async with gate.slot(host):
        pass


async def test_slow_down_delays_that_hosts_next_request():
    gate = HostGate(per_host=4, rate=1000)
    gate.slow_down("h", 0.2)
    task = asyncio.create_task(_enter(gate, "h"))
    await asyncio.sleep(0.05)
    assert not task.done()
    await asyncio.wait_for(task, 1)


async def test_rate_limit_spaces_requests():
    gate = HostGate(per_host=10, rate=1)  # one request per second, burst of one
    await _enter(gate, "h")
    second = asyncio.create_task(_enter(gate, "h"))
    await asyncio.sleep(0.1)
    assert not second.done()
    second.cancel()


async def test_infinite_rate_means_no_rate_limit_but_crawl_delay_still_holds():
    gate = HostGate(per_host=10, rate=math.inf)
    await asyncio.wait_for(asyncio.gather(*(_enter(gate, "h") for _ in range(200))), 2)
    gate.set_interval("h", 10)  # robots.txt Crawl-delay
    await _enter(gate, "h")
    second = asyncio.create_task(_enter(gate, "h"))
    await asyncio.sleep(0.1)
    assert not second.done()
    second.cancel()


async def test_idle_hosts_are_evicted_past_the_cap():
    gate = HostGate(per_host=1, rate=1000, max_hosts=100)
    for n in range(1000):
        await _enter(gate, f"host{n}")
    assert len(gate) <= 100


async def test_busy_and_throttled_hosts_are_kept():
    gate = HostGate(per_host=1, rate=1000, max_hosts=2)
    gate.slow_down("throttled", 30)
    async with gate.slot("busy"):
        for n in range(10):
            await _enter(gate, f"other{n}")
        assert "busy" in gate and "throttled" in gate


async def test_pause_beyond_the_deadline_fails_at_once():
    gate = HostGate(per_host=1, rate=1000)
    gate.slow_down("h", 60)
    deadline = asyncio.get_running_loop().time() + 1
    with pytest.raises(HostThrottled) as info:
        async with gate.slot("h", deadline):
            pass
    assert info.value.wait > 59


async def test_a_caller_may_hold_its_deadline_while_the_host_is_paused():
    gate = HostGate(per_host=1, rate=1000)
    gate.slow_down("h", 0.2)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 0.05
    held: list[float] = []

    def hold(seconds: float) -> float:
        held.append(seconds)
        return deadline + sum(held)

    async with gate.slot("h", deadline, hold):
        assert loop.time() >= gate._entry("h").not_before  # the pause was waited out
    assert len(held) == 1 and 0 < held[0] <= 0.2
    gate.slow_down("h", 60)
    with pytest.raises(HostThrottled):  # a hold that cannot cover the pause: at once
        async with gate.slot("h", loop.time() + 1, lambda seconds: loop.time() + 1):
            pass

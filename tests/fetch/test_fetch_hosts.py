"""The per-host gate: concurrency, rate, slow-downs, isolation between hosts, bounded memory.

Every test runs on a controlled clock (looptime): the loop's time moves only when nothing
is ready to run, so schedules are exact and no test depends on the machine's load.
"""

from __future__ import annotations

import asyncio
import math

import pytest

from pipeline.fetch.hosts import HostGate, HostThrottled

pytestmark = pytest.mark.looptime


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
    loop = asyncio.get_running_loop()
    start = loop.time()
    slow = asyncio.create_task(_enter(gate, "slow"))
    await _enter(gate, "fast")
    assert loop.time() == start and not slow.done()  # admitted at once
    slow.cancel()


async def _enter(gate: HostGate, host: str) -> None:
    async with gate.slot(host):
        pass


async def _entries(gate: HostGate, host: str, count: int) -> list[float]:
    """When each of ``count`` requests started at once passes the gate, from now."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    entered: list[float] = []

    async def one() -> None:
        async with gate.slot(host):
            entered.append(loop.time() - start)

    await asyncio.gather(*(one() for _ in range(count)))
    return entered


async def test_slow_down_delays_that_hosts_next_request():
    gate = HostGate(per_host=4, rate=1000)
    gate.slow_down("h", 0.2)
    assert await _entries(gate, "h", 1) == [pytest.approx(0.2)]
    assert await _entries(gate, "other", 1) == [0]


async def test_rate_limit_spaces_requests():
    gate = HostGate(per_host=10, rate=1)  # one request per second, burst of one
    assert await _entries(gate, "h", 3) == pytest.approx([0, 1, 2])


async def test_crawl_delay_spaces_requests_to_the_host():
    gate = HostGate(per_host=10, rate=1000)
    gate.set_interval("h", 0.5)  # robots.txt Crawl-delay: 0.5
    assert await _entries(gate, "h", 3) == pytest.approx([0, 0.5, 1.0])
    assert await _entries(gate, "other", 3) == [0, 0, 0]


async def test_infinite_rate_means_no_rate_limit_but_crawl_delay_still_holds():
    gate = HostGate(per_host=10, rate=math.inf)
    assert await _entries(gate, "h", 200) == [0] * 200
    gate.set_interval("h", 10)  # robots.txt Crawl-delay
    assert await _entries(gate, "h", 2) == pytest.approx([0, 10])


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
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(HostThrottled) as info:
        async with gate.slot("h", start + 1):
            pass
    assert info.value.wait == pytest.approx(60) and loop.time() == start


async def test_a_caller_may_hold_its_deadline_while_the_host_is_paused():
    gate = HostGate(per_host=1, rate=1000)
    gate.slow_down("h", 0.2)
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = start + 0.05
    held: list[float] = []

    def hold(seconds: float) -> float:
        held.append(seconds)
        return deadline + sum(held)

    async with gate.slot("h", deadline, hold):
        assert loop.time() == pytest.approx(start + 0.2)  # the pause was waited out
    assert held == [pytest.approx(0.2)]
    gate.slow_down("h", 60)
    with pytest.raises(HostThrottled):  # a hold that cannot cover the pause: at once
        async with gate.slot("h", loop.time() + 1, lambda seconds: loop.time() + 1):
            pass

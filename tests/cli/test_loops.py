"""``--loops N``: extra event loops in child processes, against real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from pipeline import batch, cli, loops
from pipeline.engine import Summary
from pipeline.errors import PipelineError
from pipeline.loops import LoopRouter, RemoteLoop, _frame, _Frames, loop_settings
from pipeline.settings import Settings
from pipeline.workers import warm_up
from tests.cli.conftest import read_records
from tests.engine.conftest import serve

HOSTS = [f"http://host{i}.test:{8000 + i}/page" for i in range(40)]


# --- routing and shares ---------------------------------------------------------------------

def test_without_spreading_each_host_stays_with_one_loop():
    router = LoopRouter(3, spread=False)
    chosen = {url: router.choose(url) for url in HOSTS}
    assert all(router.choose(url + "/other?x=1") == loop for url, loop in chosen.items())
    assert set(chosen.values()) == {0, 1, 2}  # 40 hosts use every loop
    router.alive[1] = False
    moved = {url: router.choose(url) for url in HOSTS}
    assert 1 not in moved.values() and set(moved.values()) == {0, 2}


def test_spreading_fills_each_loop_to_its_share():
    router = LoopRouter(3, spread=True)
    for _ in range(50):
        router.busy[router.choose(HOSTS[0])] += 1
    assert router.busy == [10, 20, 20]  # the parent takes half a child's share
    router.alive[2] = False
    for _ in range(30):
        router.busy[router.choose(HOSTS[0])] += 1
    assert router.busy == [20, 40, 20]  # the dead loop gets nothing more


@given(per_host=st.integers(1, 1000), count=st.integers(1, 8),
       rate=st.floats(0.1, 1e6) | st.just(float("inf")), robots=st.booleans(),
       workers=st.integers(1, 64))
def test_the_loops_never_exceed_a_hosts_budget_together(per_host, count, rate, robots, workers):
    settings = Settings(per_host=per_host, loops=count, rate=rate, robots=robots,
                        workers=workers)
    shares = [loop_settings(settings, number) for number in range(count)]
    assert all(share.loops == 1 and share.workers >= 1 for share in shares)
    if count > 1 and loops.spreads_hosts(settings):
        assert not robots and per_host >= count * loops.SPLIT_MIN_PER_HOST
        assert sum(share.per_host for share in shares) <= per_host
        assert all(share.per_host >= 1 for share in shares)
        assert sum(share.rate for share in shares) <= rate * (1 + 1e-9)
        assert sum(share.workers for share in shares) == max(workers, count)  # ≥ 1 each
    else:  # each host belongs to one loop, which has the whole budget (and pool size)
        assert all(share.per_host == per_host and share.rate == rate
                   and share.workers == workers for share in shares)


@given(messages=st.lists(st.lists(st.tuples(st.integers(0, 10**6), st.text(max_size=30)),
                                  max_size=5), min_size=1, max_size=8),
       cuts=st.lists(st.integers(1, 50), max_size=40))
def test_frames_come_back_whole_however_the_stream_is_cut(messages, cuts):
    stream = b"".join(_frame(message) for message in messages)
    received: list = []
    frames = _Frames(received.append)
    position = 0
    for cut in cuts:
        frames.feed(stream[position:position + cut])
        position += cut
    frames.feed(stream[position:])
    assert received == messages


# --- end to end -----------------------------------------------------------------------------

def counting_site(delay: float) -> tuple[web.Application, Counter, list[int]]:
    """Text pages that record GETs per path and the most GETs in progress at once."""
    gets: Counter = Counter()
    peak = [0, 0]  # in progress, most seen

    async def page(request: web.Request) -> web.Response:
        gets[request.path] += 1
        peak[0] += 1
        peak[1] = max(peak[1], peak[0])
        try:
            await asyncio.sleep(delay)
        finally:
            peak[0] -= 1
        return web.Response(text=f"Page {request.path}. Some words.", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    return app, gets, peak


@pytest.fixture
def remote_calls(monkeypatch) -> Counter:
    """URLs extracted by each child loop, counted in the parent."""
    calls: Counter = Counter()
    real = RemoteLoop.extract

    async def counting(self, url):
        calls[self.number] += 1
        return await real(self, url)

    monkeypatch.setattr(RemoteLoop, "extract", counting)
    return calls


async def run_two_loops(urls: Path, out: Path, *flags: str) -> Summary:
    """The batch command with ``--loops 2``, in this test's event loop (``main()`` would
    start its own)."""
    args = cli.build_parser().parse_args([
        str(urls), "-o", str(out), "--loops", "2", "--workers", "1",
        "--allow-net", "127.0.0.1/32", "--no-head", *flags])
    return await batch.run_batch(args, cli.settings_from_args(args))


async def two_loops_over_pages(app: web.Application, count: int, tmp_path: Path,
                               *flags: str) -> list[dict]:
    """Serve ``app``, run the batch command with two loops over ``count`` of its pages (no
    rate limit), check the run completed with one record per line; return the records."""
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text("".join(f"{base}/p/{i}\n" for i in range(count)))
        out = tmp_path / "out.jsonl"
        summary = await run_two_loops(urls, out, *flags, "--rate", "inf")
    assert not summary.interrupted
    records = read_records(out)
    assert sorted(r["index"] for r in records) == list(range(count))
    return records


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "new interpreter"])
async def test_two_loops_share_one_host_within_its_budget(tmp_path, remote_calls, monkeypatch,
                                                          forked):
    monkeypatch.setattr(loops, "FORK_CHILDREN", forked)
    app, gets, peak = counting_site(delay=0.05)
    async with serve(app) as base:
        lines = [f"{base}/p/{i}" for i in range(120)] + [f"{base}/p/3", "not a url", ""]
        urls = tmp_path / "urls.txt"
        urls.write_text("\n".join(lines) + "\n")
        out = tmp_path / "out.jsonl"
        summary = await run_two_loops(urls, out, "--concurrency", "64", "--per-host", "16",
                                      "--rate", "inf")
    assert not summary.interrupted
    records = read_records(out)
    assert sorted(r["index"] for r in records) == list(range(122))  # one record per line
    by_index = {r["index"]: r for r in records}
    assert all(by_index[i]["content"] == f"Page /p/{i}. Some words." for i in range(120))
    assert by_index[120]["content"] == by_index[3]["content"]
    assert by_index[121]["error"]["kind"] == "invalid_url"
    assert all(count == 1 for count in gets.values()) and len(gets) == 120  # fetched once
    assert 0 < remote_calls[1] < 120  # both loops worked
    assert peak[1] <= 16  # the two loops together kept to --per-host


async def test_each_host_keeps_to_one_loop_with_a_small_budget(tmp_path, remote_calls):
    sites = [counting_site(delay=0.02) for _ in range(4)]
    async with serve(sites[0][0]) as a, serve(sites[1][0]) as b, \
            serve(sites[2][0]) as c, serve(sites[3][0]) as d:
        urls = tmp_path / "urls.txt"
        urls.write_text("".join(f"{base}/p/{i}\n" for i in range(15) for base in (a, b, c, d)))
        out = tmp_path / "out.jsonl"
        summary = await run_two_loops(urls, out, "--ordered", "--per-host", "2",
                                      "--rate", "1000")
    assert not summary.interrupted
    records = read_records(out)
    assert [r["index"] for r in records] == list(range(60))
    assert all(r["ok"] for r in records)
    assert all(peak[1] <= 2 for _, _, peak in sites)  # --per-host held for every host
    router = LoopRouter(2, spread=False)
    expected = sum(15 for base in (a, b, c, d) if router.choose(f"{base}/p/0") == 1)
    assert remote_calls[1] == expected  # exactly the child's hosts went to the child


ARTICLE = ("<!doctype html><html><head><title>A page</title></head><body><article>"
           + "<p>The quick brown fox jumps over the lazy dog near the river bank.</p>" * 8
           + "</article></body></html>")


async def test_a_forked_loop_starts_its_own_workers_beside_the_parents_forkserver(
        tmp_path, remote_calls):
    # The command line starts the parent's forkserver before it forks the loops: a child
    # cannot use that server (it is not the child's child), so it must start its own.
    warm_up(())

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    records = await two_loops_over_pages(app, 40, tmp_path, "--concurrency", "16",
                                         "--per-host", "16")
    assert all(r["ok"] and "quick brown fox" in r["content"] for r in records)
    assert remote_calls[1] > 0  # the child loop handled pages, in its own workers


async def test_a_child_loop_that_dies_costs_only_its_urls_in_flight(tmp_path, monkeypatch):
    real = RemoteLoop.extract
    sent = Counter()

    async def killing(self, url):
        sent[self.number] += 1
        if sent[self.number] == 10:
            os.kill(self._child.pid, signal.SIGKILL)
        return await real(self, url)

    monkeypatch.setattr(RemoteLoop, "extract", killing)
    app, _, _ = counting_site(delay=0.2)
    records = await two_loops_over_pages(app, 80, tmp_path, "--concurrency", "32",
                                         "--per-host", "32")
    failed = [r for r in records if not r["ok"]]
    assert failed and all(r["error"]["kind"] == "extract"
                          and "loop 1 stopped" in r["error"]["message"] for r in failed)
    assert len(failed) <= sent[1] and sent[1] < 80  # later URLs went to the parent's loop
    assert sum(r["ok"] for r in records) >= 80 - sent[1]


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "new interpreter"])
async def test_a_child_loop_that_cannot_start_is_a_config_error(tmp_path, monkeypatch, forked):
    monkeypatch.setattr(loops, "FORK_CHILDREN", forked)
    if forked:
        monkeypatch.setattr(loops, "child_main", lambda requests, records: os._exit(3))
    else:
        monkeypatch.setattr(loops._Child, "command", "raise SystemExit(3)")
    monkeypatch.setattr(LoopRouter, "choose", lambda self, url: 1)  # the host is the child's
    app, _, _ = counting_site(delay=0.0)
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text("".join(f"{base}/p/{i}\n" for i in range(20)))
        out = tmp_path / "out.jsonl"
        with pytest.raises(PipelineError, match="extraction loop 1 could not start") as caught:
            await run_two_loops(urls, out)
    assert caught.value.kind == "config"  # main() turns it into exit status 2
    assert read_records(out) == []  # nothing recorded as done: all left for a re-run


async def test_no_process_to_be_had_is_a_config_error(tmp_path, monkeypatch):
    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(loops, "FORK_CHILDREN", True)
    monkeypatch.setattr(loops.os, "fork", no_fork)
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:9/p\n")
    with pytest.raises(PipelineError, match="cannot start extraction loop 1: Resource") as caught:
        await run_two_loops(urls, tmp_path / "out.jsonl")
    assert caught.value.kind == "config"

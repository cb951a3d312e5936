"""What a killed main process leaves behind: its children notice, stop and exit without a
word, and the next run cleans up after them. The stderr pipe is held by every descendant, so
its end of file means they all exited."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from pipeline.batch.shards.plan import shard_of
from tests.batch.shards.test_sharded import lines_in, merged, write_urls
from tests.cli.test_end_to_end import run_cli, start_cli
from tests.support.pages import serve
from tests.support.records import read_records

LOOPBACK = ["--allow-net", "127.0.0.1/32", "--rate", "1000", "--no-head", "--workers", "1",
            "--timeout", "600", "--quiet"]
PAGE = "<html><body>" + "<p>Some words in a paragraph of the page.</p>" * 200 + "</body></html>"
QUICK = 3  # pages per host answered at once; the others wait for ``release``


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc), to clean up after a failing test."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, of in parents.items() if of == parent]
        found += children
        frontier += children
    return found


@contextlib.asynccontextmanager
async def hosts(count: int, release: asyncio.Event,
                shards: int = 1) -> AsyncIterator[list[str]]:
    """At least ``count`` HTML sites on 127.0.0.1, and as many more as it takes for every
    one of ``shards`` shards to have one: /p/0../p/QUICK-1 answer at once, the rest once
    ``release`` is set."""
    async def page(request: web.Request) -> web.Response:
        if int(request.match_info["n"]) >= QUICK:
            await release.wait()
        return web.Response(text=PAGE, content_type="text/html")

    async with contextlib.AsyncExitStack() as stack:
        bases: list[str] = []
        while len(bases) < count or {shard_of(base, shards) for base in bases} != set(
                range(shards)):
            app = web.Application()
            app.router.add_get("/p/{n}", page)
            bases.append(await stack.enter_async_context(serve(app)))
        yield bases


async def wait_for_lines(paths: list[Path], count: int) -> None:
    for _ in range(1200):
        if lines_in(paths) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{paths} never reached {count} lines")


async def kill_and_collect(proc: asyncio.subprocess.Process) -> bytes:
    """SIGKILL ``proc`` alone; its stderr once every descendant has closed it (at most 60 s,
    then the leftovers are killed and the test fails)."""
    left = descendants(proc.pid)
    proc.kill()
    try:
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    except TimeoutError:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise AssertionError("children of the killed process kept running") from None
    return stderr


async def test_the_handler_pool_of_a_killed_run_exits_quietly(tmp_path):
    release = asyncio.Event()
    async with hosts(1, release) as [base]:
        urls = write_urls(tmp_path / "urls.txt", [f"{base}/p/{n}" for n in range(40)])
        out = tmp_path / "out.jsonl"
        proc = await start_cli(str(urls), "-o", str(out), *LOOPBACK)
        await wait_for_lines([out], QUICK)  # the pool has handled pages: it is running
        stderr = await kill_and_collect(proc)
        release.set()
    assert stderr == b""
    assert len(read_records(out)) >= QUICK


@dataclass
class ShardedRun:
    """A ``--processes 2`` run under way over 4 hosts × 20 pages (its quick pages written)."""

    proc: asyncio.subprocess.Process
    urls: Path
    flags: list[str]
    out: Path
    partials: list[Path]
    release: asyncio.Event
    pages: int


@contextlib.asynccontextmanager
async def sharded_run(tmp_path: Path) -> AsyncIterator[ShardedRun]:
    release = asyncio.Event()
    async with hosts(4, release, shards=2) as bases:
        urls = write_urls(tmp_path / "urls.txt",
                          [f"{base}/p/{n}" for n in range(20) for base in bases])
        out = tmp_path / "out"
        flags = ["-o", str(out), "--processes", "2", *LOOPBACK]
        proc = await start_cli(str(urls), *flags)
        partials = [out / f"part-{k:05d}-of-00002.jsonl.partial" for k in (0, 1)]
        await wait_for_lines(partials, QUICK * len(bases))
        yield ShardedRun(proc, urls, flags, out, partials, release, 20 * len(bases))


async def test_shards_left_by_a_killed_driver_stop_quietly_and_resume_cleans_up(tmp_path):
    async with sharded_run(tmp_path) as run:
        proc, urls, flags, out, release = run.proc, run.urls, run.flags, run.out, run.release
        stderr = await kill_and_collect(proc)
        assert stderr == b""
        assert any(out.glob(".items-*"))  # the killed driver's spool
        release.set()
        code, stderr_text = await run_cli(str(urls), *flags, "--resume")
    assert code == 0, stderr_text
    assert [r["index"] for r in merged(out, tmp_path)] == list(range(run.pages))
    assert not any(out.glob(".items-*"))  # cleaned by the next run


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


async def test_shards_die_with_a_killed_driver_and_a_resume_waits_for_old_writers(tmp_path):
    """After ``kill -9`` of the driver no shard process writes another record (the pages
    they wait for are answered only once the driver is gone); a resume refuses, in one line,
    while a shard's lock is held, and then gives every record once."""
    async with sharded_run(tmp_path) as run:
        proc, urls, flags, out, release = run.proc, run.urls, run.flags, run.out, run.release
        partials = run.partials
        left = descendants(proc.pid)
        proc.kill()
        while alive(proc.pid):  # not proc.wait(): that waits for its pipes, held by them all
            await asyncio.sleep(0.01)
        release.set()  # what a surviving shard would now extract and write
        for _ in range(600):
            if not any(alive(pid) for pid in left):
                break
            await asyncio.sleep(0.1)
        survivors = [pid for pid in left if alive(pid)]
        for pid in survivors:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert survivors == []
        await proc.wait()
        written = [r["url"] for path in partials if path.exists() for r in read_records(path)]
        assert all(int(url.rsplit("/", 1)[1]) < QUICK for url in written), written
        with open(out / ".part-00000-of-00002.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a writer still running
            code, stderr_text = await run_cli(str(urls), *flags, "--resume")
        assert code == 2 and len(stderr_text.strip().splitlines()) == 1, stderr_text
        assert "still being written by another process" in stderr_text
        code, stderr_text = await run_cli(str(urls), *flags, "--resume")
    assert code == 0, stderr_text
    assert [r["index"] for r in merged(out, tmp_path)] == list(range(run.pages))

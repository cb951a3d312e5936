"""Handler runners: failures of any kind become 'extract' errors and the pool recovers."""

from __future__ import annotations

import asyncio
import importlib.machinery
import multiprocessing
import os
import sys
import types

import pytest

from handlers import HandlerContext, registry_for
from handlers.text import INLINE_MAX_BYTES, LIGHT_MAX_BYTES
from pipeline.errors import PipelineError
from pipeline.workers import InlineRunner, ProcessRunner, _Worker, worker_context
from tests.engine.faulty_handlers import SPECS

CTX = HandlerContext(url="http://example.test/", media_type="text/plain")


@pytest.fixture(scope="module")
def registry():
    return registry_for(SPECS)


@pytest.mark.parametrize("start_method", [None, "spawn"])  # the default, and the fallback
async def test_process_pool_survives_every_kind_of_failure(registry, start_method):
    echo = registry.get("echo")
    async with ProcessRunner(2, timeout=2.0, specs=SPECS, start_method=start_method) as runner:
        for name in ("crash", "die", "segfault", "memory"):
            with pytest.raises(PipelineError) as caught:
                await runner.run(registry.get(name), b"x", CTX)
            assert caught.value.kind == "extract", name
        # Every worker that died was replaced: the pool still answers, on both workers.
        documents = await asyncio.gather(*(runner.run(echo, b"still here", CTX) for _ in range(4)))
        assert [d.content for d in documents] == ["still here"] * 4


async def test_hanging_handler_is_killed_and_others_in_flight_are_kept(registry):
    async with ProcessRunner(2, timeout=1.0, specs=SPECS) as runner:
        hung = asyncio.ensure_future(runner.run(registry.get("hang"), b"60", CTX))
        slow = asyncio.ensure_future(runner.run(registry.get("slow"), b"kept", CTX))
        assert (await slow).content == "kept"
        with pytest.raises(PipelineError, match="longer than 1s") as caught:
            await hung
        assert caught.value.kind == "extract"
        after = await runner.run(registry.get("echo"), b"fresh worker", CTX)
        assert after.content == "fresh worker"


async def test_dying_worker_does_not_lose_other_documents(registry):
    async with ProcessRunner(2, timeout=5.0, specs=SPECS) as runner:
        slow = asyncio.ensure_future(runner.run(registry.get("slow"), b"survivor", CTX))
        with pytest.raises(PipelineError, match="died") as caught:
            await runner.run(registry.get("die"), b"", CTX)
        assert caught.value.kind == "extract"
        assert (await slow).content == "survivor"


async def test_handler_errors_keep_their_kind_across_processes(registry):
    async with ProcessRunner(1, timeout=5.0) as runner:
        with pytest.raises(PipelineError) as caught:
            await runner.run(registry.get("json"), b"{not json", CTX)
    assert caught.value.kind == "decode"


async def test_inline_runner_maps_failures_and_time_limit(registry):
    runner = InlineRunner(timeout=0.2)
    with pytest.raises(PipelineError) as caught:
        await runner.run(registry.get("crash"), b"x", CTX)
    assert caught.value.kind == "extract" and "ValueError" in caught.value.message
    with pytest.raises(PipelineError, match="longer than") as caught:
        await runner.run(registry.get("hang"), b"0.5", CTX)
    assert caught.value.kind == "extract"
    assert (await runner.run(registry.get("text"), b"ok", CTX)).content == "ok"


async def test_a_cancelled_job_does_not_shrink_the_pool_or_mix_up_replies(registry):
    async with ProcessRunner(1, timeout=5.0, specs=SPECS) as runner:
        slow = asyncio.ensure_future(runner.run(registry.get("hang"), b"2", CTX))
        await asyncio.sleep(0.2)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        document = await runner.run(registry.get("echo"), b"next job", CTX)
        assert document.content == "next job"


async def test_workers_that_cannot_load_their_handlers_are_a_config_error(registry):
    runner = ProcessRunner(1, timeout=5.0)
    runner.specs = ("tests.engine.faulty_handlers:no_such_handler",)  # only the worker fails
    async with runner:  # starting happens in the background
        with pytest.raises(PipelineError) as caught:
            await runner.started()
        assert caught.value.kind == "config" and "no_such_handler" in caught.value.message
        with pytest.raises(PipelineError) as again:
            await runner.run(registry.get("echo"), b"body", CTX)
        assert again.value.kind == "config"


async def test_a_handler_the_workers_do_not_know_travels_pickled():
    from tests.engine.faulty_handlers import upper

    async with ProcessRunner(1, timeout=5.0) as runner:
        assert (await runner.run(upper, b"shout", CTX)).content == "SHOUT"


async def test_only_bodies_the_handler_calls_cheap_are_handled_inline(registry):
    cheap_echo = registry.get("cheap_echo")
    async with ProcessRunner(1, timeout=5.0, specs=SPECS) as runner:
        inline = await runner.run(cheap_echo, b"small", CTX)
        costly = await runner.run(cheap_echo, b"costly", CTX)
        faulty_estimate = await runner.run(cheap_echo, b"bad", CTX)
        plain = await runner.run(registry.get("echo"), b"no estimate", CTX)
    assert inline.metadata["pid"] == os.getpid()
    assert {costly.metadata["pid"], faulty_estimate.metadata["pid"],
            plain.metadata["pid"]}.isdisjoint({os.getpid()})


@pytest.fixture
def starts(monkeypatch) -> list[int]:
    """One entry per worker process started."""
    started: list[int] = []
    real_start = _Worker.start

    async def counted_start(self):
        started.append(1)
        await real_start(self)

    monkeypatch.setattr(_Worker, "start", counted_start)
    return started


async def test_workers_start_with_the_first_job_that_needs_one(registry, starts):
    """A run of cheap bodies (say, small plain-text pages) never pays for a pool start."""
    cheap_echo = registry.get("cheap_echo")
    async with ProcessRunner(2, timeout=5.0, specs=SPECS) as runner:
        for _ in range(3):
            assert (await runner.run(cheap_echo, b"small", CTX)).content == "small"
        assert starts == []
        costly = await runner.run(cheap_echo, b"costly", CTX)
        assert costly.metadata["pid"] != os.getpid()
        assert starts == [1, 1]  # the whole pool, once
        await runner.run(registry.get("echo"), b"again", CTX)
        assert starts == [1, 1]


async def test_a_pool_start_that_fails_is_reported_to_its_listener(registry):
    failures: list[PipelineError] = []
    runner = ProcessRunner(1, timeout=5.0, on_start_failure=failures.append)
    runner.specs = ("tests.engine.faulty_handlers:no_such_handler",)  # only the worker fails
    async with runner:
        assert failures == []  # nothing needed a worker yet
        with pytest.raises(PipelineError):
            await runner.run(registry.get("echo"), b"body", CTX)
    assert [f.kind for f in failures] == ["config"]
    assert "no_such_handler" in failures[0].message


def test_the_text_handler_is_cheap_only_for_small_utf8_bodies(registry):
    text = registry.get("text")
    assert text.cheap(b"plain words\n" * 100, CTX)
    assert not text.cheap(b"x" * (INLINE_MAX_BYTES + 1), CTX)
    assert not text.cheap("Caf\xe9".encode("latin-1"), CTX)  # would need charset detection
    assert text.light(b"x" * (INLINE_MAX_BYTES + 1), CTX)
    assert not text.light(b"x" * (LIGHT_MAX_BYTES + 1), CTX)
    assert not text.light("Caf\xe9".encode("latin-1") * 100, CTX)


async def test_light_bodies_run_inline_until_their_cost_would_pay_for_a_pool(registry, starts):
    """Rent before buying: a few larger text bodies do not start the pool; once inline work
    has cost ``rent_seconds``, the pool starts and takes the rest."""
    slow = registry.get("slow_light")  # light bodies; handle() takes ~30 ms
    async with ProcessRunner(1, timeout=5.0, specs=SPECS, rent_seconds=0.1) as runner:
        inline = 0
        while not starts:
            document = await runner.run(slow, b"light", CTX)
            inline += document.metadata["pid"] == os.getpid()
            assert inline <= 4  # each takes 30 ms at least: 0.1 s of rent is spent by then
        assert inline >= 1 and starts == [1]
        assert document.metadata["pid"] != os.getpid()  # the body past the rent went out
        again = await runner.run(slow, b"light", CTX)
        assert again.metadata["pid"] != os.getpid() and starts == [1]
        heavy = await runner.run(registry.get("echo"), b"not light", CTX)
        assert heavy.metadata["pid"] != os.getpid()


@pytest.mark.parametrize("arena_bytes", [0, 4 * 1024, 256 * 1024])
async def test_bodies_and_replies_cross_whatever_the_arena_holds(registry, arena_bytes):
    """0: no arena (pipe only); 4 KB: small jobs in the arena, large ones and large replies
    through the pipe; 256 KB: everything up to it in the arena (replies past 16 KB too)."""
    echo = registry.get("echo")
    sizes = [0, 100, 4 * 1024, 20 * 1024, 300 * 1024]
    async with ProcessRunner(1, timeout=10.0, specs=SPECS, arena_bytes=arena_bytes) as runner:
        for size in sizes:
            body = ("é" * size).encode()  # 2 bytes a character
            document = await runner.run(echo, body, CTX)
            assert document.content == body.decode()
        # a job after a crash gets a fresh worker with a fresh arena
        with pytest.raises(PipelineError):
            await runner.run(registry.get("die"), b"x", CTX)
        assert (await runner.run(echo, b"y" * 1000, CTX)).content == "y" * 1000


def test_an_arena_leaves_no_file_and_is_shared_through_its_handle(tmp_path, monkeypatch):
    from pipeline import arena

    monkeypatch.setattr(arena, "_SHM_DIR", tmp_path)
    made = arena.Arena.create(64 * 1024)
    try:
        assert list(tmp_path.iterdir()) == []  # unlinked at once: nothing to leak
        handle = made.handle()
        twin = arena.Arena.attach(arena.ArenaHandle(os.dup(handle.fd), handle.size))
        made.put(b"shared bytes")
        assert twin.take(12) == b"shared bytes"
        twin.close()
    finally:
        made.close()


async def test_no_shared_memory_means_the_pipe(registry, monkeypatch, tmp_path):
    import errno

    from pipeline import arena

    def full(fd, offset, length):  # a full /dev/shm: refused up front, never a SIGBUS later
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(arena.os, "posix_fallocate", full, raising=False)
    monkeypatch.setattr(arena, "_SHM_DIR", tmp_path)
    with pytest.raises(OSError):
        arena.Arena.create(1024)
    assert list(tmp_path.iterdir()) == []  # the half-made file is gone
    async with ProcessRunner(1, timeout=10.0, specs=SPECS) as runner:
        document = await runner.run(registry.get("echo"), b"z" * 100_000, CTX)
    assert document.content == "z" * 100_000


async def test_workers_cut_content_to_the_calls_budget_as_truncate_would(registry):
    from dataclasses import replace

    from pipeline.truncate import truncate
    from pipeline.workers import CutDocument

    text = "First paragraph, short.\n\n" + "A sentence goes on. " * 40 + "\n\nTail words here."
    echo = registry.get("echo")
    async with ProcessRunner(1, timeout=10.0, specs=SPECS) as runner:
        for budget in (30, 200, 10_000):
            ctx = replace(CTX, options={"max_chars": budget})
            document = await runner.run(echo, text.encode(), ctx)
            expected = truncate(text, budget)
            assert isinstance(document, CutDocument)
            assert (document.content, document.truncated, document.next_offset) == expected
        blank = await runner.run(echo, b" \n\t ", replace(CTX, options={"max_chars": 2}))
        assert not isinstance(blank, CutDocument) and blank.content == " \n\t "


async def test_giving_up_a_queued_job_spares_the_running_one_and_the_worker(registry):
    async with ProcessRunner(1, timeout=5.0, specs=SPECS) as runner:
        await runner.started()
        slow = asyncio.ensure_future(runner.run(registry.get("slow"), b"first", CTX))
        await asyncio.sleep(0.05)  # the one worker is busy with it
        queued = asyncio.ensure_future(runner.run(registry.get("echo"), b"never", CTX))
        await asyncio.sleep(0)
        queued.cancel()
        after = asyncio.ensure_future(runner.run(registry.get("echo"), b"after", CTX))
        assert (await slow).content == "first"  # not disturbed by the cancellation
        document = await after
        assert document.content == "after"
        first_pid = document.metadata["pid"]
        assert (await runner.run(registry.get("echo"), b"x", CTX)).metadata["pid"] == first_pid
    assert queued.cancelled()


def test_workers_fork_from_a_server_that_preloads_their_handlers(monkeypatch):
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    preloaded: list[list[str]] = []
    context = worker_context(SPECS)
    monkeypatch.setattr(type(context), "set_forkserver_preload",
                        lambda self, modules: preloaded.append(modules))
    assert worker_context(SPECS).get_start_method() == "forkserver"
    assert {"pipeline.workers", "handlers.html", "tests.engine.faulty_handlers"} <= set(
        preloaded[0])
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["fork", "spawn"])
    assert worker_context(SPECS).get_start_method() == "spawn"


def _preloaded_with_main(monkeypatch, main: types.ModuleType) -> set[str]:
    preloaded: list[list[str]] = []
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(type(multiprocessing.get_context("forkserver")), "set_forkserver_preload",
                        lambda self, modules: preloaded.append(modules))
    worker_context(SPECS)
    return set(preloaded[0])


def _main_module(spec_name: str | None, file: str | None = None) -> types.ModuleType:
    main = types.ModuleType("__main__")
    main.__spec__ = importlib.machinery.ModuleSpec(spec_name, None) if spec_name else None
    if file is not None:
        main.__file__ = file
    return main


def test_the_forkserver_preloads_a_main_module_only_when_workers_re_run_it(monkeypatch):
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    # python -m pipeline: multiprocessing never re-runs a package's __main__ in a worker, so
    # preloading it would only import the whole CLI into the forkserver.
    assert not {"pipeline.__main__", "pipeline.cli"} & _preloaded_with_main(
        monkeypatch, _main_module("pipeline.__main__"))
    # python -m some_tool: re-run as __mp_main__ in each worker, so preloaded.
    assert "some_tool" in _preloaded_with_main(monkeypatch, _main_module("some_tool"))
    # The console script (a file, no spec) re-runs in each worker and imports the CLI.
    monkeypatch.setitem(sys.modules, "pipeline.cli", types.ModuleType("pipeline.cli"))
    assert "pipeline.cli" in _preloaded_with_main(
        monkeypatch, _main_module(None, "/venv/bin/extract-pipeline"))
    monkeypatch.delitem(sys.modules, "pipeline.cli")
    assert "pipeline.cli" not in _preloaded_with_main(
        monkeypatch, _main_module(None, "/venv/bin/some-script"))


@pytest.mark.parametrize(("failing", "body"), [("hang", b"60"), ("die", b"")])
async def test_the_job_waiting_behind_a_failed_one_runs_again_instead_of_failing(
        registry, failing, body):
    echo = registry.get("echo")
    async with ProcessRunner(1, timeout=1.0, specs=SPECS) as runner:
        first_pid = (await runner.run(echo, b"warm", CTX)).metadata["pid"]
        doomed = asyncio.ensure_future(runner.run(registry.get(failing), body, CTX))
        behind = asyncio.ensure_future(runner.run(echo, b"behind", CTX))
        await asyncio.sleep(0)
        assert len(runner._workers[0].jobs) == 2  # sent behind it, into the same worker
        with pytest.raises(PipelineError) as caught:
            await doomed
        assert caught.value.kind == "extract"
        document = await behind
        assert document.content == "behind"
        assert document.metadata["pid"] != first_pid  # on the replacement worker


async def test_a_body_too_big_for_an_arena_slot_waits_for_an_idle_worker(registry):
    """It would travel through the pipe, which a busy worker does not read: sending it then
    would block the event loop until the running job ends."""
    big = b"b" * (64 * 1024)
    async with ProcessRunner(1, timeout=10.0, specs=SPECS, arena_bytes=64 * 1024) as runner:
        await runner.started()
        slow = asyncio.ensure_future(runner.run(registry.get("slow"), b"first", CTX))
        await asyncio.sleep(0.05)
        queued = asyncio.ensure_future(runner.run(registry.get("echo"), big, CTX))
        small = asyncio.ensure_future(runner.run(registry.get("echo"), b"small", CTX))
        await asyncio.sleep(0.05)
        assert len(runner._workers[0].jobs) == 1  # the big one waits in the pool's queue
        assert (await slow).content == "first"
        assert (await queued).content == big.decode()
        assert (await small).content == "small"  # behind it, in order


async def test_a_worker_that_cannot_be_restarted_fails_waiting_jobs_instead_of_hanging(
        registry, monkeypatch):
    async with ProcessRunner(1, timeout=5.0, specs=SPECS) as runner:
        await runner.started()

        async def refuse(self):
            raise PipelineError("config", "cannot start a handler worker: test")

        monkeypatch.setattr(_Worker, "start", refuse)
        doomed = asyncio.ensure_future(runner.run(registry.get("die"), b"", CTX))
        waiting = [asyncio.ensure_future(runner.run(registry.get("echo"), b"x", CTX))
                   for _ in range(3)]
        results = await asyncio.wait_for(
            asyncio.gather(doomed, *waiting, return_exceptions=True), timeout=30)
    assert all(isinstance(r, PipelineError) and r.kind == "extract" for r in results)
    assert sum("cannot start" in r.message for r in results) >= 2

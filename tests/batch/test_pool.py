"""Handler runners: failures of any kind become 'extract' errors and the pool goes on."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from handlers import HandlerContext, handles_inline, registry_for
from handlers.text import INLINE_MAX_BYTES
from pipeline.batch.pool import ProcessRunner, worker_context
from pipeline.core.errors import PipelineError
from pipeline.core.truncate import truncate
from pipeline.extract.runners import CutDocument, InlineRunner
from tests.support.faulty_handlers import SPECS, slow_start

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
    # "slow" takes 0.3 s: the 3 s limit leaves it room on a busy machine too
    async with ProcessRunner(2, timeout=3.0, specs=SPECS) as runner:
        hung = asyncio.ensure_future(runner.run(registry.get("hang"), b"60", CTX))
        slow = asyncio.ensure_future(runner.run(registry.get("slow"), b"kept", CTX))
        assert (await slow).content == "kept"
        with pytest.raises(PipelineError, match="longer than 3s") as caught:
            await hung
        assert caught.value.kind == "extract"
        after = await runner.run(registry.get("echo"), b"fresh worker", CTX)
        assert after.content == "fresh worker"


async def test_a_workers_start_up_is_not_charged_to_its_first_document(registry):
    # the language model loads as a worker starts; a 3 s start-up against a 1 s limit
    async with ProcessRunner(1, timeout=1.0, specs=SPECS, warm_up=slow_start) as runner:
        document = await runner.run(registry.get("echo"), b"first", CTX)
    assert document.content == "first"


async def test_dying_worker_does_not_lose_other_documents(registry):
    async with ProcessRunner(2, timeout=5.0, specs=SPECS) as runner:
        slow = asyncio.ensure_future(runner.run(registry.get("slow"), b"survivor", CTX))
        with pytest.raises(PipelineError, match="died") as caught:
            await runner.run(registry.get("die"), b"", CTX)
        assert caught.value.kind == "extract"
        assert (await slow).content == "survivor"


# The limit kills the hang; the documents behind it need room in the fresh worker on a busy
# machine too (the "die" case needs no limit at all).
@pytest.mark.parametrize(("failing", "body", "limit"), [("hang", b"60", 5.0), ("die", b"", 60.0)])
async def test_documents_queued_behind_a_failed_one_still_run(registry, failing, body, limit):
    echo = registry.get("echo")
    async with ProcessRunner(1, timeout=limit, specs=SPECS) as runner:
        first_pid = (await runner.run(echo, b"warm", CTX)).metadata["pid"]
        doomed = asyncio.ensure_future(runner.run(registry.get(failing), body, CTX))
        behind = [asyncio.ensure_future(runner.run(echo, b"behind", CTX)) for _ in range(3)]
        with pytest.raises(PipelineError) as caught:
            await doomed
        assert caught.value.kind == "extract"
        documents = await asyncio.gather(*behind)
    assert [d.content for d in documents] == ["behind"] * 3
    assert first_pid not in {d.metadata["pid"] for d in documents}  # the replacement ran them


class BreaksOnce:
    """A running pebble pool whose next ``breaks`` jobs fail the way pebble fails every queued
    job when a worker dies before acknowledging its own (a race only load makes likely)."""

    def __init__(self, pool, breaks: int) -> None:
        self.pool, self.breaks, self.scheduled = pool, breaks, 0

    @property
    def active(self) -> bool:
        return self.pool.active

    def schedule(self, function, args, timeout):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        self.scheduled += 1
        if self.breaks:
            self.breaks -= 1
            broken: Future = Future()
            broken.set_exception(BrokenProcessPool("All workers expired"))
            return broken
        return self.pool.schedule(function, args=args, timeout=timeout)

    def stop(self) -> None:
        self.pool.stop()

    def join(self) -> None:
        self.pool.join()


@pytest.mark.parametrize(("breaks", "outcome"), [(1, "ok"), (2, "every worker died at once")])
async def test_a_job_aborted_with_a_broken_pool_gets_one_second_try(registry, breaks, outcome):
    pools: list[BreaksOnce] = []

    class Breaking(ProcessRunner):
        def _new_pool(self):
            pools.append(BreaksOnce(super()._new_pool(), breaks))
            return pools[-1]

    async with Breaking(1, timeout=60.0, specs=SPECS) as runner:
        try:
            result = (await runner.run(registry.get("echo"), b"ok", CTX)).content
        except PipelineError as exc:
            assert exc.kind == "extract"
            result = exc.message
    assert outcome in result
    assert [pool.scheduled for pool in pools] == [2]  # the first try and one more, no third


async def test_handler_errors_keep_their_kind_across_processes(registry):
    async with ProcessRunner(1, timeout=5.0) as runner:
        with pytest.raises(PipelineError) as caught:
            await runner.run(registry.get("json"), b"{not json", CTX)
    assert caught.value.kind == "decode"


async def test_inline_runner_maps_failures_and_time_limit(registry):
    runner = InlineRunner(timeout=0.2)
    with pytest.raises(PipelineError, match="longer than") as caught:
        await runner.run(registry.get("hang"), b"1.2", CTX)  # 1 s past the limit
    assert caught.value.kind == "extract"
    roomy = InlineRunner(timeout=60)  # what is not about the limit gets room on a busy machine
    with pytest.raises(PipelineError) as caught:
        await roomy.run(registry.get("crash"), b"x", CTX)
    assert caught.value.kind == "extract" and "ValueError" in caught.value.message
    assert (await roomy.run(registry.get("text"), b"ok", CTX)).content == "ok"


async def test_a_cancelled_job_does_not_shrink_the_pool_or_mix_up_replies(registry):
    # The job hangs far past any stall of a busy machine: it is still running when cancelled.
    async with ProcessRunner(1, timeout=60.0, specs=SPECS) as runner:
        slow = asyncio.ensure_future(runner.run(registry.get("hang"), b"60", CTX))
        await asyncio.sleep(0.2)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        document = await runner.run(registry.get("echo"), b"next job", CTX)
        assert document.content == "next job"


async def test_workers_that_cannot_load_their_handlers_are_a_config_error(registry):
    failures: list[PipelineError] = []
    runner = ProcessRunner(1, timeout=5.0, on_start_failure=failures.append)
    runner.specs = ("tests.support.faulty_handlers:no_such_handler",)  # only the worker fails
    async with runner:
        assert failures == []  # nothing needed a worker yet
        with pytest.raises(PipelineError) as caught:
            await runner.run(registry.get("echo"), b"body", CTX)
        assert caught.value.kind == "config" and "no_such_handler" in caught.value.message
        with pytest.raises(PipelineError) as again:
            await runner.started()
        assert again.value.kind == "config"
    assert [f.kind for f in failures] == ["config"]  # told once


async def test_a_handler_the_workers_do_not_know_travels_pickled():
    from tests.support.faulty_handlers import upper

    async with ProcessRunner(1, timeout=5.0) as runner:
        assert (await runner.run(upper, b"shout", CTX)).content == "SHOUT"


async def test_only_bodies_an_inline_handler_declares_are_handled_inline(registry):
    inline_echo = registry.get("inline_echo")
    async with ProcessRunner(1, timeout=5.0, specs=SPECS) as runner:
        inline = await runner.run(inline_echo, b"small", CTX)
        assert runner._pool is None  # inline bodies never start the pool
        costly = await runner.run(inline_echo, b"costly", CTX)
        faulty_estimate = await runner.run(inline_echo, b"bad", CTX)
        plain = await runner.run(registry.get("echo"), b"no inline declared", CTX)
    assert inline.metadata["pid"] == os.getpid()
    assert {costly.metadata["pid"], faulty_estimate.metadata["pid"],
            plain.metadata["pid"]}.isdisjoint({os.getpid()})


def test_the_text_handler_is_inline_only_for_small_utf8_bodies(registry):
    text = registry.get("text")
    assert handles_inline(text, b"plain words\n" * 100, CTX)
    assert not handles_inline(text, b"x" * (INLINE_MAX_BYTES + 1), CTX)
    assert not handles_inline(text, "Caf\xe9".encode("latin-1"), CTX)  # charset detection
    assert not handles_inline(registry.get("html"), b"<p>hi</p>", CTX)  # declares nothing


async def test_workers_cut_content_to_the_calls_budget_as_truncate_would(registry):
    text = "First paragraph, short.\n\n" + "A sentence goes on. " * 40 + "\n\nTail words here."
    echo = registry.get("echo")
    async with ProcessRunner(1, timeout=10.0, specs=SPECS) as runner:
        for budget in (30, 200, 10_000):
            ctx = replace(CTX, options={"max_chars": budget})
            document = await runner.run(echo, text.encode(), ctx)
            expected = truncate(text, budget)
            assert isinstance(document, CutDocument)
            assert (document.content, document.truncated, document.next_offset) == expected
            assert document.metadata["pid"] != os.getpid()
        blank = await runner.run(echo, b" \n\t ", replace(CTX, options={"max_chars": 2}))
        assert not isinstance(blank, CutDocument) and blank.content == " \n\t "


async def test_large_bodies_cross_to_the_workers_and_back(registry):
    echo = registry.get("echo")
    async with ProcessRunner(2, timeout=10.0, specs=SPECS) as runner:
        bodies = [("é" * size).encode() for size in (0, 100, 20 * 1024, 600 * 1024)]
        documents = await asyncio.gather(*(runner.run(echo, body, CTX) for body in bodies))
    assert [d.content for d in documents] == [body.decode() for body in bodies]


def test_workers_fork_from_a_server_that_preloads_their_handlers(monkeypatch):
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    preloaded: list[list[str]] = []
    context = worker_context(SPECS)
    monkeypatch.setattr(type(context), "set_forkserver_preload",
                        lambda self, modules: preloaded.append(modules))
    assert worker_context(SPECS).get_start_method() == "forkserver"
    assert {"pipeline.batch.pool", "handlers.html", "tests.support.faulty_handlers"} <= set(
        preloaded[0])
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["fork", "spawn"])
    assert worker_context(SPECS).get_start_method() == "spawn"


def test_the_library_side_never_loads_the_batch_pool():
    code = ("import sys, pipeline.extract.native, pipeline.agent.kernel, pipeline.agent.tools; "
            "assert not {'pipeline.batch.pool', 'pebble', 'pipeline.batch.run'} & set(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)

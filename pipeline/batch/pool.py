"""The batch command's handler pool: each document's CPU-bound work in a worker process.

A :class:`~pipeline.extract.runners.Runner` on pebble's ``ProcessPool``, which gives what a batch
of untrusted pages needs: a time limit per document (past it the worker is killed and
replaced) and crash isolation (a worker that raises, ``os._exit``s or segfaults costs its
document an ``extract`` error; the pool goes on). Bodies a handler declares inline
(:class:`handlers.InlineHandler`, e.g. small UTF-8 text) are handled on the event loop and
never start the pool; otherwise the pool starts with the first body that needs it, from a
thread, so the event loop keeps fetching meanwhile.

Workers fork from a ``forkserver`` that has imported the handlers once (~15 ms to start or
replace a worker; ``spawn`` where there is none), and each builds the handler registry from
the same ``module:attribute`` specs as the parent; a handler not in that registry is sent
pickled. A worker that cannot build it fails its document with ``config``, which stops the
run (``on_start_failure``). Pebble (and multiprocessing's pool machinery) is loaded only when
a pool starts: a run whose bodies are all handled inline never pays for it.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from handlers import (
    BUILTIN_HANDLERS,
    ContentHandler,
    HandlerContext,
    HandlerRegistry,
    build_registry,
    handles_inline,
)
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document
from pipeline.extract.runners import call_handler, cut_to_budget

if TYPE_CHECKING:  # pebble (and multiprocessing's pools) only once a run starts the pool
    from pebble import ProcessPool

T = TypeVar("T")
_worker_registries: dict[tuple[str, ...], HandlerRegistry] = {}  # in a worker process


def _worker_registry(specs: tuple[str, ...]) -> HandlerRegistry:
    registry = _worker_registries.get(specs)
    if registry is None:
        try:
            registry = _worker_registries[specs] = build_registry(specs)
        except Exception as exc:
            raise PipelineError(
                "config", f"cannot start a handler worker with {list(specs)}: {exc}") from exc
        # The imports live as long as the worker: without this every full collection walks
        # them all, a cost per HTML page (benchmarks/README.md, figures behind the code).
        gc.freeze()
    return registry


def _handle(reference: str | ContentHandler, specs: tuple[str, ...], body: bytes,
            ctx: HandlerContext) -> Document:
    """A worker's job: one body through one handler, cut to the call's budget (so the event
    loop neither unpickles nor scans text past it)."""
    registry = _worker_registry(specs)
    if isinstance(reference, str):
        try:
            reference = registry.get(reference)
        except KeyError:
            raise PipelineError(
                "extract", f"no handler named {reference!r} in the worker") from None
    return cut_to_budget(call_handler(reference, body, ctx), ctx)


# When this process is killed, the resource tracker it started removes the pool's semaphores
# and warns about each on stderr after we are gone: the removal is what matters. Helpers
# started from here on get the filter (their -W options are copied from sys.warnoptions).
QUIET_TRACKER = "ignore::UserWarning:multiprocessing.resource_tracker"


def worker_context(specs: tuple[str, ...] = ()) -> multiprocessing.context.BaseContext:
    """``forkserver`` preloading the handlers where the platform has one, else ``spawn``."""
    if QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(QUIET_TRACKER)
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    modules = {__name__, "pebble", *(spec.partition(":")[0]
                                     for spec in (*BUILTIN_HANDLERS, *specs))}
    context.set_forkserver_preload(sorted(modules))  # the first pool's list wins: it is global
    return context


class ProcessRunner:
    """``size`` worker processes, a time limit of ``timeout`` seconds per document.

    Use as an async context manager. ``on_start_failure`` is told (once) when the workers
    cannot start or cannot load the handlers: ``PipelineError('config')``.
    """

    def __init__(self, size: int, timeout: float, specs: tuple[str, ...] = (), *,
                 on_start_failure: Callable[[PipelineError], None] | None = None,
                 start_method: str | None = None,
                 warm_up: Callable[[], object] | None = None) -> None:
        self.size = size
        self.timeout = timeout
        self.specs = tuple(specs)
        self.on_start_failure = on_start_failure
        self._start_method = start_method
        self._warm_up = warm_up  # run by each worker as it starts, before its first document
        self._known = build_registry(self.specs)  # what the workers will have
        self._pool: ProcessPool | None = None
        self._starting: asyncio.Future[ProcessPool] | None = None
        self._retired: list[ProcessPool] = []
        self._failed = False
        self._second_tries = asyncio.Lock()

    def _reference(self, handler: ContentHandler) -> str | ContentHandler:
        try:
            known = self._known.get(handler.name)
        except KeyError:
            known = None
        return handler.name if known is handler else handler

    def _new_pool(self) -> ProcessPool:
        from pebble import ProcessPool

        context = (multiprocessing.get_context(self._start_method) if self._start_method
                   else worker_context(self.specs))
        # a worker's start-up cost (a model to load) is not charged to its first document
        pool = ProcessPool(max_workers=self.size, context=context, initializer=self._warm_up)
        if not pool.active:  # starts the workers: the caller runs this in a thread
            raise RuntimeError("the pool stopped as it started")
        return pool

    async def _start(self) -> ProcessPool:
        try:
            self._pool = await asyncio.to_thread(self._new_pool)
        except Exception as exc:
            raise self._config_error(
                PipelineError("config", f"cannot start handler workers: {exc}")) from exc
        return self._pool

    async def _ready_pool(self) -> ProcessPool:
        """The running pool, started on first call (and again if every worker died at once,
        which pebble reports as a broken pool)."""
        if self._pool is not None and not self._pool.active:
            self._retired.append(self._pool)
            self._pool = self._starting = None
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        return await asyncio.shield(self._starting)

    def _config_error(self, error: PipelineError) -> PipelineError:
        if not self._failed and self.on_start_failure is not None:
            self._failed = True
            self.on_start_failure(error)
        return error

    async def started(self) -> None:
        """Start the workers now and check they can load the handlers (``config`` if not)."""
        pool = await self._ready_pool()
        try:
            await asyncio.wrap_future(pool.schedule(_worker_registry, args=(self.specs,)))
        except PipelineError as exc:
            raise self._config_error(exc) from None

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        if handles_inline(handler, body, ctx):
            return call_handler(handler, body, ctx)
        args = (self._reference(handler), self.specs, body, ctx)
        try:
            return await self._in_worker(_handle, args, f"handler {handler.name!r}")
        except PipelineError as exc:
            raise self._config_error(exc) if exc.kind == "config" else exc from None

    async def call(self, function: Callable[..., T], *args: Any, what: str) -> T:
        """``function(*args)`` in a worker, under the same time limit as a document (a
        module-level function, picklable arguments): other work on remote bytes, such as
        a sitemap's parse. ``what`` names it in errors; it raises ``PipelineError`` only."""
        return await self._in_worker(function, args, what)

    async def _in_worker(self, function: Callable[..., T], args: tuple[Any, ...], what: str
                         ) -> T:
        from concurrent.futures.process import BrokenProcessPool

        try:
            try:
                return await self._scheduled(function, args)
            except BrokenProcessPool:
                # Pebble fails every queued job when a worker dies before its job was
                # acknowledged (a race a busy machine widens): each gets one more try, one at
                # a time, so a job that kills its worker takes no other down the second time.
                async with self._second_tries:
                    return await self._scheduled(function, args)
        except PipelineError:
            raise
        except Exception as exc:
            raise PipelineError("extract", self._failure(what, exc)) from None

    async def _scheduled(self, function: Callable[..., T], args: tuple[Any, ...]) -> T:
        pool = await self._ready_pool()
        result: T = await asyncio.wrap_future(
            pool.schedule(function, args=args, timeout=self.timeout))
        return result

    def _failure(self, name: str, exc: Exception) -> str:
        """What went wrong with a document in the pool (pebble is loaded by then); ``name``
        is a handler's name, or what :meth:`call` was told."""
        from concurrent.futures.process import BrokenProcessPool

        from pebble import ProcessExpired

        if isinstance(exc, TimeoutError):
            return f"{name} took longer than {self.timeout:g}s; worker killed"
        if isinstance(exc, ProcessExpired):
            return f"{name}: its worker died (exit code {exc.exitcode})"
        if isinstance(exc, BrokenProcessPool):
            return f"{name}: every worker died at once ({exc})"
        return f"{name} could not run in a worker: {exc}"  # e.g. does not pickle

    async def __aenter__(self) -> ProcessRunner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        starting, self._starting = self._starting, None
        if starting is not None:  # a start half-way ends first: its thread cannot be stopped
            await asyncio.wait([starting])
        pools = [*self._retired, *([self._pool] if self._pool is not None else [])]
        self._pool, self._retired = None, []
        for pool in pools:
            pool.stop()  # no new work; running documents are abandoned with their workers
        await asyncio.gather(*(asyncio.to_thread(pool.join) for pool in pools))

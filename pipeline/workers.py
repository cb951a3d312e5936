"""Handler runners: where a handler's CPU-bound ``bytes → Document`` work happens.

* :class:`InlineRunner` runs it in a thread — for a library caller extracting a few URLs,
  who should not pay for starting processes.
* :class:`ProcessRunner` runs it in a pool of worker processes — for batch mode. Each worker
  has its own pipe, read from the event loop (no thread hop per document), so a worker that
  hangs past the time limit or dies (``os._exit``, a segfault) costs only its own document:
  it is replaced, the others keep working (``concurrent.futures.ProcessPoolExecutor`` marks
  the whole pool broken instead). Jobs wait in one queue; each worker has a driver coroutine
  that sends it the next job as soon as its reply is read. Bodies and large replies travel
  through a shared-memory arena per worker (:mod:`pipeline.arena`).

One deliberate exception to "CPU work never runs on the event loop": a handler may offer
``cheap(body, ctx) -> bool``; when it says True (the text handler for a small UTF-8 body,
about 50 µs at most), :class:`ProcessRunner` calls it inline, because the round trip to a
worker (pickling, two pipe writes and reads, waking another process) costs more than the
work itself. Anything that may parse, detect a charset or grow with the input stays out.

Workers rebuild the handler registry themselves (:func:`handlers.build_registry`) from the
same ``module:attribute`` specs as the parent; a handler not in that registry is sent
pickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import pickle
import signal
import sys
from multiprocessing.connection import Connection
from typing import Any, Protocol

from handlers import BUILTIN_HANDLERS, ContentHandler, HandlerContext, build_registry
from pipeline.arena import ARENA_BYTES, Arena, ArenaHandle
from pipeline.compat import time_limit
from pipeline.errors import PipelineError
from pipeline.models import Document
from pipeline.truncate import truncate

# ("ok", document fields) | ("cut", fields, truncated, next_offset) | ("err", kind, message)
Reply = tuple[Any, ...]
# A reply pickled to more than this goes through the arena (when it fits) instead of the pipe.
PIPE_REPLY_BYTES = 16 * 1024


class CutDocument(Document):
    """A document whose content a worker already cut to the call's ``max_chars`` option
    (``truncated``/``next_offset`` as :func:`pipeline.truncate.truncate` says): the event loop
    then neither unpickles nor scans text past the budget."""

    truncated: bool = False
    next_offset: int | None = None


def _reply(document: Document, ctx: HandlerContext) -> Reply:
    """The worker's answer: content cut to ``ctx.options['max_chars']`` when given (content
    that is only whitespace is left alone: the caller reports it as empty)."""
    fields = document.model_dump()
    max_chars = ctx.options.get("max_chars")
    if not isinstance(max_chars, int) or max_chars < 1 or not document.content.strip():
        return ("ok", fields)
    cut = truncate(document.content, max_chars)
    fields["content"] = cut.text
    return ("cut", fields, cut.truncated, cut.next_offset)


class Runner(Protocol):
    """Runs one handler over one body; raises ``PipelineError`` (never anything else)."""

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        ...

    async def __aenter__(self) -> Runner: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


def call_handler(handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
    """Run a handler, turning any failure into a ``PipelineError`` with a stable kind."""
    try:
        document = handler.handle(body, ctx)
    except PipelineError:
        raise
    except Exception as exc:  # a handler bug is this URL's 'extract' error, nothing more
        raise PipelineError(
            "extract", f"handler {handler.name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(document, Document):
        raise PipelineError(
            "extract", f"handler {handler.name!r} returned {type(document).__name__}"
        )
    return document


def _is_cheap(handler: ContentHandler, body: bytes, ctx: HandlerContext) -> bool:
    """The handler's own word that this body costs less than a trip to a worker."""
    cheap = getattr(handler, "cheap", None)
    if cheap is None:
        return False
    try:
        return bool(cheap(body, ctx))
    except Exception:  # a faulty estimate only costs the fast path
        return False


class InlineRunner:
    """Handlers in a thread, with a time limit (a thread cannot be killed: past the limit
    the URL fails and the thread is left to finish on its own)."""

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(call_handler, handler, body, ctx), self.timeout
            )
        except asyncio.TimeoutError as exc:  # not the builtin before Python 3.11
            raise PipelineError(
                "extract", f"handler {handler.name!r} took longer than {self.timeout:g}s"
            ) from exc

    async def __aenter__(self) -> InlineRunner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


def _worker_main(conn: Connection, specs: tuple[str, ...],
                 arena_handle: ArenaHandle | None) -> None:
    """A worker process: say ready, then answer jobs from the pipe until told to stop or
    orphaned. A job's body is either in the message or, given as its length, in the arena;
    a large reply goes back through the arena as ``("arena", length)``."""
    # The parent decides when work stops (a Ctrl-C or SIGTERM reaches the whole process
    # group); an orphaned worker sees end of file on its pipe and leaves.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        registry = build_registry(specs)
        arena = Arena.attach(arena_handle) if arena_handle else None
    except Exception as exc:
        conn.send(("fatal", f"cannot start a handler worker with {list(specs)}: {exc}"))
        return
    # The imports above live as long as the worker: without this, every full collection
    # walks them all (measured: 8.1 -> 6.7 ms CPU per HTML page in the pool).
    gc.freeze()
    conn.send(("ready",))
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        except Exception as exc:  # the pickled handler cannot be rebuilt here
            conn.send(("err", "extract", f"cannot load the handler in a worker: {exc}"))
            continue
        if job is None:
            return
        reference, body, ctx = job
        if isinstance(body, int):
            assert arena is not None
            body = arena.take(body)
        try:
            handler = registry.get(reference) if isinstance(reference, str) else reference
            reply: Reply = _reply(call_handler(handler, body, ctx), ctx)
        except PipelineError as exc:
            reply = ("err", exc.kind, exc.message)
        except KeyError:
            reply = ("err", "extract", f"no handler named {reference!r} in the worker")
        del body
        try:
            payload = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # e.g. metadata that does not pickle
            conn.send(("err", "extract", f"handler result cannot be sent back: {exc}"))
            continue
        if arena is not None and len(payload) > PIPE_REPLY_BYTES and arena.fits(len(payload)):
            conn.send(("arena", arena.put(payload)))
        else:
            conn.send_bytes(payload)


class _Worker:
    """One worker process and the parent's end of its pipe, driven from the event loop:
    the pipe stays registered with the loop for the worker's life and each reply resolves
    the job waiting for it, a timer enforces the time limit, and end of file on the pipe
    means the process died. A job is only ever sent to a worker that said it is ready, so
    sending never waits for a busy or starting process."""

    START_TIMEOUT = 120.0  # seconds a new worker may take to import the handlers

    def __init__(self, context: Any, specs: tuple[str, ...], arena_bytes: int) -> None:
        self._context = context
        self._specs = specs
        self._arena_bytes = arena_bytes
        self.process: Any = None
        self.conn: Connection | None = None
        self.arena: Arena | None = None
        self._waiting: asyncio.Future[Reply] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        parent, child = self._context.Pipe()
        try:
            self.arena = Arena.create(self._arena_bytes) if self._arena_bytes else None
        except OSError:  # no shared memory here: everything goes through the pipe
            self.arena = None
        self.process = self._context.Process(
            target=_worker_main, args=(child, self._specs, self.arena and self.arena.handle()),
            name="pipeline-handler", daemon=True,
        )
        self.process.start()
        child.close()
        self.conn = parent
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(parent.fileno(), self._readable)
        try:
            reply = await self._receive(self.START_TIMEOUT)
        except (EOFError, OSError, asyncio.TimeoutError):
            reply = ("fatal", f"handler worker did not start (exit code {self._exit_code()})")
        except BaseException:
            self.kill()
            raise
        if reply[0] != "ready":
            self.kill()
            raise PipelineError("config", str(reply[1]))

    def _readable(self) -> None:
        """The pipe has data (or hit end of file): hand the message to whoever waits."""
        assert self.conn is not None and self._loop is not None
        waiting = self._waiting
        try:
            message: Reply = self.conn.recv()
        except (EOFError, OSError) as exc:
            self._loop.remove_reader(self.conn.fileno())  # else end of file fires forever
            if waiting is not None and not waiting.done():
                waiting.set_exception(EOFError(str(exc)))
            return
        except Exception as exc:  # a reply that does not unpickle
            message = ("err", "extract", f"unreadable handler reply: {exc}")
        if message[0] == "arena" and self.arena is not None:
            try:
                message = pickle.loads(self.arena.take(message[1]))
            except Exception as exc:
                message = ("err", "extract", f"unreadable handler reply: {exc}")
        if waiting is not None and not waiting.done():
            waiting.set_result(message)

    async def _receive(self, timeout: float) -> Reply:
        """The next message from the worker; EOFError when it died, asyncio.TimeoutError."""
        assert self._loop is not None
        waiting = self._waiting = self._loop.create_future()
        try:
            async with time_limit(timeout):
                return await waiting
        finally:
            self._waiting = None

    def _exit_code(self) -> int | None:
        self.process.join(0.5)  # it is dead or dying: this returns at once
        return self.process.exitcode

    async def call(self, job: tuple[Any, ...], timeout: float) -> Reply:
        """Run one job; a hung or dead worker is replaced and the job fails as 'extract'.
        Raises ``PipelineError('config')`` when no worker process can be started."""
        if self.conn is None:  # killed earlier (a cancelled job, a failed restart)
            await self.start()
        assert self.conn is not None
        reference, body, ctx = job
        if self.arena is not None and self.arena.fits(len(body)):
            job = (reference, self.arena.put(body), ctx)
        try:
            self.conn.send(job)
            return await self._receive(timeout)
        except asyncio.TimeoutError:
            reply: Reply = ("err", "extract",
                            f"handler took longer than {timeout:g}s; worker killed")
        except (EOFError, OSError):
            reply = ("err", "extract", f"handler worker died (exit code {self._exit_code()})")
        except BaseException:  # cancelled mid-job: its late reply must not meet the next job
            self.kill()
            raise
        self.kill()
        with contextlib.suppress(PipelineError):  # if it fails, the next call tries again
            await self.start()
        return reply

    def detach(self) -> None:
        """Stop watching the pipe (on the loop's thread, before a thread stops the worker)."""
        if self._loop is not None and self.conn is not None and not self._loop.is_closed():
            self._loop.remove_reader(self.conn.fileno())
        self._loop = None

    def kill(self) -> None:
        if self._waiting is not None and not self._waiting.done():  # a call waits: it ends
            self._waiting.set_exception(EOFError("worker killed"))
        self.detach()
        if self.process is not None and self.process.is_alive():
            self.process.kill()
        if self.process is not None and self.process.pid is not None:  # never started: no join
            self.process.join()
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.arena is not None:
            self.arena.close()
            self.arena = None

    def stop(self) -> None:
        """Ask an idle worker to leave; kill it if it does not."""
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(2)
        self.kill()


def worker_context(specs: tuple[str, ...] = ()) -> multiprocessing.context.BaseContext:
    """How worker processes start: ``forkserver`` where the platform has it, else ``spawn``.

    Under spawn every worker imports the handlers (and the main module) itself: ~0.45 s of
    CPU per worker at start, competing with the first fetches, and again for each worker
    replaced after a hang or crash. The forkserver imports them once (the modules are
    preloaded) and forks each worker from that state: ~15 ms to start or replace one.
    Neither copies the parent's threads or event loop (plain fork would).
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    modules = {"pipeline.workers"}
    modules.update(spec.partition(":")[0] for spec in (*BUILTIN_HANDLERS, *specs))
    # A worker re-runs the main module as __mp_main__; with its imports preloaded that is
    # cheap. (A script run by path is left alone: preloading it would run its top level.)
    main_spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if main_spec is not None and main_spec.name:
        modules.add(main_spec.name)
    # Global to the forkserver, and used when it starts: the first pool's list wins (a
    # module missing from it is still imported by the worker that needs it).
    context.set_forkserver_preload(sorted(modules))
    return context


class ProcessRunner:
    """A pool of ``size`` worker processes with a per-document time limit.

    Entering starts the workers without waiting for them (importing the handlers takes a
    worker about half a second, which the first fetches overlap); :meth:`run` waits until
    they are ready. If they cannot start, :meth:`started` and every :meth:`run` raise
    ``PipelineError('config')``.
    """

    def __init__(self, size: int, timeout: float, specs: tuple[str, ...] = (),
                 start_method: str | None = None, arena_bytes: int = ARENA_BYTES) -> None:
        self.size = size
        self.arena_bytes = arena_bytes  # per worker; 0: everything through the pipe
        self.timeout = timeout
        self.specs = tuple(specs)
        self._context = (multiprocessing.get_context(start_method) if start_method
                         else worker_context(self.specs))
        # What the workers will have: anything else (say, a handler registered at run time)
        # is sent to them pickled.
        self._registry = build_registry(self.specs)
        self._workers: list[_Worker] = []
        # Jobs wait here; each worker's driver takes the next one the moment its reply is in.
        self._jobs: asyncio.Queue[tuple[tuple[Any, ...], asyncio.Future[Reply]]] = (
            asyncio.Queue())
        self._drivers: list[asyncio.Task[None]] = []
        self._starting: asyncio.Task[None] | None = None

    def _reference(self, handler: ContentHandler) -> str | ContentHandler:
        try:
            known = self._registry.get(handler.name)
        except KeyError:
            known = None
        return handler.name if known is handler else handler

    @property
    def entered(self) -> bool:
        return self._starting is not None

    async def started(self) -> None:
        """Wait until the workers are ready; ``PipelineError('config')`` if they cannot be."""
        if self._starting is None:
            raise RuntimeError("ProcessRunner used outside 'async with'")
        await asyncio.shield(self._starting)

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        if self._starting is None:
            raise RuntimeError("ProcessRunner used outside 'async with'")
        if _is_cheap(handler, body, ctx):
            return call_handler(handler, body, ctx)
        if not self._starting.done():
            await self.started()
        elif (failure := self._starting.exception()) is not None:
            raise failure
        job = (self._reference(handler), body, ctx)
        answer: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._jobs.put_nowait((job, answer))
        reply = await answer
        # validated in the worker (call_handler checks the type)
        if reply[0] == "ok":
            return Document.model_construct(**reply[1])
        if reply[0] == "cut":
            return CutDocument.model_construct(**reply[1], truncated=reply[2],
                                               next_offset=reply[3])
        raise PipelineError(reply[1], reply[2])

    async def _drive(self, worker: _Worker) -> None:
        """Feed ``worker`` jobs, one at a time, for the pool's life. The next job goes out
        as soon as this one's reply is read, without a turn of the event loop through an
        idle queue (the loop is busy fetching; each turn kept the worker waiting). A job
        whose caller gave up is killed with its worker, so no late reply meets the next
        job (the worker is replaced)."""
        def abandon(future: asyncio.Future[Reply]) -> None:
            if future.cancelled():
                worker.kill()

        while True:
            job, answer = await self._jobs.get()
            if answer.done():  # its caller gave up while it waited
                continue
            answer.add_done_callback(abandon)
            try:
                reply = await worker.call(job, self.timeout)
            except PipelineError as exc:  # no worker process would start
                reply = ("err", "extract", exc.message)
            finally:
                answer.remove_done_callback(abandon)
            if not answer.done():
                answer.set_result(reply)

    async def _start_all(self) -> None:
        try:
            await asyncio.gather(*(worker.start() for worker in self._workers))
        except BaseException:
            for worker in self._workers:
                worker.kill()
            raise
        self._drivers = [asyncio.ensure_future(self._drive(worker)) for worker in self._workers]

    async def __aenter__(self) -> ProcessRunner:
        self._workers = [_Worker(self._context, self.specs, self.arena_bytes)
                         for _ in range(self.size)]
        self._starting = asyncio.ensure_future(self._start_all())
        # Retrieved here so an unused pool that failed to start logs nothing at exit.
        self._starting.add_done_callback(lambda task: task.cancelled() or task.exception())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            await asyncio.gather(self._starting, return_exceptions=True)
        self._starting = None
        for driver in self._drivers:  # a driver stopped mid-job kills its worker
            driver.cancel()
        await asyncio.gather(*self._drivers, return_exceptions=True)
        self._drivers = []
        while not self._jobs.empty():
            self._jobs.get_nowait()[1].cancel()
        idle = [worker for worker in self._workers if worker.conn is not None]
        for worker in idle:
            worker.detach()
        await asyncio.gather(*(asyncio.to_thread(worker.stop) for worker in idle))
        self._workers = []

"""Handler runners: where a handler's CPU-bound ``bytes → Document`` work happens.

* :class:`InlineRunner` runs it in a thread — for a library caller extracting a few URLs,
  who should not pay for starting processes.
* :class:`ProcessRunner` runs it in a pool of worker processes — for batch mode. Each worker
  has its own pipe, read from the event loop (no thread hop per document), so a worker that
  hangs past the time limit or dies (``os._exit``, a segfault) costs only its own document:
  it is replaced, the others keep working (``concurrent.futures.ProcessPoolExecutor`` marks
  the whole pool broken instead). Jobs wait in one queue; each worker holds the job it runs
  and the next one (:data:`PREFETCH`), sent from the callback that reads a reply. Bodies
  and large replies travel through a shared-memory arena per worker (:mod:`pipeline.arena`).

One deliberate exception to "CPU work never runs on the event loop": a handler may offer
``cheap(body, ctx) -> bool``; when it says True (the text handler for a UTF-8 body up to
32 KB, ~130 µs at most), :class:`ProcessRunner` calls it inline, because the round trip to a
worker (pickling, two pipe writes and reads, waking another process) costs about as much as
the work itself. Anything that may parse or detect a charset stays out.

A second, bounded one: a handler may offer ``light(body, ctx) -> bool`` for bodies that are
linear work of a few milliseconds (the text handler: UTF-8 up to 1 MiB). While the pool has
not started, such bodies are handled inline too, until they have cost :data:`RENT_SECONDS`
of CPU in all; then the pool starts and takes them.

Workers rebuild the handler registry themselves (:func:`handlers.build_registry`) from the
same ``module:attribute`` specs as the parent; a handler not in that registry is sent
pickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import os
import pickle
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Protocol

from handlers import BUILTIN_HANDLERS, ContentHandler, HandlerContext, build_registry
from pipeline.arena import ARENA_BYTES, Arena, ArenaHandle
from pipeline.errors import PipelineError
from pipeline.models import Document
from pipeline.truncate import truncate

# ("ok", document fields) | ("cut", fields, truncated, next_offset) | ("err", kind, message)
Reply = tuple[Any, ...]
# A reply pickled to more than this goes through the arena (when it fits) instead of the pipe.
PIPE_REPLY_BYTES = 16 * 1024
# Jobs a worker holds: the one it runs and the next, already in its pipe, so it never waits
# for the event loop between two documents (measured: workers idle 9-11% of an HTML run
# with one job at a time, the loop being busy with fetches when a reply came in).
PREFETCH = 2
# Until the pool is started, bodies a handler calls ``light`` are handled inline, up to this
# much CPU time in all; past it the pool starts. Renting before buying: a pool start costs
# up to ~0.4 s of CPU (a forkserver importing the handlers, unless ``warm_up`` started it,
# then the workers, and a round trip for every body), which a short run of text with a few
# larger bodies never pays back; a long one spends at most this much on the event loop
# before the pool takes over. (Kept well under the start's cost, since the
# loop, not another core, pays the rent.)
RENT_SECONDS = 0.1


def _slot_bytes(arena: Arena) -> int:
    """The arena's share for one job (each job a worker holds has its own slot)."""
    return arena.size // PREFETCH


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
    cut = truncate(document.content, max_chars, markdown=document.format == "markdown")
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


def _handler_says(handler: ContentHandler, estimate: str, body: bytes,
                  ctx: HandlerContext) -> bool:
    """The handler's own estimate (``cheap`` or ``light``) for this body; False without one."""
    method = getattr(handler, estimate, None)
    if method is None:
        return False
    try:
        return bool(method(body, ctx))
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
        except TimeoutError as exc:
            raise PipelineError(
                "extract", f"handler {handler.name!r} took longer than {self.timeout:g}s"
            ) from exc

    async def __aenter__(self) -> InlineRunner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


def _worker_main(conn: Connection, specs: tuple[str, ...],
                 arena_handle: ArenaHandle | None) -> None:
    """A worker process: say ready, then answer jobs from the pipe, in order, until told to
    stop or orphaned. A job is ``(handler, body, ctx, slot)``: the body is in the message or,
    given as its length, in the job's slot of the arena; a large reply goes back through the
    same slot as ``("arena", length)``."""
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
        reference, body, ctx, slot = job
        if isinstance(body, int):
            assert arena is not None
            body = arena.take(body, slot * _slot_bytes(arena))
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
        if arena is not None and PIPE_REPLY_BYTES < len(payload) <= _slot_bytes(arena):
            conn.send(("arena", arena.put(payload, slot * _slot_bytes(arena))))
        else:
            conn.send_bytes(payload)


@dataclass(eq=False)
class _Job:
    """A document for the pool: ``(handler reference, body, ctx)``, the caller's future, and
    once sent, its arena slot and time-limit timer."""

    message: tuple[Any, ...]
    answer: asyncio.Future[Reply]
    slot: int = 0
    timer: asyncio.TimerHandle | None = None


class _Worker:
    """One worker process and the parent's end of its pipe, driven from the event loop.

    It holds up to :data:`PREFETCH` jobs, answered in the order sent: the first is running
    (its time limit runs), the others wait in the pipe. The pipe stays registered with the
    loop for the worker's life; each reply resolves the oldest job and calls ``on_free`` at
    once, so the pool can send the next job from the same callback. A job past its time limit
    or a worker that dies (end of file on the pipe) fails the running job only: the worker is
    killed and restarted in the background, and the jobs that were waiting behind go back to
    the pool through ``requeue``. A job is only ever sent to a worker that said it is ready.
    """

    START_TIMEOUT = 120.0  # seconds a new worker may take to import the handlers

    def __init__(self, context: Any, specs: tuple[str, ...], arena_bytes: int, timeout: float,
                 on_free: Callable[[], None], requeue: Callable[[list[_Job]], None]) -> None:
        self._context = context
        self._specs = specs
        self._arena_bytes = arena_bytes
        self._timeout = timeout
        self._on_free = on_free
        self._requeue = requeue
        self.process: Any = None
        self.conn: Connection | None = None
        self.arena: Arena | None = None
        self.jobs: deque[_Job] = deque()
        self.ready = False
        self.failure: PipelineError | None = None  # why the last (re)start failed
        self.restarting: asyncio.Task[None] | None = None
        self._waiting: asyncio.Future[Reply] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def room(self) -> int:
        """How many more jobs it can take now."""
        return PREFETCH - len(self.jobs) if self.ready else 0

    async def start(self) -> None:
        """Start the process and wait until it is ready; ``PipelineError('config')`` if not."""
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
        self._waiting = self._loop.create_future()
        try:
            async with asyncio.timeout(self.START_TIMEOUT):
                reply = await self._waiting
        except (TimeoutError, EOFError, OSError):
            reply = ("fatal", f"handler worker did not start (exit code {self._exit_code()})")
        except BaseException:
            self.kill()
            raise
        finally:
            self._waiting = None
        if reply[0] != "ready":
            self.kill()
            raise PipelineError("config", str(reply[1]))
        self.ready = True
        self.failure = None

    def accepts(self, job: _Job) -> bool:
        """Whether ``job`` can be sent now. A body that does not fit in an arena slot goes
        through the pipe, so only to an idle worker: a busy one would not read it, and the
        write would block the event loop."""
        if self.room == 0:
            return False
        return not self.jobs or self._fits_slot(job.message[1])

    def _fits_slot(self, body: bytes) -> bool:
        return self.arena is not None and len(body) <= _slot_bytes(self.arena)

    def send(self, job: _Job) -> None:
        """Send ``job`` (the caller checked :meth:`accepts`)."""
        assert self.conn is not None
        reference, body, ctx = job.message
        job.slot = min(set(range(PREFETCH)) - {held.slot for held in self.jobs})
        if self._fits_slot(body):
            assert self.arena is not None
            body = self.arena.put(body, job.slot * _slot_bytes(self.arena))
        try:
            self.conn.send((reference, body, ctx, job.slot))
        except OSError:  # it died: the next read sees end of file and fails what it held
            pass
        except Exception as exc:  # a handler sent pickled that does not pickle
            job.answer.set_result(("err", "extract", f"cannot send the job to a worker: {exc}"))
            return
        self.jobs.append(job)
        if len(self.jobs) == 1:
            self._arm(job)
        job.answer.add_done_callback(self._abandoned)

    def _arm(self, job: _Job) -> None:
        assert self._loop is not None
        job.timer = self._loop.call_later(self._timeout, self._expired, job)

    def _expired(self, job: _Job) -> None:
        if self.jobs and self.jobs[0] is job:
            self._lost(f"handler took longer than {self._timeout:g}s; worker killed")

    def _abandoned(self, answer: asyncio.Future[Reply]) -> None:
        """A caller gave up: if its job is running, stop it with its worker (no late reply
        may meet the next job); a job still waiting in the pipe just has its reply dropped."""
        if answer.cancelled() and self.jobs and self.jobs[0].answer is answer:
            self._lost("cancelled")

    def _readable(self) -> None:
        """The pipe has data (or hit end of file)."""
        assert self.conn is not None and self._loop is not None
        try:
            message: Reply = self.conn.recv()
        except (EOFError, OSError) as exc:
            if self._waiting is not None:  # still starting
                self._loop.remove_reader(self.conn.fileno())  # else end of file fires forever
                if not self._waiting.done():
                    self._waiting.set_exception(EOFError(str(exc)))
                return
            self._lost(f"handler worker died (exit code {self._exit_code()})")
            return
        except Exception as exc:  # a reply that does not unpickle
            message = ("err", "extract", f"unreadable handler reply: {exc}")
        if self._waiting is not None:
            if not self._waiting.done():
                self._waiting.set_result(message)
            return
        if not self.jobs:  # nothing was asked: a protocol error, not a reply
            return
        job = self.jobs.popleft()
        if job.timer is not None:
            job.timer.cancel()
        job.answer.remove_done_callback(self._abandoned)
        if message[0] == "arena" and self.arena is not None:
            try:
                message = pickle.loads(
                    self.arena.take(message[1], job.slot * _slot_bytes(self.arena)))
            except Exception as exc:
                message = ("err", "extract", f"unreadable handler reply: {exc}")
        if self.jobs:
            self._arm(self.jobs[0])  # the next one is running now
        if not job.answer.done():
            job.answer.set_result(message)
        self._on_free()

    def _lost(self, reason: str) -> None:
        """The worker is gone or going: the job it was running (if any) fails with
        ``reason``, the ones waiting behind go back to the pool; a new worker starts."""
        held = list(self.jobs)
        self.kill()
        if held and not held[0].answer.done():
            held[0].answer.set_result(("err", "extract", reason))
        self._requeue(held[1:])
        self._on_free()  # another worker may take them now
        self.restart()

    def restart(self) -> None:
        """Start a new process in the background (once at a time); then ask for work."""
        if self.restarting is None or self.restarting.done():
            self.restarting = asyncio.ensure_future(self._restart())

    async def _restart(self) -> None:
        try:
            await self.start()
        except PipelineError as exc:  # the pool fails a waiting job with it
            self.failure = exc
        except Exception as exc:  # the process itself would not start (no fork, no fds)
            self.failure = PipelineError("config", f"cannot start a handler worker: {exc}")
        # after this task is done, so the pool sees the restart over
        asyncio.get_running_loop().call_soon(self._on_free)

    def _exit_code(self) -> int | None:
        self.process.join(0.5)  # it is dead or dying: this returns at once
        return self.process.exitcode

    def detach(self) -> None:
        """Stop watching the pipe (on the loop's thread, before a thread stops the worker)."""
        if self._loop is not None and self.conn is not None and not self._loop.is_closed():
            self._loop.remove_reader(self.conn.fileno())
        self._loop = None

    def kill(self) -> None:
        """Kill the process; the jobs it held are forgotten (the caller settles them)."""
        self.ready = False
        for job in self.jobs:
            if job.timer is not None:
                job.timer.cancel()
            job.answer.remove_done_callback(self._abandoned)
        self.jobs.clear()
        if self._waiting is not None and not self._waiting.done():  # a start waits: it ends
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
    # A worker re-runs the main module as __mp_main__, so its imports are preloaded to make
    # that cheap. Not a package's ``__main__`` (``python -m pipeline``): multiprocessing never
    # re-runs one, and preloading it would import the whole CLI, aiohttp included (0.13 of
    # the forkserver's 0.32 s). A script run by path is re-run but not preloaded (that would
    # run its top level); when it drives our CLI (the ``extract-pipeline`` console script)
    # the CLI is, so each worker's re-run finds it imported.
    main = sys.modules.get("__main__")
    main_spec = getattr(main, "__spec__", None)
    if main_spec is not None:
        if main_spec.name and not main_spec.name.endswith("__main__"):
            modules.add(main_spec.name)
    elif getattr(main, "__file__", None) and "pipeline.cli" in sys.modules:
        modules.add("pipeline.cli")
    # Global to the forkserver, and used when it starts: the first pool's list wins (a
    # module missing from it is still imported by the worker that needs it).
    context.set_forkserver_preload(sorted(modules))
    return context


def warm_up(specs: tuple[str, ...] = ()) -> None:
    """Start the forkserver now (where workers start from one) without waiting for it, so its
    imports (~0.2 s) run beside the caller's own start-up rather than after the first page
    that needs a worker; a pool entered later finds it running. Any failure is left for the
    pool to report. A child forked afterwards (``--loops``) must call
    :func:`forget_forkserver`."""
    if (os.cpu_count() or 1) < 2:  # on one core its imports would only delay ours
        return
    if worker_context(specs).get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver  # only where there is one

    with contextlib.suppress(Exception):  # the pool reports its own start failure, if any
        forkserver.ensure_running()


def forget_forkserver() -> None:
    """In a child made by ``os.fork()`` (``--loops``): drop the parent's forkserver, if one
    runs. It is not this process's child, so multiprocessing's liveness check of it fails
    (``waitpid``: no such child) and no worker could start; the child's first pool starts
    its own."""
    from multiprocessing import forkserver

    server = forkserver._forkserver  # the module's one instance, and no public reset
    alive = getattr(server, "_forkserver_alive_fd", None)
    server.__init__()  # type: ignore[misc]  # back to "never started"
    if alive is not None:  # the parent's server ends when the parent does, not with us
        with contextlib.suppress(OSError):
            os.close(alive)


def _exit_at_once() -> None:
    """The whole job of the process that checks the forkserver forks."""


def _ready_to_fork(context: multiprocessing.context.BaseContext) -> None:
    """Start the forkserver and wait until it forks: it answers only once it has imported
    the preloaded handlers (~0.2 s, less if :func:`warm_up` started it earlier). Called in a
    thread, so the event loop fetches meanwhile instead of blocking in the first worker's
    ``Process.start()``. The trial process is left to exit and is joined: nothing is
    abandoned half-way."""
    trial = context.Process(target=_exit_at_once, name="pipeline-forkserver-check", daemon=True)
    trial.start()
    trial.join()


class ProcessRunner:
    """A pool of ``size`` worker processes with a per-document time limit.

    The pool starts with the first job that needs one (or :meth:`started`): the forkserver
    from a thread, unless :func:`warm_up` has started it already (its imports, ~0.2 s, run
    beside the fetches instead of blocking the event loop), then the workers. A run whose
    bodies are all cheap (see the module docstring) starts no worker at all. If the
    workers cannot start, :meth:`started` and every :meth:`run` that needs them raise
    ``PipelineError('config')``, and ``on_start_failure`` is called with that error. Jobs
    wait in one queue and go to the worker with the most room, each worker holding up to
    :data:`PREFETCH`.
    """

    def __init__(self, size: int, timeout: float, specs: tuple[str, ...] = (),
                 start_method: str | None = None, arena_bytes: int = ARENA_BYTES,
                 on_start_failure: Callable[[PipelineError], None] | None = None,
                 rent_seconds: float = RENT_SECONDS) -> None:
        self.size = size
        self.on_start_failure = on_start_failure
        self.arena_bytes = arena_bytes  # per worker; 0: everything through the pipe
        self.timeout = timeout
        self.specs = tuple(specs)
        self._context = (multiprocessing.get_context(start_method) if start_method
                         else worker_context(self.specs))
        # What the workers will have: anything else (say, a handler registered at run time)
        # is sent to them pickled.
        self._registry = build_registry(self.specs)
        self._workers: list[_Worker] = []
        self._queue: deque[_Job] = deque()
        self._entered = False
        self._starting: asyncio.Task[None] | None = None
        self._rent_left = rent_seconds  # inline work on light bodies left before a pool start

    def _reference(self, handler: ContentHandler) -> str | ContentHandler:
        try:
            known = self._registry.get(handler.name)
        except KeyError:
            known = None
        return handler.name if known is handler else handler

    @property
    def entered(self) -> bool:
        return self._entered

    def _start(self) -> asyncio.Task[None]:
        """The workers' start, begun on first call."""
        if not self._entered:
            raise RuntimeError("ProcessRunner used outside 'async with'")
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start_all())
            self._starting.add_done_callback(self._start_done)
        return self._starting

    def _start_done(self, task: asyncio.Task[None]) -> None:
        # Retrieved here, so a failed start that nobody awaits logs nothing at exit.
        if task.cancelled() or (failure := task.exception()) is None:
            return
        if self.on_start_failure is not None and isinstance(failure, PipelineError):
            self.on_start_failure(failure)

    async def started(self) -> None:
        """Start the workers if no job has yet, and wait until they are ready;
        ``PipelineError('config')`` if they cannot be."""
        await asyncio.shield(self._start())

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        if not self._entered:
            raise RuntimeError("ProcessRunner used outside 'async with'")
        if _handler_says(handler, "cheap", body, ctx):
            return call_handler(handler, body, ctx)
        if (self._starting is None and self._rent_left > 0
                and _handler_says(handler, "light", body, ctx)):
            began = time.thread_time()  # this thread's CPU: preemption is not rent
            try:
                return call_handler(handler, body, ctx)
            finally:
                self._rent_left -= time.thread_time() - began
        starting = self._start()
        if not starting.done():
            await asyncio.shield(starting)
        elif (failure := starting.exception()) is not None:
            raise failure
        job = _Job((self._reference(handler), body, ctx),
                   asyncio.get_running_loop().create_future())
        self._queue.append(job)
        self._dispatch()
        reply = await job.answer
        # validated in the worker (call_handler checks the type)
        if reply[0] == "ok":
            return Document.model_construct(**reply[1])
        if reply[0] == "cut":
            return CutDocument.model_construct(**reply[1], truncated=reply[2],
                                               next_offset=reply[3])
        raise PipelineError(reply[1], reply[2])

    def _dispatch(self) -> None:
        """Send queued jobs to the workers with room, the emptiest first (a worker that is
        idle gets a job before a busy one gets its next)."""
        while self._queue:
            job = self._queue[0]
            if job.answer.done():  # its caller gave up while it waited
                self._queue.popleft()
                continue
            worker = max(self._workers, key=lambda w: w.room, default=None)
            if worker is None or not worker.accepts(job):
                self._restart_broken()
                return
            self._queue.popleft()
            worker.send(job)

    def _restart_broken(self) -> None:
        """Workers whose restart failed: try again, and fail one waiting job per failure
        (as the job that asked for the worker would have), so no job waits forever."""
        for worker in self._workers:
            if worker.ready or (worker.restarting and not worker.restarting.done()):
                continue
            if worker.failure is not None:
                failure, worker.failure = worker.failure, None
                while self._queue:
                    job = self._queue.popleft()
                    if not job.answer.done():
                        job.answer.set_result(("err", "extract", failure.message))
                        break
            if self._queue:
                worker.restart()

    def _requeue(self, jobs: list[_Job]) -> None:
        """Jobs a dead worker held but never ran: first in line again, in their order."""
        self._queue.extendleft(reversed(jobs))

    async def _start_all(self) -> None:
        if self._context.get_start_method() == "forkserver":
            # From a thread, so its imports do not block the loop; one that failed to start
            # is reported by the workers' own start.
            await asyncio.wait([asyncio.ensure_future(
                asyncio.to_thread(_ready_to_fork, self._context))])
        try:
            await asyncio.gather(*(worker.start() for worker in self._workers))
        except BaseException:
            for worker in self._workers:
                worker.kill()
            raise
        self._dispatch()

    async def __aenter__(self) -> ProcessRunner:
        self._workers = [
            _Worker(self._context, self.specs, self.arena_bytes, self.timeout,
                    on_free=self._dispatch, requeue=self._requeue)
            for _ in range(self.size)
        ]
        self._entered = True
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            await asyncio.gather(self._starting, return_exceptions=True)
        self._starting = None
        self._entered = False
        restarts = [w.restarting for w in self._workers if w.restarting and not w.restarting.done()]
        for task in restarts:
            task.cancel()
        await asyncio.gather(*restarts, return_exceptions=True)
        while self._queue:
            self._queue.popleft().answer.cancel()
        for worker in self._workers:
            held = list(worker.jobs)
            if held:  # stopped mid-job: killed, and what it held is cancelled
                worker.kill()
                for job in held:
                    job.answer.cancel()
        idle = [worker for worker in self._workers if worker.conn is not None]
        for worker in idle:
            worker.detach()
        await asyncio.gather(*(asyncio.to_thread(worker.stop) for worker in idle))
        self._workers = []

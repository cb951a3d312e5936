"""Handler runners: where a handler's CPU-bound ``bytes → Document`` work happens.

* :class:`InlineRunner` runs it in a thread — for a library caller extracting a few URLs,
  who should not pay for starting processes.
* :class:`ProcessRunner` runs it in a pool of worker processes — for batch mode. Each worker
  has its own pipe, so a worker that hangs past the time limit or dies (``os._exit``, a
  segfault) costs only its own document: it is replaced, the others keep working.
  (``concurrent.futures.ProcessPoolExecutor`` marks the whole pool broken instead.)

Workers rebuild the handler registry themselves (:func:`handlers.registry_for`) from the
same ``module:attribute`` specs as the parent; a handler not in that registry is sent
pickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any, Protocol

from handlers import ContentHandler, HandlerContext, registry_for
from pipeline.errors import PipelineError
from pipeline.models import Document

Reply = tuple[Any, ...]  # ("ok", document fields) | ("err", kind, message)


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


def _worker_main(conn: Connection, specs: tuple[str, ...]) -> None:
    """A worker process: answer jobs from the pipe until told to stop or orphaned."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when work stops
    registry = registry_for(specs)
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
        try:
            handler = registry.get(reference) if isinstance(reference, str) else reference
            reply: Reply = ("ok", call_handler(handler, body, ctx).model_dump())
        except PipelineError as exc:
            reply = ("err", exc.kind, exc.message)
        except KeyError:
            reply = ("err", "extract", f"no handler named {reference!r} in the worker")
        try:
            conn.send(reply)
        except Exception as exc:  # e.g. metadata that does not pickle
            conn.send(("err", "extract", f"handler result cannot be sent back: {exc}"))


class _Worker:
    """One worker process and the parent's end of its pipe. ``call`` blocks: it runs in a
    thread of its own, one per worker."""

    def __init__(self, context: Any, specs: tuple[str, ...]) -> None:
        self._context = context
        self._specs = specs
        self.closing = False
        self._start()

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        self.process = self._context.Process(
            target=_worker_main, args=(child, self._specs), name="pipeline-handler", daemon=True
        )
        self.process.start()
        child.close()
        self.conn: Connection = parent

    def _replace(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()
        if not self.closing:
            self._start()

    def call(self, job: tuple[Any, ...], timeout: float) -> Reply:
        try:
            self.conn.send(job)
            if not self.conn.poll(timeout):
                self._replace()
                return ("err", "extract", f"handler took longer than {timeout:g}s; worker killed")
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(1)
            code = self.process.exitcode
            self._replace()
            return ("err", "extract", f"handler worker died (exit code {code})")

    def stop(self) -> None:
        """Ask an idle worker to leave; kill it if it does not."""
        self.closing = True
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class ProcessRunner:
    """A pool of ``size`` worker processes with a per-document time limit."""

    def __init__(self, size: int, timeout: float, specs: tuple[str, ...] = (),
                 start_method: str = "spawn") -> None:
        self.size = size
        self.timeout = timeout
        self.specs = tuple(specs)
        self._context = multiprocessing.get_context(start_method)
        self._registry = registry_for(self.specs)
        self._workers: list[_Worker] = []
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._threads: ThreadPoolExecutor | None = None

    def _reference(self, handler: ContentHandler) -> str | ContentHandler:
        try:
            known = self._registry.get(handler.name)
        except KeyError:
            known = None
        return handler.name if known is handler else handler

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        if self._threads is None:
            raise RuntimeError("ProcessRunner used outside 'async with'")
        job = (self._reference(handler), body, ctx)
        worker = await self._idle.get()
        future = asyncio.get_running_loop().run_in_executor(
            self._threads, worker.call, job, self.timeout
        )
        try:
            reply = await asyncio.shield(future)
        except asyncio.CancelledError:
            # The worker is busy until its thread returns; only then is it idle again.
            future.add_done_callback(lambda _: self._idle.put_nowait(worker))
            raise
        self._idle.put_nowait(worker)
        if reply[0] == "ok":
            return Document.model_validate(reply[1])
        raise PipelineError(reply[1], reply[2])

    async def __aenter__(self) -> ProcessRunner:
        self._threads = ThreadPoolExecutor(self.size, thread_name_prefix="pipeline-handler")
        self._workers = [_Worker(self._context, self.specs) for _ in range(self.size)]
        for worker in self._workers:
            self._idle.put_nowait(worker)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        idle: list[_Worker] = []
        while not self._idle.empty():
            idle.append(self._idle.get_nowait())
        for worker in self._workers:
            if worker not in idle:  # busy: its thread returns once the process is gone
                worker.closing = True
                worker.process.kill()
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self._threads, w.stop) for w in idle))
        if self._threads is not None:
            await asyncio.to_thread(self._threads.shutdown)
        self._threads = None
        self._workers = []

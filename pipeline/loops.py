"""More event loops for the batch command (``--loops N``): fetching on more than one core.

One event loop tops out near one core: on small pages every URL costs it ~1 M instructions
of HTTP client, URL checks and record building (see benchmarks/README.md), so with the
handlers already in a process pool the second core idles. ``--loops N`` starts N - 1 child
processes (forked on Linux, so they start with everything imported), each an event loop
with its own fetcher and worker pool, serving extract requests over a pair of pipes. The
parent keeps everything that is global to the run —
reading input, de-duplication, ``--ordered``, ``--resume``, the stop signal, the output —
and extracts a share of the URLs itself (loop 0).

Politeness stays global. By default each host belongs to one loop (a stable hash of its
``host:port``), which keeps ``--per-host``, ``--rate``, robots.txt and a host's slow-downs in
one place. Only when every host may have at least :data:`SPLIT_MIN_PER_HOST` connections per
loop (and robots.txt is not honoured, whose Crawl-delay is per process) are URLs spread over
all loops, the least busy for its share first. Each loop then holds its share of every
host's connections and rate, the parent half a child's share (it also does the run's
bookkeeping), rounded down: the sum never exceeds the limits.

The channel: length-prefixed pickle frames. The parent sends ``[(id, url), ...]``; a child
answers ``("ready",)`` once open, then ``("records", [(id, record), ...])``, or
``("fatal", kind, message)`` when it cannot work (its worker pool failed to start). A child
ignores SIGINT/SIGTERM (the parent decides what an interrupt means) and exits when its
request pipe closes. A child that dies leaves an ``extract`` error record for each of its URLs in
flight; its hosts move to the other loops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import time
import traceback
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, NoReturn

from pipeline.errors import PipelineError
from pipeline.frontier import host_key
from pipeline.models import ErrorInfo, Record
from pipeline.settings import Settings

# Fork the children where that is safe and cheap: Linux (macOS frameworks are not fork-safe).
FORK_CHILDREN = sys.platform.startswith("linux")
SPLIT_MIN_PER_HOST = 8  # connections per host per loop before a host is spread over loops
# The parent also reads, de-duplicates and writes every record, so its loop takes this much
# of a child's share of the URLs (and of each host's budget when hosts are spread).
PARENT_WEIGHT = 0.5
CLOSE_SECONDS = 10.0  # how long a child may take to close its connections and workers
PIPE_BYTES = 1024 * 1024  # the record pipe's capacity, where the system allows it
READ_BYTES = 1024 * 1024
MAX_READS = 16  # reads of the record pipe per turn of the event loop
_HEADER = struct.Struct(">I")
# This process's ends of the pipes to its children, open ones only: a forked child closes
# them all, or a child would hold its own (and its siblings') request pipes open forever.
_PARENT_ENDS: set[int] = set()

Extract = Callable[[str], Awaitable[Record]]
OnFatal = Callable[[PipelineError], None]


def spreads_hosts(settings: Settings) -> bool:
    """True when every loop serves every host (a share of its budget each)."""
    return not settings.robots and settings.per_host >= settings.loops * SPLIT_MIN_PER_HOST


def _shares(loops: int) -> list[float]:
    weights = [PARENT_WEIGHT] + [1.0] * (loops - 1)
    return [weight / sum(weights) for weight in weights]


def loop_settings(settings: Settings, number: int = 0) -> Settings:
    """What loop ``number`` of ``settings.loops`` may use. When hosts are spread, its share
    of each host's connections and rate, and of the worker processes (the router keeps the
    loops' work in proportion). Otherwise the whole of each: a loop's hosts may be all of the
    run's work (one site), and its workers only start when a page needs them."""
    loops = settings.loops
    update: dict[str, Any] = {"loops": 1}
    if loops > 1 and spreads_hosts(settings):
        share = _shares(loops)[number]
        workers = settings.workers // loops + (number < settings.workers % loops)
        update.update(per_host=max(1, int(settings.per_host * share)),
                      rate=settings.rate * share, workers=max(1, workers))
    return settings.model_copy(update=update)


class LoopRouter:
    """Which loop takes a URL: its host's loop, or, when hosts are spread, the one with the
    fewest URLs in flight for its share (see :func:`loop_settings`).

    ``busy[i]`` is loop i's URLs in flight; ``alive[i]`` whether it still works (loop 0, the
    parent, always does). A dead loop's hosts are hashed over the live ones.
    """

    def __init__(self, count: int, spread: bool) -> None:
        self.busy = [0] * count
        self.alive = [True] * count
        self.spread = spread
        self._shares = _shares(count)

    def _load(self, number: int) -> float:
        return self.busy[number] / self._shares[number]

    def choose(self, url: str) -> int:
        live = [i for i, up in enumerate(self.alive) if up]
        if self.spread:
            return min(live, key=self._load)
        key = host_key(url) or url
        return live[zlib.crc32(key.encode("utf-8", "surrogatepass")) % len(live)]


def _frame(message: object) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def _widen_pipe(fd: int) -> None:
    """Let a pipe hold :data:`PIPE_BYTES` (Linux; elsewhere, or past the system's limit, the
    pipe keeps its size)."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


class _Frames:
    """Cuts a byte stream back into the messages of :func:`_frame`, handing each to
    ``on_message`` as soon as its last byte is read (in the read callback itself: on a
    saturated loop each task woken in between would add a turn, ~20 ms)."""

    def __init__(self, on_message: Callable[[Any], None]) -> None:
        self._on_message = on_message
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        start = 0
        while len(buffer) - start >= _HEADER.size:
            end = start + _HEADER.size + _HEADER.unpack_from(buffer, start)[0]
            if len(buffer) < end:
                break
            self._on_message(pickle.loads(buffer[start + _HEADER.size:end]))
            start = end
        del buffer[:start]


class _Outbox:
    """Messages written as one frame per turn of the event loop, however many were queued."""

    def __init__(self, send: Callable[[bytes], object], wrap: Callable[[list[Any]], object]
                 ) -> None:
        self._send = send
        self._wrap = wrap
        self._items: list[Any] = []

    def put(self, item: Any) -> None:
        if not self._items:
            asyncio.get_running_loop().call_soon(self._flush)
        self._items.append(item)

    def _flush(self) -> None:
        items, self._items = self._items, []
        self._send(_frame(self._wrap(items)))


class _Child:
    """A child process reading requests from fd ``requests`` and writing records to fd
    ``records``: forked from this process where that is safe (Linux: the child starts with
    everything imported, in ~20 ms instead of ~0.4 s of imports), else a new interpreter."""

    command = ("import sys; from pipeline.loops import child_main; "
               "child_main(*map(int, sys.argv[1:]))")

    def __init__(self, requests: int, records: int) -> None:
        if FORK_CHILDREN:
            self.pid = os.fork()
            if self.pid == 0:  # the child: never returns into the parent's stack
                for fd in _PARENT_ENDS:  # else no child would see its requests end
                    with contextlib.suppress(OSError):
                        os.close(fd)
                from pipeline.workers import forget_forkserver

                forget_forkserver()
                child_main(requests, records)
            self._popen: subprocess.Popen[bytes] | None = None
        else:
            package_root = str(Path(__file__).resolve().parent.parent)
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, (package_root,
                                                              env.get("PYTHONPATH"))))
            self._popen = subprocess.Popen(
                [sys.executable, "-c", self.command, str(requests), str(records)],
                pass_fds=(requests, records), env=env, stdin=subprocess.DEVNULL,
                start_new_session=True)  # a terminal's Ctrl-C goes to the parent alone
            self.pid = self._popen.pid

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float) -> bool:
        """Reap the child if it exits within ``timeout`` seconds (blocking: run in a
        thread); whether it did."""
        if self._popen is not None:
            try:
                self._popen.wait(timeout)
            except subprocess.TimeoutExpired:
                return False
            return True
        deadline = time.monotonic() + timeout
        while True:
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0]:
                    return True
            except ChildProcessError:  # already reaped
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


class RemoteLoop:
    """A child process running an event loop that extracts URLs for this one."""

    def __init__(self, number: int, settings: Settings, on_fatal: OnFatal,
                 on_exit: Callable[[int], None]) -> None:
        self.number = number
        self._settings = settings
        self._on_fatal = on_fatal
        self._on_exit = on_exit
        self._frames = _Frames(self._received)
        self._child: _Child | None = None
        self._requests: asyncio.WriteTransport | None = None
        self._records: int | None = None  # the read end of the child's record pipe
        self._outbox: _Outbox | None = None
        self._waiting: dict[int, tuple[str, asyncio.Future[Record]]] = {}
        self._next_id = 0
        self._closing = False
        self.ready = asyncio.Event()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # Records come back through a pipe read here directly, not through a transport: a
        # transport reads one 256 KiB chunk per turn of a saturated loop, which capped a
        # child at ~1,700 small records a second (its pipe full, its loop half idle).
        requests, requests_end = os.pipe()
        records, records_end = os.pipe()
        _widen_pipe(records)
        _PARENT_ENDS.update((requests_end, records))
        try:
            self._child = _Child(requests, records_end)
        except BaseException as exc:
            for fd in (requests_end, records):
                _PARENT_ENDS.discard(fd)
                os.close(fd)
            if isinstance(exc, OSError):  # no process to be had: say so, no traceback
                raise PipelineError("config", f"cannot start extraction loop {self.number}: "
                                    f"{exc.strerror or exc}") from exc
            raise
        finally:
            os.close(requests)
            os.close(records_end)
        self._records = records
        os.set_blocking(records, False)
        loop.add_reader(records, self._drain)
        self._requests, _ = await loop.connect_write_pipe(
            lambda: _Forget(requests_end), os.fdopen(requests_end, "wb", buffering=0))
        self._requests.write(_frame(self._settings))
        self._outbox = _Outbox(self._requests.write, lambda items: items)

    async def extract(self, url: str) -> Record:
        assert self._outbox is not None
        self._next_id += 1
        future: asyncio.Future[Record] = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = (url, future)
        self._outbox.put((self._next_id, url))
        return await future

    def _drain(self) -> None:
        """Read what the child has written (a bounded amount, so it cannot hold the loop)."""
        if self._records is None:
            return
        for _ in range(MAX_READS):
            try:
                data = os.read(self._records, READ_BYTES)
            except BlockingIOError:
                return
            if not data:
                self._ended()
                return
            self._frames.feed(data)

    def _received(self, message: tuple[Any, ...]) -> None:
        if message[0] == "records":
            for request, record in message[1]:
                _, future = self._waiting.pop(request)
                if not future.done():  # cancelled: the parent gave up on it
                    future.set_result(record)
        elif message[0] == "ready":
            self.ready.set()
        elif message[0] == "fatal":
            self._on_fatal(PipelineError(message[1], message[2]))

    def _ended(self) -> None:
        """No more records can come: what is still waiting fails, and the hosts move on."""
        assert self._records is not None
        asyncio.get_running_loop().remove_reader(self._records)
        _PARENT_ENDS.discard(self._records)
        os.close(self._records)
        self._records = None
        started = self.ready.is_set()
        if not started and not self._closing:
            self._on_fatal(PipelineError("config", f"extraction loop {self.number} could not "
                                         "start (see the messages above)"))
        self._on_exit(self.number)
        error = ErrorInfo(kind="extract", message=f"extraction loop {self.number} stopped")
        for url, future in self._waiting.values():
            if future.done():
                continue
            if started:
                future.set_result(Record.failure(url, error))
            else:  # the run stops on the config error: these URLs are left for --resume
                future.cancel()
        self._waiting.clear()

    async def close(self) -> None:
        if self._child is None:
            return
        self._closing = True
        if self._requests is not None:
            self._requests.close()  # the child's cue to finish
        if not await asyncio.to_thread(self._child.wait, CLOSE_SECONDS):
            self._child.kill()
            await asyncio.to_thread(self._child.wait, CLOSE_SECONDS)
        while self._records is not None:  # the child is gone: read to the end of its pipe
            self._drain()


class _Forget(asyncio.Protocol):
    """The parent's end of a request pipe: once closed, later children need not close it."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def connection_lost(self, exc: Exception | None) -> None:
        _PARENT_ENDS.discard(self._fd)


Spread = Callable[[Extract], Extract]


@contextlib.asynccontextmanager
async def extra_loops(settings: Settings, on_fatal: OnFatal) -> AsyncIterator[Spread]:
    """Start the ``settings.loops - 1`` child loops and yield ``spread``: ``spread(local)``
    is an ``extract(url)`` over them and ``local``, this process's own extract. Enter it
    before this process opens connections or starts threads, so that a forked child starts
    clean. ``on_fatal`` hears of a child that cannot work (a configuration error)."""
    if settings.loops <= 1:
        yield lambda local: local
        return
    router = LoopRouter(settings.loops, spreads_hosts(settings))

    def on_exit(number: int) -> None:
        router.alive[number] = False

    remotes = [RemoteLoop(number, loop_settings(settings, number).model_copy(
                   update={"quiet": True}), on_fatal, on_exit)
               for number in range(1, settings.loops)]

    def spread(local: Extract) -> Extract:
        loops: list[Extract] = [local, *(remote.extract for remote in remotes)]

        async def extract(url: str) -> Record:
            number = router.choose(url)
            if number and router.spread and not remotes[number - 1].ready.is_set():
                number = 0  # a child still starting: this loop takes the URL meanwhile
            router.busy[number] += 1
            try:
                return await loops[number](url)
            finally:
                router.busy[number] -= 1

        return extract

    try:
        for remote in remotes:
            await remote.start()
        yield spread
    finally:
        await asyncio.gather(*(remote.close() for remote in remotes))


# --- the child side ------------------------------------------------------------------------

def child_main(requests: int, records: int) -> NoReturn:
    """A child loop: settings arrive first on fd ``requests``, then URL batches; records go
    out on fd ``records``. Never returns (a forked child must not unwind into its parent's
    stack, nor run the parent's exit handlers)."""
    status = 1
    try:
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, signal.SIG_IGN)
        with contextlib.suppress(ValueError):  # a forked child keeps the parent's wake-up fd
            signal.set_wakeup_fd(-1)
        # stdout may be the parent's output: a stray print() from a handler goes to stderr
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        asyncio.run(_serve(requests, records))
        status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(status)


async def _serve(requests: int, records: int) -> None:
    from pipeline.engine import calm_collector
    from pipeline.extract import NativeExtractor, load_registry
    from pipeline.providers.batch import batch_extract
    from pipeline.workers import ProcessRunner

    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Any] = asyncio.Queue()
    frames = _Frames(inbox.put_nowait)
    await loop.connect_read_pipe(lambda: _StreamEnd(frames, inbox),
                                 os.fdopen(requests, "rb", buffering=0))
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol,
                                                 os.fdopen(records, "wb", buffering=0))
    settings: Settings | None = await inbox.get()
    if settings is None:
        return

    def fatal(error: PipelineError) -> None:
        transport.write(_frame(("fatal", error.kind, error.message)))

    try:
        runner = ProcessRunner(settings.workers, settings.handler_timeout,
                               tuple(settings.handlers), on_start_failure=fatal)
        native = NativeExtractor(settings, runner=runner, registry=load_registry(settings))
        async with batch_extract(settings, native) as extract:
            outbox = _Outbox(transport.write, lambda items: ("records", items))
            running: set[asyncio.Task[None]] = set()

            async def answer(request: int, url: str) -> None:
                outbox.put((request, await extract(url)))

            transport.write(_frame(("ready",)))
            with calm_collector():
                while (batch := await inbox.get()) is not None:
                    for request, url in batch:
                        task = asyncio.ensure_future(answer(request, url))
                        running.add(task)
                        task.add_done_callback(running.discard)
                for task in running:
                    task.cancel()
                await asyncio.gather(*running, return_exceptions=True)
    except PipelineError as error:  # e.g. a provider chain that cannot open
        fatal(error)
    await asyncio.sleep(0)  # an outbox flush scheduled by the last answers
    while transport.get_write_buffer_size():
        await asyncio.sleep(0.01)
    transport.close()


class _StreamEnd(asyncio.Protocol):
    """The child's stdin: frames to ``frames``, then None to ``inbox`` at its end."""

    def __init__(self, frames: _Frames, inbox: asyncio.Queue[Any]) -> None:
        self._frames = frames
        self._inbox = inbox

    def data_received(self, data: bytes) -> None:
        self._frames.feed(data)

    def eof_received(self) -> bool:
        self._inbox.put_nowait(None)
        return False

"""The batch command's run, once its arguments are valid: the input, the extra event loops,
the sink, the progress bar and the engine, opened in that order and closed in reverse.

Imported by the command line only after it has started the worker pool's forkserver (see
:func:`pipeline.workers.warm_up`), so that the forkserver's imports run beside these.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import stat
import sys
from collections.abc import Callable
from typing import BinaryIO

from pipeline.cli import PROG, UsageError
from pipeline.engine import BatchEngine, Summary, calm_collector, feed, read_lines
from pipeline.errors import PipelineError
from pipeline.extract import NativeExtractor, load_registry
from pipeline.fetch.base import Fetcher
from pipeline.loops import extra_loops, loop_settings
from pipeline.models import Record
from pipeline.providers.batch import batch_extract
from pipeline.settings import Settings
from pipeline.sinks import DoneSet, JsonlSink, scan_done
from pipeline.workers import ProcessRunner


def _count_urls(path: str) -> int | None:
    """URL lines in a regular file (cheap: one streamed pass); None for pipes and stdin."""
    if path == "-" or not stat.S_ISREG(os.stat(path).st_mode):
        return None
    with open(path, "rb") as handle:
        return sum(1 for _ in read_lines(handle))


class _Progress:
    """A tqdm bar on stderr — only on a terminal, never with --quiet."""

    def __init__(self, total: int | None, enabled: bool) -> None:
        self._bar = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="url", file=sys.stderr, dynamic_ncols=True,
                             smoothing=0.1)

    def update(self, record: Record, summary: Summary) -> None:
        if self._bar is not None:
            self._bar.update()
            self._bar.set_postfix_str(
                f"ok={summary.ok} errors={sum(summary.errors.values())}", refresh=False
            )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _open_input(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


def _scan_output(path: str) -> tuple[DoneSet, int]:
    try:
        return scan_done(path)
    except OSError as exc:
        raise UsageError(f"cannot resume from {path}: {exc.strerror}") from exc


def _open_sink(path: str | None, *, append: bool) -> JsonlSink:
    if path is None:
        return JsonlSink(sys.stdout.buffer, background=True)
    try:
        return JsonlSink.open(path, append=append, background=True)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from exc


def _install_stop(stop: asyncio.Event) -> Callable[[], None]:
    """SIGINT/SIGTERM set ``stop``; a second one ends at once. Returns the undo."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)

    def on_signal() -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    for number in signals:
        loop.add_signal_handler(number, on_signal)

    def undo() -> None:
        for number in signals:
            loop.remove_signal_handler(number)

    return undo


async def run_batch(args: argparse.Namespace, settings: Settings, *,
                    fetcher: Fetcher | None = None) -> Summary:
    """The batch command once its arguments are valid."""
    registry = load_registry(settings)  # a bad --handler is a config error, before any work
    if fetcher is not None:  # an injected fetcher lives in this process only
        settings = settings.model_copy(update={"loops": 1})
    local = loop_settings(settings)
    stop = asyncio.Event()
    start_failures: list[PipelineError] = []

    def stop_on_start_failure(error: PipelineError) -> None:
        start_failures.append(error)  # workers or a loop that cannot start: config, exit 2
        stop.set()

    runner = ProcessRunner(local.workers, local.handler_timeout, tuple(local.handlers),
                           on_start_failure=stop_on_start_failure)
    async with contextlib.AsyncExitStack() as cleanup:
        source = _open_input(args.urls)
        if source is not sys.stdin.buffer:
            cleanup.callback(source.close)
        done, dropped = _scan_output(args.output) if args.resume else (None, 0)
        # Before the sink's thread and any connection exist, so a forked child starts clean.
        spread = await cleanup.enter_async_context(extra_loops(settings, stop_on_start_failure))
        sink = _open_sink(args.output, append=args.resume)
        cleanup.callback(sink.close)
        show = not settings.quiet and sys.stderr.isatty()
        total = _count_urls(args.urls) if show else None
        if total is not None and done is not None:
            total = max(0, total - len(done))  # what this run has left to do
        progress = _Progress(total, enabled=show)
        cleanup.callback(progress.close)
        if not settings.quiet and done is not None:
            print(f"{PROG}: resuming: {len(done)} records already in {args.output}"
                  + (f" (dropped a torn last line of {dropped} bytes)" if dropped else "")
                  + (f"; {done.invalid} lines are not whole records: their URLs are done "
                     "again (the lines stay)" if done.invalid else ""),
                  file=sys.stderr)
        native = NativeExtractor(local, fetcher=fetcher, runner=runner, registry=registry)
        local_extract = await cleanup.enter_async_context(batch_extract(local, native))
        engine = BatchEngine(settings, spread(local_extract), sink.write, done=done,
                             on_record=progress.update)
        undo = _install_stop(stop)
        try:
            with calm_collector():
                summary = await engine.run(feed(read_lines(source)), stop)
        finally:
            undo()
        if start_failures:
            raise start_failures[0]
        return summary

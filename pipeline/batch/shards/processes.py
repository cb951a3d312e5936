"""``--processes N``: the N shards of a run as N local processes, driven from this one.

This process reads the input once and splits it into a spool file per shard (a hidden folder in
the output directory, removed at the end), then starts one process per shard
(:data:`START_METHOD`). Each runs :func:`pipeline.batch.shards.shard_run.run_shard` over its
spool and reports here through a queue, so the command has one progress bar, one summary and one
exit status. A stop (Ctrl-C, SIGTERM) is passed on to every shard as SIGTERM: each writes what
finished and leaves its part for ``--resume``; a second stop ends them at once, a third kills
them.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from pipeline.batch.engine import Summary
from pipeline.batch.input.items import load_items
from pipeline.batch.input.sources import say
from pipeline.batch.output.sinks import DoneSet
from pipeline.batch.progress import ProgressBar, combine
from pipeline.batch.run_plan import RunPlan
from pipeline.batch.shards.plan import Spool
from pipeline.batch.shards.shard_run import (
    ShardJob,
    note_warc_files,
    prepare,
    run_shard,
    spooled,
)
from pipeline.core.errors import OutputError, PipelineError, UsageError
from pipeline.core.models import Record

# Linux: fork the shard processes, which then start with everything imported (less CPU and
# wall time than spawn: benchmarks/README.md, figures behind the code). This process
# forks before it starts any thread or event loop. Elsewhere fork is not safe (macOS system
# frameworks): a fresh interpreter.
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"
REPORT_SECONDS = 0.25  # how often a shard process reports its progress
WAIT_SECONDS = 0.2  # how long the driver waits for a report before it looks at its processes
DRIVER_CHECK_SECONDS = 0.5  # how often a shard process checks that its driver still runs


class Reporter:
    """A shard process's side of the queue: progress in batches, then how the shard ended."""

    def __init__(self, shard: int, reports: Any) -> None:
        self._shard = shard
        self._reports: Any = reports
        self._delta = Summary()
        self._sent = time.monotonic()

    def mute(self) -> None:
        """Nobody reads the reports any more: send none, and never wait at exit for the
        queue's pipe to take what is pending (it may be full)."""
        reports, self._reports = self._reports, None
        if reports is not None:
            reports.cancel_join_thread()

    def put(self, report: tuple[str, int, Any]) -> None:
        """One report to the driver (none once muted)."""
        if self._reports is not None:
            self._reports.put(report)

    def record(self, record: Record, summary: Summary) -> None:
        self._delta.add(record)
        if time.monotonic() - self._sent >= REPORT_SECONDS:
            self.flush()

    def resumed(self, done: DoneSet, dropped: int) -> None:
        self.put(("resumed", self._shard, len(done)))

    def flush(self) -> None:
        if self._delta.records:
            self.put(("progress", self._shard, self._delta))
            self._delta = Summary()
        self._sent = time.monotonic()

    def end(self, kind: str, payload: object) -> None:
        self.flush()
        self.put((kind, self._shard, payload))


def _watch_driver(driver: int, on_gone: Callable[[], None]) -> None:
    """Call ``on_gone`` (from a daemon thread) once the process ``driver`` is no longer this
    process's parent: it was killed, and this one was left behind."""
    def watch() -> None:
        while os.getppid() == driver:
            time.sleep(DRIVER_CHECK_SECONDS)
        on_gone()

    threading.Thread(target=watch, name="pipeline-driver-watch", daemon=True).start()


def _forget_inherited_forkserver() -> None:
    """A forked shard process: the driver's handler-pool forkserver, when the driver had
    started one (a library caller's earlier run), is not this process's to use — a pool
    would fail to start through it — so the next pool here starts its own."""
    from multiprocessing import forkserver

    server: Any = getattr(forkserver, "_forkserver", None)
    if START_METHOD != "fork" or server is None or server._forkserver_pid is None:
        return
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)  # this copy would keep the driver's alive
    server._forkserver_pid = server._forkserver_address = server._forkserver_alive_fd = None


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent() -> bool:
    """Linux: the kernel kills this process the moment its parent dies (a ``kill -9`` of
    the driver), so no shard goes on writing beside a resumed run. False where there is no
    ``prctl`` (then :func:`_watch_driver` notices, within a second)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _shard_process(job: ShardJob, spool: Path, reports: Any, driver: int) -> None:
    """A shard process of a batch run: extract the spooled items."""
    def work(reporter: Reporter) -> Summary:
        with open(spool, "rb") as items:
            return asyncio.run(run_shard(job, load_items(items), on_record=reporter.record,
                                         on_resume=reporter.resumed,
                                         signals=(signal.SIGTERM,)))

    shard_process(job.shard, reports, driver, work)


def shard_process(shard: int, reports: Any, driver: int,
                  work: Callable[[Reporter], Summary]) -> None:
    """The body of a shard process: ``work`` (its run, reporting through the reporter), then
    say how it ended. It dies with a killed driver (Linux: at once, by the kernel; elsewhere
    it stops as on a stop from the driver); what it wrote stays in its part, for
    ``--resume``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C: the driver decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the driver's handler, if forked
    _forget_inherited_forkserver()
    reporter = Reporter(shard, reports)

    def driver_gone() -> None:
        reporter.mute()
        os.kill(os.getpid(), signal.SIGTERM)

    if not _die_with_parent():
        _watch_driver(driver, driver_gone)
    elif os.getppid() != driver:  # the driver died before the line above
        os._exit(0)
    try:
        summary = work(reporter)
    except PipelineError as exc:
        reporter.end("failed", (exc.kind, exc.message))
        sys.exit(2)
    except UsageError as exc:
        reporter.end("failed", ("config", str(exc)))
        sys.exit(2)
    except OutputError as exc:  # a full disk: the part keeps whole records, for --resume
        reporter.end("failed", ("output", f"cannot write {exc.filename}: {exc.strerror}"))
        sys.exit(74)
    except KeyboardInterrupt:  # a second stop: at once
        reporter.end("end", Summary(interrupted=True))
        sys.exit(130)
    reporter.end("end", summary)


def _context() -> Any:
    # literal method names: typeshed gives those contexts their Process type
    return (multiprocessing.get_context("fork") if START_METHOD == "fork"
            else multiprocessing.get_context("spawn"))


class Driver:
    """Starts the shard processes, passes stops on, and gathers their reports. A shard
    process (:func:`shard_process`) is ``target(*args, reports, driver_pid)``; reports of
    kinds the driver does not know go to ``route`` (a sharded crawl's exchange)."""

    def __init__(self, names: dict[int, str],
                 route: Callable[[str, int, Any], None] | None = None) -> None:
        self.context = _context()
        self.reports = self.context.Queue()
        self.names = names
        self.route = route
        self.processes: dict[int, Any] = {}
        self.progress = ProgressBar(None, enabled=False)
        self.stops = 0
        self.live = {shard: Summary() for shard in names}  # from progress reports
        self.ended: dict[int, Summary] = {}
        self.failures: dict[int, tuple[str, str]] = {}

    def add(self, shard: int, target: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.processes[shard] = self.context.Process(
            target=target, args=(*args, self.reports, os.getpid()),
            name=f"pipeline-shard-{shard}")

    def stop(self, signum: int = signal.SIGTERM, frame: FrameType | None = None) -> None:
        self.stops += 1
        for process in self.processes.values():
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGKILL if self.stops > 2 else signal.SIGTERM)

    def _handle(self, kind: str, shard: int, payload: Any) -> None:
        if kind == "progress":
            self.live[shard].absorb(payload)
            self.progress.advance(payload.records, combine(self.live.values(), 0))
        elif kind == "resumed":
            self.progress.shrink(payload)
        elif kind == "end":
            self.ended[shard] = payload
        elif kind == "failed":
            self.failures[shard] = payload
            if payload[0] == "config" and not self.stops:
                self.stop()  # the others would fail alike
        elif self.route is not None:
            self.route(kind, shard, payload)

    def start(self) -> None:
        for process in self.processes.values():
            process.start()

    def gather(self, progress: ProgressBar, *, together: bool = False) -> None:
        """Read reports until every shard process has ended. ``together``: the shards need
        each other (a sharded crawl), so one that ends without saying how stops the rest."""
        self.progress = progress
        while True:
            try:
                self._handle(*self.reports.get(timeout=WAIT_SECONDS))
            except queue.Empty:
                alive = [process.is_alive() for process in self.processes.values()]
                if not any(alive):
                    break  # and every report is read: they were sent before the exits
                if together and not self.stops and not all(alive) and any(
                        shard not in self.ended for shard, process
                        in self.processes.items() if not process.is_alive()):
                    self.stop()
        for process in self.processes.values():
            process.join()

    def summaries(self) -> list[Summary]:
        """Each shard's summary: its records as reported, and how it ended."""
        out = []
        for shard, process in self.processes.items():
            summary = self.live[shard]
            ended = self.ended.get(shard)
            if ended is not None:
                summary.skipped, summary.interrupted = ended.skipped, ended.interrupted
            elif self.stops:
                summary.interrupted = True
            elif shard not in self.failures:
                self.failures[shard] = ("extract", "its process stopped unexpectedly "
                                        f"(exit code {process.exitcode})")
            if shard in self.failures:
                summary.failed.append(f"{self.names[shard]}: {self.failures[shard][1]}")
            out.append(summary)
        return out


def run_processes(plan: RunPlan) -> Summary:
    """Run every shard not done yet, ``settings.processes`` at once (one each)."""
    settings = plan.settings
    count = settings.processes
    output = prepare(plan, count)
    started = time.monotonic()
    # The machine's handler workers, shared out: each process has the CPU of 1/N of it.
    local = settings.model_copy(update={"processes": 1,
                                        "workers": max(1, settings.workers // count)})
    output.check_idle(output.pending())  # an earlier run's writer still running: refused
    already = output.done_records()
    run_input = plan.input
    scope = run_input.credential_scope(settings.credential_hosts)
    try:
        with spooled(plan, output, scope) as spools:
            if (note := one_shard_note(spools)) is not None:
                say(settings.quiet, note)
            jobs = {shard: (ShardJob(output, shard, local, run_input.local_files, scope), spool)
                    for shard, spool in spools.items()}
            summary = _drive(jobs, local.quiet, started)
    finally:
        note_warc_files(output, settings)
    summary.skipped += already
    return summary


def one_shard_note(spools: dict[int, Spool]) -> str | None:
    """What to tell when one of several shards got every item: a shard takes whole hosts,
    so a run over one host (or hosts that hash alike) is one process's work."""
    busy = [shard for shard, spool in spools.items() if spool.count]
    if len(spools) < 2 or len(busy) != 1 or spools[busy[0]].count < 2:
        return None
    return (f"all {spools[busy[0]].count} URLs went to shard {busy[0]}, as a shard takes "
            "whole hosts and their hosts all hash to it: one process does the work "
            "(--processes pays on many hosts)")


def _drive(jobs: dict[int, tuple[ShardJob, Spool]], quiet: bool,
           started: float) -> Summary:
    driver = Driver({shard: job.name for shard, (job, _) in jobs.items()})
    for shard, (job, spool) in jobs.items():
        driver.add(shard, _shard_process, (job, spool.path))
    return drive(driver, sum(spool.count for _, spool in jobs.values()), quiet, started)


def drive(driver: Driver, total: int | None, quiet: bool, started: float, *,
          together: bool = False) -> Summary:
    """Start the driver's processes, gather them (a stop passed on to them), and sum
    their summaries; ``total``: the records expected, for the progress bar."""
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.signal(number, driver.stop) for number in signals}
    progress = None
    try:
        driver.start()  # before the progress bar's thread (see START_METHOD)
        show = not quiet and sys.stderr.isatty()
        progress = ProgressBar(total, enabled=show)
        driver.gather(progress, together=together)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if progress is not None:
            progress.close()
    summary = combine(driver.summaries(), started)
    summary.interrupted |= driver.stops > 0
    config = [message for kind, message in driver.failures.values() if kind == "config"]
    if config:
        raise PipelineError("config", config[0])
    return summary

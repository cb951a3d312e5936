"""One shard of a sharded run: its items through the engine into its part file.

The same function runs ``--shard K/N`` in this process, each process of ``--processes N``
and each Ray task. A shard always continues its own partial part when there is one,
skipping the records it holds, so a resumed or retried shard never writes a line twice; a
run without ``--resume`` (``--overwrite``: the checks refuse a directory holding files of
the shards otherwise) clears the shard's files before it starts (:func:`prepare`).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.batch.engine import Summary
from pipeline.batch.input.items import InputItem
from pipeline.batch.input.sources import all_items, say
from pipeline.batch.output.output_dir import (
    OutputDir,
    list_warc_files,
    manifest,
    open_output_dir,
    part_stem,
    read_manifest,
)
from pipeline.batch.output.sinks import DoneSet
from pipeline.batch.output.warc_out import clear_warc_files, warc_files
from pipeline.batch.progress import ProgressBar
from pipeline.batch.run import (
    STOP_SIGNALS,
    OnRecord,
    RunOutput,
    extract_items,
    open_sink,
    resuming,
    scan_output,
)
from pipeline.batch.run_plan import RunPlan
from pipeline.batch.shards.plan import Spool, shard_items, split_items
from pipeline.core.errors import UsageError
from pipeline.core.settings import Settings
from pipeline.extract.native import load_registry
from pipeline.fetch.base import Fetcher
from pipeline.fetch.credentials import CredentialScope
from pipeline.fetch.local_files import LocalSource

SPOOL_PREFIX = ".items-"  # the hidden folder of a driver's spool files in the output directory


@dataclass(frozen=True)
class ShardJob:
    """What a shard run needs besides its items (picklable: it crosses into processes)."""

    output: OutputDir
    shard: int
    settings: Settings
    local_files: LocalSource | None = None
    credentials: CredentialScope | None = None  # where credentials may go (None: anywhere)

    @property
    def name(self) -> str:
        return f"shard {self.shard} of {self.output.shards}"


async def run_shard(job: ShardJob, items: Iterable[InputItem], *, fetcher: Fetcher | None = None,
                    on_record: OnRecord | None = None,
                    on_resume: Callable[[DoneSet, int], None] | None = None,
                    signals: Iterable[int] = STOP_SIGNALS) -> Summary:
    """Extract the shard's ``items`` into its part, then mark the shard done unless the run
    was stopped. ``on_resume(done, dropped_bytes)`` is told what the part held already."""
    registry = load_registry(job.settings)
    held = 0

    def open_part() -> RunOutput:
        nonlocal held
        part = job.output.resumable_part(job.shard)
        done, dropped = scan_output(str(part))
        held = len(done)
        if on_resume is not None and (len(done) or dropped or done.invalid):
            on_resume(done, dropped)
        sink = open_sink(part, append=True)
        return RunOutput(sink.write, sink.close, done, part)

    stem = part_stem(job.shard, job.output.shards)
    with job.output.writing(job.shard):  # no two writers of one part
        summary = await extract_items(items, open_part, job.settings, registry=registry,
                                      fetcher=fetcher, on_record=on_record, signals=signals,
                                      local_files=job.local_files,
                                      credential_scope=job.credentials, warc_stem=stem)
        if not summary.interrupted:
            marker: dict[str, Any] = {"shard": job.shard, "shards": job.output.shards,
                                      "records": held + summary.records}
            if job.settings.warc_out is not None:
                marker["warc"] = [path.name
                                  for path in warc_files(job.settings.warc_out, stem)]
            job.output.complete(job.shard, marker)
    return summary


def prepare(plan: RunPlan, shards: int | None, only: int | None = None) -> OutputDir:
    """The output directory of a sharded run, checked (``--resume``) or cleared (the shards
    this run will do: ``only`` that one, or every one). ``shards`` None: the resumed run's
    count."""
    settings, directory = plan.settings, plan.output
    assert directory is not None  # checked: a sharded run writes a directory
    if shards is None:
        found = read_manifest(Path(directory)) if plan.resume else None
        if found is None:
            raise UsageError("the number of shards is not known: give --shards N")
        shards = int(found["shards"])
    wanted = manifest(shards, plan.input.path, settings, plan.input.identity())
    output = open_output_dir(directory, wanted, resume=plan.resume,
                             replacing=plan.overwrite and only is None, shard=only)
    if not plan.resume:
        for shard in range(shards) if only is None else [only]:
            output.clear(shard)
            if settings.warc_out is not None:
                clear_warc_files(settings.warc_out, part_stem(shard, shards))
    return output


@contextmanager
def spooled(plan: RunPlan, output: OutputDir,
            credential_scope: CredentialScope | None = None) -> Iterator[dict[int, Spool]]:
    """The input read once (its sitemaps and feeds expanded; its origins named in
    ``credential_scope``) and split: the items of each shard not done yet, in spool files
    in a hidden folder of the output directory (removed after; the folders a killed run
    left are removed first)."""
    for left in output.path.glob(f"{SPOOL_PREFIX}*"):
        shutil.rmtree(left, ignore_errors=True)
    directory = Path(tempfile.mkdtemp(prefix=SPOOL_PREFIX, dir=output.path))
    try:
        with stop_signals_interrupt():  # the walk of sitemaps may take a while
            items = all_items(plan.input, plan.settings, credential_scope)
            spools = split_items(items, output.shards, output.pending(), directory)
        yield spools
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM stop this (driver) process as Ctrl-C does, by KeyboardInterrupt
    (where signals can be handled: in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.signal(number, interrupt) for number in signals}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def run_one_shard(plan: RunPlan, *, fetcher: Fetcher | None = None) -> Summary:
    """``--shard K/N``: this process reads the whole input and extracts shard K's items."""
    assert plan.shard is not None
    shard, shards = plan.shard
    settings, run_input = plan.settings, plan.input
    output = prepare(plan, shards, only=shard)
    scope = run_input.credential_scope(settings.credential_hosts)
    job = ShardJob(output, shard, settings, run_input.local_files, scope)
    if output.is_done(shard):
        say(settings.quiet, f"{job.name} is already done ({output.part(shard)})")
        return Summary(skipped=output.read_marker(shard)["records"])
    show = not settings.quiet and sys.stderr.isatty()
    total = None
    if show and run_input.count() is not None:
        with run_input.file_items() as counted:
            total = sum(1 for _ in shard_items(counted, shard, shards))
    progress = ProgressBar(total, enabled=show)

    def resumed(done: DoneSet, dropped: int) -> None:
        progress.shrink(len(done))
        say(settings.quiet, resuming(output.partial(shard), done, dropped))

    try:
        items = shard_items(all_items(run_input, settings, scope), shard, shards)
        return asyncio.run(run_shard(job, items, fetcher=fetcher, on_record=progress.update,
                                     on_resume=resumed))
    finally:
        progress.close()
        note_warc_files(output, settings)


def note_warc_files(output: OutputDir, settings: Settings) -> None:
    """With ``--warc-out``: list the WARC files written so far in the run's manifest (a
    manifest that cannot be rewritten keeps the list it had: the markers list them too)."""
    if settings.warc_out is not None:
        with contextlib.suppress(OSError, UsageError):
            list_warc_files(output, settings.warc_out)


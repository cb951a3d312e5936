"""``--engine ray``: the shards of a run as Ray tasks, on one machine or a cluster.

The driver (this process) reads the input once, splits it into shards by host (many more shards
than CPUs, so one slow shard does not leave the cluster idle at the end) and submits one task
per shard, each with its shard's items, at most ``IN_FLIGHT_PER_CPU`` per CPU at a time. A task
runs :func:`pipeline.batch.shards.shard_run.run_shard` into the shared output directory; a task
whose worker is lost is retried (``MAX_RETRIES``) and continues its own part file, so no line is
written twice. Progress comes from finished shards. A stop (Ctrl-C, SIGTERM) ends the running
tasks at once: their parts keep what they wrote, for ``--resume``. Imported only for this
engine: ``ray`` is an optional extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipeline.batch.engine import Summary
from pipeline.batch.input.items import InputItem, load_items
from pipeline.batch.input.sources import say
from pipeline.batch.progress import ProgressBar, combine
from pipeline.batch.run_plan import RunPlan
from pipeline.batch.shards.plan import count_lines
from pipeline.batch.shards.shard_run import (
    ShardJob,
    note_warc_files,
    prepare,
    run_shard,
    spooled,
    stop_signals_interrupt,
)
from pipeline.core.errors import PipelineError, UsageError
from pipeline.core.extras import install_hint

try:
    import ray as ray  # re-exported: the crawl's Ray engine imports it from here
except ImportError as exc:  # the command line turns this into a one-line usage error
    raise UsageError(f"--engine ray needs Ray: {install_hint('ray')}") from exc

SHARDS_PER_CPU = 4  # default shard count: this many per CPU of the cluster
IN_FLIGHT_PER_CPU = 2  # tasks submitted at once, per CPU (the rest wait in the driver)
MAX_RETRIES = 3  # a shard whose worker is lost runs again (and continues its part)


def _shard_task(job: ShardJob, items: list[InputItem]) -> Summary:
    """One shard in a Ray worker: no signal handling of our own (Ray stops its workers)."""
    return asyncio.run(run_shard(job, items, signals=()))


@contextmanager
def ray_session(address: str | None) -> Iterator[None]:
    """Connected to Ray for the run: ``address``'s cluster, or a new local one (shut down
    after); a session the caller already opened is used as it is."""
    if ray.is_initialized():
        yield
        return
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.ERROR)
    except Exception as exc:
        raise UsageError(f"cannot connect to Ray{f' at {address}' if address else ''}: "
                         f"{exc}") from exc
    try:
        yield
    finally:
        ray.shutdown()


def run_ray(plan: RunPlan) -> Summary:
    """Every shard not done yet as a Ray task; the summary of them all."""
    settings = plan.settings
    with ray_session(plan.address):
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        shards = plan.shards or (None if plan.resume else SHARDS_PER_CPU * cpus)
        output = prepare(plan, shards)
        already = output.done_records()
        started = time.monotonic()
        # Each task has one CPU: one handler worker beside its event loop.
        local = settings.model_copy(update={"processes": 1, "workers": 1})
        scope = plan.input.credential_scope(settings.credential_hosts)
        with spooled(plan, output, scope) as spools:
            show = not settings.quiet and sys.stderr.isatty()
            progress = ProgressBar(sum(spool.count for spool in spools.values()), enabled=show)
            try:
                tasks = _Tasks({shard: ShardJob(output, shard, local, plan.input.local_files,
                                                scope)
                                for shard in spools},
                               {shard: spool.path for shard, spool in spools.items()}, progress)
                tasks.run(IN_FLIGHT_PER_CPU * cpus)
            finally:
                progress.close()
    note_warc_files(output, settings)
    if tasks.config_errors:
        raise PipelineError("config", tasks.config_errors[0])
    summary = combine(tasks.summaries.values(), started)
    summary.skipped += already
    if tasks.kept:
        say(settings.quiet, f"the stopped shards keep {tasks.kept} records in their .partial parts")
    return summary


class _Tasks:
    """The shard tasks: submitted a few at a time, gathered as they finish."""

    def __init__(self, jobs: dict[int, ShardJob], spools: dict[int, Path],
                 progress: ProgressBar) -> None:
        self.jobs = jobs
        self.spools = spools
        self.progress = progress
        self.summaries: dict[int, Summary] = {}
        self.config_errors: list[str] = []
        self.kept = 0  # records in the parts of the shards stopped half-way
        self._total = Summary()

    def run(self, in_flight: int) -> None:
        """Every job, at most ``in_flight`` submitted at once; stops on KeyboardInterrupt."""
        task = ray.remote(_shard_task).options(num_cpus=1, max_retries=MAX_RETRIES,
                                               retry_exceptions=False)
        waiting = sorted(self.jobs)
        running: dict[Any, int] = {}
        with stop_signals_interrupt():
            try:
                while waiting or running:
                    while waiting and len(running) < in_flight:
                        shard = waiting.pop(0)
                        with open(self.spools[shard], "rb") as handle:
                            items = list(load_items(handle))
                        running[task.remote(self.jobs[shard], items)] = shard
                    done, _ = ray.wait(list(running), num_returns=1)
                    for ref in done:
                        self._finished(running.pop(ref), ref)
            except KeyboardInterrupt:
                self._stop(running)
                for shard in waiting:
                    self.summaries[shard] = Summary(interrupted=True)

    def _finished(self, shard: int, ref: Any) -> None:
        name = self.jobs[shard].name
        try:
            summary = ray.get(ref)
        except PipelineError as exc:  # Ray raises the task's own error (as a subclass)
            if exc.kind == "config":
                self.config_errors.append(exc.message)
            summary = Summary(failed=[f"{name}: {exc.message}"])
        except ray.exceptions.RayError as exc:  # lost more often than it may be retried
            lines = str(exc).strip().splitlines()
            summary = Summary(failed=[f"{name}: {lines[0] if lines else type(exc).__name__}"])
        self.summaries[shard] = summary
        self._total.absorb(summary)
        self.progress.advance(summary.records + summary.skipped, self._total)

    def _stop(self, running: dict[Any, int]) -> None:
        """End the running tasks at once (a task's part keeps what it wrote, for
        ``--resume``) and say how much they keep."""
        for ref in running:
            ray.cancel(ref, force=True)
        kept = 0
        for shard in running.values():
            self.summaries[shard] = Summary(interrupted=True)
            with contextlib.suppress(OSError):
                kept += count_lines(self.jobs[shard].output.partial(shard))
        self.kept = kept

"""``crawl --engine ray``: a sharded crawl's shards as Ray tasks, the exchange through a Ray
actor.

The actor keeps the :class:`pipeline.crawl.exchange.Hub` and a mailbox per shard; each shard
task posts its messages to the actor (fire and forget: the hub's counts make their order
not matter) and reads its mailbox with an awaited call (Ray's object references are
awaitable from asyncio), so a shard's event loop never blocks on the exchange. Every
shard must run at once (they hand each other work until all are idle): by default one
per CPU of the cluster. A shard that fails stops the others, and ``--resume`` goes on from
what every part and frontier log holds (a lost task is not retried: the hub's counts of
what it received would be wrong). Imported only for this engine: ``ray`` is an extra.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pipeline.batch.engine import Summary
from pipeline.batch.progress import combine
from pipeline.batch.shards.ray_engine import ray, ray_session  # UsageError without Ray
from pipeline.batch.shards.shard_run import stop_signals_interrupt
from pipeline.core.errors import PipelineError
from pipeline.crawl.exchange import Hub, MessageExchange, ToShard
from pipeline.crawl.run import CrawlResult
from pipeline.crawl.shards import CrawlShardJob, ShardedCrawl, run_crawl_shard


class HubActor:
    """The hub as a Ray (async) actor: messages in, a mailbox per shard out."""

    def __init__(self, shards: int, max_pages: int, used: int) -> None:
        self.hub = Hub(shards, max_pages, used)
        self.boxes: list[asyncio.Queue[ToShard]] = [asyncio.Queue() for _ in range(shards)]

    async def put(self, kind: str, shard: int, payload: Any) -> None:
        for target, message in self.hub.handle(kind, shard, payload):
            self.boxes[target].put_nowait(message)

    async def take(self, shard: int) -> list[ToShard]:
        """The shard's messages: waits for one, then takes all that are there."""
        box = self.boxes[shard]
        messages = [await box.get()]
        while not box.empty():
            messages.append(box.get_nowait())
        return messages


def _shard_task(job: CrawlShardJob, hub: Any) -> CrawlResult:
    return asyncio.run(_ray_shard(job, hub))


async def _ray_shard(job: CrawlShardJob, hub: Any) -> CrawlResult:
    def put(message: tuple[str, int, Any]) -> None:
        hub.put.remote(*message)

    exchange = MessageExchange(job.shard, put)

    async def read() -> None:
        while True:
            for message in await hub.take.remote(job.shard):
                exchange.deliver(message)
                if message[0] == "done":
                    return

    reader = asyncio.ensure_future(read())
    try:
        result = await run_crawl_shard(job, exchange, signals=())
    finally:
        reader.cancel()
    result.records = []
    return result


def run_crawl_ray(plan: ShardedCrawl) -> CrawlResult:
    """Every shard of ``plan`` as a Ray task, all at once; the crawl's result."""
    with ray_session(plan.address):
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        output, used = plan.begin(plan.shards or (None if plan.resume else cpus))
        started = time.monotonic()
        settings = plan.settings.model_copy(update={"processes": 1, "workers": 1})
        hub: Any = ray.remote(HubActor).options(num_cpus=0).remote(
            output.shards, plan.options.max_pages, used)
        task = ray.remote(_shard_task).options(
            num_cpus=min(1.0, cpus / output.shards), max_retries=0, retry_exceptions=False)
        running = {task.remote(job, hub): job for job in plan.jobs(output, settings)}
        results, summaries = _gather(running)
        ray.kill(hub)
    return plan.result(results, combine(summaries, started), used)


def _gather(running: dict[Any, CrawlShardJob]) -> tuple[list[CrawlResult], list[Summary]]:
    """The shards' results as they end; one that fails, or a stop, ends the others (their
    parts keep what they wrote, for ``--resume``)."""
    results: list[CrawlResult] = []
    summaries: list[Summary] = []
    with stop_signals_interrupt():
        try:
            while running:
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in done:
                    job = running.pop(ref)
                    try:
                        result: CrawlResult = ray.get(ref)
                    except (PipelineError, ray.exceptions.RayError) as exc:
                        message = (exc.message if isinstance(exc, PipelineError) else
                                   (str(exc).strip().splitlines() or [type(exc).__name__])[0])
                        summaries.append(Summary(failed=[f"{job.name}: {message}"]))
                        _cancel(running, summaries)
                        continue
                    results.append(result)
                    summaries.append(result.summary)
        except KeyboardInterrupt:
            _cancel(running, summaries)
    return results, summaries


def _cancel(running: dict[Any, CrawlShardJob], summaries: list[Summary]) -> None:
    for ref in running:
        ray.cancel(ref, force=True)
        summaries.append(Summary(interrupted=True))
    running.clear()

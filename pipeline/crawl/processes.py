"""``crawl --processes N``: a sharded crawl's shards as N local processes, the exchange
through the driver.

The driver (this process) keeps the :class:`pipeline.crawl.exchange.Hub`: each shard
process posts its exchange messages on the queue its progress reports already take
(:mod:`pipeline.batch.shards.processes`), and the driver answers each on that shard's own
inbox queue, read in the shard by a thread that hands every message to its event loop. A
stop (Ctrl-C, SIGTERM) is passed on as for the batch command; a shard that dies stops the
others (they need each other), and ``--resume`` goes on from what every part and frontier
log holds.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any

from pipeline.batch.engine import Summary
from pipeline.batch.shards.processes import Driver, Reporter, drive, shard_process
from pipeline.core.models import Record
from pipeline.crawl.exchange import HUB_KINDS, Hub, MessageExchange, ToShard
from pipeline.crawl.run import CrawlResult
from pipeline.crawl.shards import CrawlShardJob, ShardedCrawl, run_crawl_shard

OUTCOME = "crawl"  # a shard's report of its skips, budget and Crawl-delay cap


def run_crawl_processes(plan: ShardedCrawl) -> CrawlResult:
    """Every shard of ``plan`` in its own process, at once; the crawl's result."""
    output, used = plan.begin(plan.shards)
    started = time.monotonic()
    # The machine's handler workers, shared out: each process has the CPU of 1/N of it.
    settings = plan.settings.model_copy(update={
        "processes": 1, "workers": max(1, plan.settings.workers // output.shards)})
    hub = Hub(output.shards, plan.options.max_pages, used)
    outcomes: dict[int, CrawlResult] = {}
    inboxes: dict[int, Any] = {}

    def route(kind: str, shard: int, payload: Any) -> None:
        if kind == OUTCOME:
            outcomes[shard] = payload
        elif kind in HUB_KINDS:
            for target, message in hub.handle(kind, shard, payload):
                inboxes[target].put(message)

    jobs = plan.jobs(output, settings)
    driver = Driver({job.shard: job.name for job in jobs}, route)
    for job in jobs:
        inboxes[job.shard] = driver.context.SimpleQueue()
        driver.add(job.shard, _crawl_process, (job, inboxes[job.shard]))
    summary = drive(driver, None, settings.quiet, started, together=True)
    return plan.result(outcomes.values(), summary, used)


def _crawl_process(job: CrawlShardJob, inbox: Any, reports: Any, driver: int) -> None:
    def work(reporter: Reporter) -> Summary:
        return asyncio.run(_crawl_shard(job, inbox, reporter))

    shard_process(job.shard, reports, driver, work)


_NO_SUMMARY = Summary()  # Reporter.record's second argument, which it does not read


async def _crawl_shard(job: CrawlShardJob, inbox: Any, reporter: Reporter) -> Summary:
    exchange = MessageExchange(job.shard, reporter.put)
    loop = asyncio.get_running_loop()

    def read() -> None:  # the inbox, into the event loop, until the crawl's end
        while True:
            message: ToShard = inbox.get()
            try:
                loop.call_soon_threadsafe(exchange.deliver, message)
            except RuntimeError:  # the loop is closed: the shard was stopped
                return
            if message[0] == "done":
                return

    threading.Thread(target=read, name="pipeline-crawl-inbox", daemon=True).start()

    def on_record(record: Record) -> None:
        reporter.record(record, _NO_SUMMARY)

    result = await run_crawl_shard(job, exchange, on_record=on_record,
                                   signals=(signal.SIGTERM,))
    result.records = []
    reporter.put((OUTCOME, job.shard, result))
    return result.summary

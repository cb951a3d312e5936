"""``crawl --engine ray``: not yet."""

from __future__ import annotations

from pipeline.core.errors import UsageError
from pipeline.crawl.run import CrawlResult
from pipeline.crawl.shards import ShardedCrawl


def run_crawl_ray(plan: ShardedCrawl) -> CrawlResult:
    raise UsageError("not yet")

"""The shared loop of the baseline clients: aiohttp + ``asyncio.gather`` + a semaphore.

Deliberately the obvious script a user would write: one task per URL created up front, a
semaphore bounding requests in flight, and ``on_body`` called on the event loop for every
page. It prints one JSON line ``{"ok": .., "errors": .., "bytes": ..}`` for the runner.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import aiohttp


async def crawl(urls: list[str], concurrency: int, on_body: Callable[[bytes], object]) -> dict:
    """Fetch every URL (``concurrency`` at a time) and hand each 200 body to ``on_body``."""
    counts = {"ok": 0, "errors": 0, "bytes": 0}
    semaphore = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one(url: str) -> None:
            async with semaphore:
                try:
                    async with session.get(url) as response:
                        body = await response.read()
                        response.raise_for_status()
                    on_body(body)
                except Exception:
                    counts["errors"] += 1
                    return
                counts["ok"] += 1
                counts["bytes"] += len(body)

        await asyncio.gather(*(one(url) for url in urls))
    return counts


def main(description: str, on_body: Callable[[bytes], object]) -> None:
    """Command line shared by the baselines: ``URLS_FILE [--concurrency N]``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("urls", type=Path)
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    urls = [line.strip() for line in args.urls.read_text().splitlines() if line.strip()]
    print(json.dumps(asyncio.run(crawl(urls, args.concurrency, on_body))), flush=True)

"""What the full-text cache costs per URL: a miss (load + store) and a hit, for pages of a
typical size, one at a time and 64 in flight. SQLite in a temporary directory, no network.

    python benchmarks/cache_overhead.py [--urls 2000] [--chars 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.core.models import Record
from pipeline.store.cache import TextCache


async def run(cache: TextCache, urls: int, text: str, concurrency: int, prefix: str) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async def load() -> Record:
            return Record(url=f"https://example.test/{i}", ok=True, content=text, chars=len(text))

        async with gate:
            await cache.get_or_load(f"{prefix}{i}", load)

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(urls)))
    return (time.perf_counter() - started) / urls * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--chars", type=int, default=20_000)
    args = parser.parse_args()
    text = ("Lorem ipsum dolor sit amet. " * (args.chars // 28 + 1))[: args.chars]
    print(f"| in flight | miss (load + store) µs/URL | hit µs/URL |  ({args.urls} URLs, "
          f"{args.chars} chars each)")
    print("|---|---|---|")
    for concurrency in (1, 64):
        with tempfile.TemporaryDirectory() as directory:
            cache = TextCache(directory)
            miss = await run(cache, args.urls, text, concurrency, "k")
            hit = await run(cache, args.urls, text, concurrency, "k")
            cache.close()
        print(f"| {concurrency} | {miss:.0f} | {hit:.0f} |")


if __name__ == "__main__":
    asyncio.run(main())

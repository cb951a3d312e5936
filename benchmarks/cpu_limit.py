"""The CPU-bound limit: our handler over the corpus pages in memory, on one core.

No network, no engine: ``handlers.default_registry()`` picks the handler for each page as the
engine would and runs it. The batch throughput can at best be this single-core rate times the
number of cores (less whatever the corpus server and the event loop use of them). It prints
JSON with the CPU ms per page of each pass (``pass_ms``) and their median (``ms_per_page``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from dataclasses import dataclass

from corpus_server import PageKind, dataset_bodies

from handlers import HandlerContext, HandlerRegistry, default_registry
from pipeline.core.errors import PipelineError

MEDIA_TYPES = {"html": "text/html", "text": "text/plain", "article": "text/plain"}


@dataclass(frozen=True)
class CpuLimit:
    kind: PageKind
    handler: str
    pages: int
    failures: int
    pass_ms: tuple[float, ...]  # CPU ms per page of each pass over the corpus

    @property
    def ms_per_page(self) -> float:
        """The median pass: a shared machine's speed drifts both ways between passes."""
        return statistics.median(self.pass_ms)

    @property
    def single_core_rate(self) -> float:
        return 1000.0 / self.ms_per_page


def _corpus(kind: PageKind) -> tuple[list[bytes], str, HandlerRegistry]:
    """The benchmark's pages of ``kind``, their media type, the default handlers."""
    return dataset_bodies(kind), MEDIA_TYPES[kind], default_registry()


def measure_cpu_limit(kind: PageKind, warmup: int = 10, passes: int = 3) -> CpuLimit:
    """Average CPU time of the handler per page over every corpus page, for each of
    ``passes`` passes (after ``warmup`` pages)."""
    pages, media_type, registry = _corpus(kind)
    handler = registry.select(media_type, pages[0][:1024])

    def run(index: int, body: bytes) -> bool:
        ctx = HandlerContext(url=f"http://127.0.0.1/p/{index}", media_type=media_type,
                             charset="utf-8", format="text")
        try:
            registry.select(media_type, body[:1024]).handle(body, ctx)
        except Exception:  # an empty or refused page still costs its parse
            return False
        return True

    for index, body in enumerate(pages[:warmup]):
        run(index, body)
    pass_ms: list[float] = []
    failures = 0
    for _ in range(passes):
        started = time.process_time()
        failures = sum(not run(index, body) for index, body in enumerate(pages))
        pass_ms.append(1000.0 * (time.process_time() - started) / len(pages))
    return CpuLimit(kind, handler.name, len(pages), failures, tuple(pass_ms))


async def _drive_pool(kind: PageKind, n: int, workers: int) -> dict:
    from pipeline.batch.pool import ProcessRunner

    pages, media_type, registry = _corpus(kind)
    ctx = HandlerContext(url="http://127.0.0.1/p/0", media_type=media_type, charset="utf-8",
                         format="text", options={"max_chars": 100_000})
    async with ProcessRunner(workers, timeout=60.0) as runner:
        await runner.started()
        gate = asyncio.Semaphore(2 * workers)  # a job always waiting for each worker

        async def one(index: int) -> bool:
            body = pages[index % len(pages)]
            async with gate:
                try:
                    await runner.run(registry.select(media_type, body[:1024]), body, ctx)
                except PipelineError:
                    return False
            return True

        started = time.perf_counter()
        failures = sum(not ok for ok in await asyncio.gather(*(one(i) for i in range(n))))
        wall = time.perf_counter() - started
    return {"kind": kind, "workers": workers, "pages": n, "failures": failures,
            "pages_per_s": n / wall}


def measure_pool(kind: PageKind, n: int = 2_000, workers: int | None = None) -> dict:
    """The handler pool alone: ``workers`` (default: the cores) batch workers over the pages
    in memory — what the engine could do with free fetching. On a machine with as many cores
    as workers the event loop and the workers share them, as they do in a real run."""
    return asyncio.run(_drive_pool(kind, n, workers or os.cpu_count() or 1))


if __name__ == "__main__":
    import argparse
    import dataclasses
    import json

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=tuple(MEDIA_TYPES))
    parser.add_argument("--pool", type=int, metavar="N",
                        help="instead: N pages through the batch worker pool")
    options = parser.parse_args()
    if options.pool:
        print(json.dumps(measure_pool(options.kind, options.pool)))
    else:
        limit = measure_cpu_limit(options.kind)
        print(json.dumps({**dataclasses.asdict(limit), "ms_per_page": limit.ms_per_page}))

"""``--dedup`` writes in input order: which copy is kept, and what ordering costs.

    python benchmarks/dedup_order.py [--pairs 2000] [--rounds 3] [--no-write]

The batch engine runs over ``2 × pairs`` lines, pairs of near copies (lines 2k and 2k+1: a
300-word text and the same with three words changed), with ``--dedup near`` marking each
record as it is written, at ``--concurrency 64``. No network: each line's extraction is a
sleep drawn from a log-normal latency (median 50 ms, σ 1: one line in 100 takes over half a
second, as slow pages do), the same draws for every variant of a round. Variants: records
written in completion order (what ``--dedup`` did before issue 33) and in input order (what
it does now, through the ``--ordered`` reorder buffer), and in input order with larger reorder
buffers (what a larger buffer would buy). Reported: the pairs whose earlier
line is the original, and the median wall time over the rounds. The report goes to stdout and
into ``benchmarks/README.md`` between the ``dedup-order`` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.readme_block import write_block  # noqa: E402
from pipeline.batch import engine as engine_module  # noqa: E402
from pipeline.batch.dedup import Deduplicator  # noqa: E402
from pipeline.batch.engine import BatchEngine  # noqa: E402
from pipeline.batch.input.items import read_items  # noqa: E402
from pipeline.batch.scheduler import StreamScheduler  # noqa: E402
from pipeline.core.models import Record  # noqa: E402
from pipeline.core.settings import load_settings  # noqa: E402

CONCURRENCY = 64
VOCABULARY = [f"word{n}" for n in range(400)]


def pair_texts(pairs: int, rng: random.Random) -> list[str]:
    texts = []
    for _ in range(pairs):
        words = rng.choices(VOCABULARY, k=300)
        copy = list(words)
        for place in rng.sample(range(len(copy)), 3):
            copy[place] = "changed"
        texts += [" ".join(words), " ".join(copy)]
    return texts


async def one_run(texts: list[str], latency: list[float], ordered: bool,
                  factor: int) -> tuple[int, float]:
    """Pairs whose earlier line is the original, and the wall time, with a reorder buffer
    of ``factor`` × the concurrency."""
    engine_module.REORDER_FACTOR = factor
    urls = [f"http://h{n % 50}.test/p/{n}" for n in range(len(texts))]
    by_url = {url: n for n, url in enumerate(urls)}

    async def extract(url: str) -> Record:
        n = by_url[url]
        await asyncio.sleep(latency[n])
        return Record(url=url, ok=True, content=texts[n], chars=len(texts[n]))

    settings = load_settings({"concurrency": CONCURRENCY, "ordered": ordered,
                              "per_host": CONCURRENCY}, env={})
    written: list[Record] = []
    engine = BatchEngine(settings, extract, written.append, mark=Deduplicator("near").mark)
    lines = io.BytesIO("".join(f"{url}\n" for url in urls).encode())
    started = time.perf_counter()
    await engine.run(StreamScheduler.reading(read_items(lines)))
    wall = time.perf_counter() - started
    marks = {record.index: record.duplicate_of for record in written}
    kept = sum(marks[2 * k] is None and marks[2 * k + 1] == 2 * k
               for k in range(len(texts) // 2))
    return kept, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    default = engine_module.REORDER_FACTOR
    variants = {"completion order (before)": (False, default),
                f"input order (now; buffer {default} × concurrency)": (True, default),
                "input order, buffer 16 × concurrency": (True, 16),
                "input order, buffer 64 × concurrency": (True, 64)}
    kept: dict[str, list[int]] = {name: [] for name in variants}
    walls: dict[str, list[float]] = {name: [] for name in variants}
    load = [os.getloadavg()[0]]
    for round_ in range(args.rounds):
        rng = random.Random(round_)
        texts = pair_texts(args.pairs, rng)
        latency = [rng.lognormvariate(-3.0, 1.0) for _ in texts]  # median e^-3 = 50 ms
        for name, (ordered, factor) in variants.items():
            found, wall = asyncio.run(one_run(texts, latency, ordered, factor))
            kept[name].append(found)
            walls[name].append(wall)
    load.append(os.getloadavg()[0])
    first = statistics.median(walls[next(iter(variants))])
    lines = [f"{args.pairs:,} planted pairs (lines 2k, 2k+1), `--dedup near`, concurrency "
             f"{CONCURRENCY}, simulated latency (log-normal, median 50 ms, σ 1); median of "
             f"{args.rounds} rounds; load average {load[0]:.1f} at the start, {load[1]:.1f} "
             "at the end.", "",
             "| records written in | pairs whose earlier line is the original (each round) "
             "| wall s | vs completion order |", "|---|---|---:|---:|"]
    for name in variants:
        wall = statistics.median(walls[name])
        shares = ", ".join(f"{k / args.pairs:.3f}" for k in kept[name])
        lines.append(f"| {name} | {shares} | {wall:.2f} | {(wall / first - 1) * 100:+.0f}% |")
    lines += ["", f"Command: `python benchmarks/dedup_order.py --pairs {args.pairs} "
              f"--rounds {args.rounds}`"]
    report = "\n".join(lines)
    print(report)
    if not args.no_write:
        write_block(report, "dedup-order", "## Duplicates in input order (`dedup_order.py`)")


if __name__ == "__main__":
    main()

"""The crawl frontier's memory per URL: N synthetic URLs offered (all new), half of them
still queued, the other half handed out and finished, as in a crawl midway.

    python -m benchmarks.crawl_frontier [--urls 1000000]

Measured with tracemalloc (every Python allocation the frontier holds after the offers,
the URL strings of the queued half included: a queue holds its URLs).
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

from pipeline.crawl.frontier import Frontier


def synthetic_url(number: int) -> str:
    """A plausible documentation-site URL, ~60 characters, every one distinct."""
    return (f"https://docs.example.org/section-{number % 97}/topic-{number // 97}/"
            f"page-{number}.html?lang=en")


def fill(urls: int) -> Frontier:
    """Offer ``urls`` new URLs, then hand out and finish half of them."""
    frontier = Frontier(max_pages=urls)
    parent = synthetic_url(0)
    for number in range(urls):
        frontier.offer(synthetic_url(number), depth=1, parent=parent, via="link")
    for _ in range(urls // 2):
        entry = frontier.next()
        assert entry is not None
        frontier.finished(entry, counted=True)
    return frontier


def measure(urls: int) -> dict[str, float]:
    started = time.perf_counter()  # timed without tracemalloc, which slows every allocation
    fill(urls)
    elapsed = time.perf_counter() - started
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    frontier = fill(urls)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(frontier) == urls - urls // 2
    return {"urls": urls, "bytes_per_url": held / urls, "seconds": elapsed,
            "us_per_url": elapsed / urls * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    result = measure(parser.parse_args().urls)
    print("| URLs | bytes per URL (seen-set + queue, half queued) | offer+next µs per URL |")
    print("|---|---|---|")
    print(f"| {result['urls']:,} | {result['bytes_per_url']:.0f} | {result['us_per_url']:.1f} |")


if __name__ == "__main__":
    main()

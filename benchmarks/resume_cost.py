"""How much ``--resume`` costs: scan a synthetic JSONL output of N records (default
1,000,000, ~1 KB of content each, a torn last line) for the done (index, url) pairs.

    python benchmarks/resume_cost.py [--lines N] [--content-chars C] [--keep FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.batch.output.sinks import scan_done
from pipeline.core.models import Record


def write_output(path: Path, lines: int, content_chars: int) -> None:
    template = Record(url="http://example.test/page/0000000", index=0, ok=True,
                      content="word " * (content_chars // 5), status=200,
                      content_type="text/html", handler="html", format="markdown")
    head, _, tail = template.to_json().partition('"index":0')
    with path.open("wb") as handle:
        for index in range(lines):
            line = (head.replace("0000000", f"{index:07d}") + f'"index":{index}' + tail + "\n")
            handle.write(line.encode())
        handle.write(b'{"url":"http://example.test/torn","index":')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--content-chars", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="write the synthetic output here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.keep or Path(scratch) / "out.jsonl"
        write_output(path, args.lines, args.content_chars)
        size = os.path.getsize(path)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpu, wall = time.process_time(), time.perf_counter()
        done, dropped = scan_done(path)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert len(done) == args.lines and dropped > 0
    print(f"resume scan of {args.lines:,} records ({size / 1e6:,.0f} MB): "
          f"{wall:.2f}s wall, {cpu:.2f}s CPU, {args.lines / wall:,.0f} lines/s, "
          f"peak RSS +{(rss_after - rss_before) / 1024:.0f} MB")


if __name__ == "__main__":
    main()

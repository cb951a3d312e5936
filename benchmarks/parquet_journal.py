"""What Parquet output's journal costs: 20,000 records of 5,000 characters through
:class:`pipeline.batch.output.parquet_sink.ParquetSink`, with its journal and with the journal
replaced by a sink that writes nothing (the output before issue 33); median of 3 rounds.

    python benchmarks/parquet_journal.py [--records 20000] [--rounds 3]

Prints the report (the figures are quoted in ``benchmarks/README.md``, "Parquet journal").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.batch.output import parquet_sink  # noqa: E402
from pipeline.core.models import Record  # noqa: E402


class _NoJournal:
    """A journal that keeps nothing."""

    @classmethod
    def open(cls, path: object, *, append: bool = False) -> _NoJournal:
        return cls()

    def write(self, record: Record) -> None:
        pass

    def close(self) -> None:
        pass


def one_run(records: list[Record], journal: bool) -> tuple[float, float]:
    real = parquet_sink.JsonlSink
    if not journal:
        parquet_sink.JsonlSink = _NoJournal  # type: ignore[misc,assignment]
    try:
        with tempfile.TemporaryDirectory() as folder:
            wall, cpu = time.perf_counter(), time.process_time()
            sink = parquet_sink.ParquetSink(Path(folder) / "out.parquet")
            for record in records:
                sink.write(record)
            sink.close()
            return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        parquet_sink.JsonlSink = real  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    text = ("A paragraph of extracted text with a few words in it. " * 100)[:5000]
    records = [Record(url=f"https://h{n % 50}.test/p/{n}", index=n, ok=True, content=text,
                      chars=len(text), title="T") for n in range(args.records)]
    found: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.rounds):
        for journal in (False, True):
            found[journal].append(one_run(records, journal))
    print(f"{args.records:,} records of 5,000 characters, median of {args.rounds} rounds, "
          f"load average {os.getloadavg()[0]:.1f}:")
    for journal, runs in found.items():
        wall = statistics.median(run[0] for run in runs)
        cpu = statistics.median(run[1] for run in runs)
        print(f"- {'with' if journal else 'without'} the journal: {wall:.2f} s wall, "
              f"{cpu:.2f} s CPU, {cpu / args.records * 1e6:.0f} µs CPU per record")


if __name__ == "__main__":
    main()

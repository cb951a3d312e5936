"""What language detection and ``--dedup`` cost a batch run, variants taking turns.

    python benchmarks/corpus_cost.py [--n 2000] [--rounds 3] [--kind html] [--no-write]

The corpus server (``corpus_server.py``) serves N distinct dev-set pages over 64 hosts and
``python -m pipeline`` reads them as ``throughput.py`` runs it (``--format text``, per-host
limits opened, the whole process tree measured). Each round runs every variant once, in
turn: no detection (``--no-detect-lang``: the run before detection was on by default),
the default (detection in the handler workers), and the default with ``--dedup exact`` and
``--dedup near`` (marking in the main process, before each record is written). Reported:
the median over the rounds of wall time, CPU of the process tree and of the main process,
and each against the first variant. The report goes to stdout and into
``benchmarks/README.md`` between the ``corpus-cost`` markers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import psutil
from corpus_server import serve_in_subprocess
from readme_block import write_block
from throughput import HOSTS, Case, Row, run_case

VARIANTS = {
    "no detection (`--no-detect-lang`)": ["--no-detect-lang"],
    "detection (the default)": [],
    "detection, `--dedup exact`": ["--dedup", "exact"],
    "detection, `--dedup near`": ["--dedup", "near"],
}


def report(results: dict[str, list[Row]], args: argparse.Namespace, load: list[float]) -> str:
    def median(name: str, field: str) -> float:
        return statistics.median(getattr(row, field) for row in results[name])

    first = next(iter(results))
    lines = ["| variant | wall s | vs first | CPU s, process tree | vs first | "
             "CPU s, main process | vs first | ok |", "|---|" + "---:|" * 7]
    for name, rows in results.items():
        cells = []
        for field in ("wall_s", "cpu_s", "main_cpu_s"):
            value, base = median(name, field), median(first, field)
            cells += [f"{value:.1f}", f"{(value / base - 1) * 100:+.0f}%" if base else "—"]
        lines.append(f"| {name} | " + " | ".join(cells)
                     + f" | {min(row.ok for row in rows):,} |")
    return (f"{args.n:,} {args.kind} pages over {HOSTS} hosts on 127.0.0.1, "
            f"`--workers {args.workers} --concurrency {args.concurrency}`; median of "
            f"{args.rounds} rounds, the variants taking turns; load average "
            f"{load[0]:.1f} at the start, {load[1]:.1f} at the end.\n\n" + "\n".join(lines)
            + f"\n\nCommand: `python benchmarks/corpus_cost.py --n {args.n} "
            f"--rounds {args.rounds} --kind {args.kind}`")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000, help="URLs per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each variant")
    parser.add_argument("--kind", default="html", choices=("html", "text", "article"))
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-write", action="store_true",
                        help="do not update benchmarks/README.md")
    args = parser.parse_args(argv)
    results: dict[str, list[Row]] = {name: [] for name in VARIANTS}
    load = [os.getloadavg()[0]]
    case = Case("pipeline", args.kind, args.n, 0.0)
    with tempfile.TemporaryDirectory(prefix="corpus-cost-") as tmp, \
            serve_in_subprocess(args.kind, 0.0, hosts=HOSTS) as (bases, proc):  # type: ignore[arg-type]
        server = psutil.Process(proc.pid)
        for _ in range(args.rounds):
            for name, flags in VARIANTS.items():
                options = argparse.Namespace(concurrency=args.concurrency,
                                             workers=args.workers, pipeline_arg=flags)
                row = run_case(case, bases, server, Path(tmp), options)
                results[name].append(row)
                print(f"{name}: {row.wall_s:.1f} s wall, {row.cpu_s:.1f} s CPU "
                      f"({row.main_cpu_s:.1f} main), ok {row.ok} {row.note}", flush=True)
    load.append(os.getloadavg()[0])
    text = report(results, args, load)
    print("\n" + text)
    if not args.no_write:
        write_block(text, "corpus-cost", "## Language and duplicates in a run (`corpus_cost.py`)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

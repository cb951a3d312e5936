"""Start-up: from ``python -m pipeline`` to its first record, for one local URL.

One URL (the corpus page of median size, 115 KB, from ``corpus_server.py``, served as HTML
or as plain text of the same size) is extracted ``--repeat`` times per kind and per
checkout: this one and, with ``--against DIR``, another (e.g. ``git worktree add ../before
main``), the checkouts taking turns run by run so both meet the same machine load. Reported
per case, as the median over the runs (min–max beside it): the wall time to the first record
on stdout, the wall time until every process of the run has ended, and the CPU time of the
whole process tree and of the command's own process (``measure.py``; the latter sampled every
20 ms). CPU time is the figure to compare on a shared machine; the load average is printed.

Bytecode is written and warmed first, whatever ``PYTHONDONTWRITEBYTECODE`` says: without
``.pyc`` files every run would pay for compiling our own modules again (about 60 ms of CPU
on the benchmark machine, in the main process and again in the handler pool's server).

    python benchmarks/first_record.py --repeat 9
    python benchmarks/first_record.py --against ../before --repeat 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from corpus_server import dataset_bodies, serve_in_subprocess
from measure import Measurement, run_measured

REPO = Path(__file__).resolve().parent.parent
KINDS = ("html", "text")


def median_page() -> int:
    """The index of the corpus page of median size."""
    sizes = [len(body) for body in dataset_bodies("html")]
    return sizes.index(statistics.median_low(sizes))


def run_once(checkout: Path, url_file: Path) -> Measurement:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "pipeline", str(url_file), "--allow-net", "127.0.0.1/32",
               "--quiet"]
    measured = run_measured(command, cwd=checkout, env=env, timeout=120, interval=0.02)
    if measured.returncode != 0 or measured.first_line_s is None:
        raise SystemExit(f"{checkout}: run failed ({measured.returncode}): "
                         f"{measured.stderr[-500:]}")
    return measured


def spread(values: list[float]) -> str:
    return (f"{statistics.median(values) * 1000:.0f} "
            f"({min(values) * 1000:.0f}–{max(values) * 1000:.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per kind and checkout")
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another checkout to measure, run for run with this one")
    args = parser.parse_args()
    checkouts = [REPO, *(path.resolve() for path in args.against)]
    load_before = os.getloadavg()[0]
    page = median_page()
    runs: dict[tuple[str, Path], list[Measurement]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as scratch:
        for kind in KINDS:
            with serve_in_subprocess(kind) as (bases, _):
                url_file = Path(scratch) / f"{kind}.txt"
                url_file.write_text(f"{bases[0]}/p/{page}\n")
                for checkout in checkouts:  # writes the bytecode, warms the file cache
                    run_once(checkout, url_file)
                for _ in range(args.repeat):
                    for checkout in checkouts:
                        runs[kind, checkout].append(run_once(checkout, url_file))
    print(f"load average (1 min) before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f}; "
          f"{args.repeat} runs per row, median (min–max)\n")
    print("| page | checkout | first record ms | all ended ms | CPU ms, process tree | "
          "CPU ms, main process |")
    print("|---|---|---|---|---|---|")
    for (kind, checkout), measured in runs.items():
        name = "this" if checkout == REPO else checkout.name
        print(f"| {kind} | {name} | {spread([m.first_line_s or 0.0 for m in measured])} | "
              f"{spread([m.wall_s for m in measured])} | "
              f"{spread([m.cpu_s for m in measured])} | "
              f"{spread([m.root_cpu_s for m in measured])} |")


if __name__ == "__main__":
    main()

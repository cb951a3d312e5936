"""What a re-run with ``--cache DIR`` costs over an unchanged site, against the first run.

The corpus server (``corpus_server.py --validators``, its own process) serves N distinct pages
with an ``ETag`` and a ``Last-Modified`` and answers a matching conditional GET with ``304``.
Each round, with a fresh cache directory, runs the batch command three times over the same
N URLs, each a subprocess whose whole process tree is measured (``measure.py``):

* ``first``: an empty cache — every page fetched (HEAD guard and GET) and extracted;
* ``revalidate``: the same list with ``--cache-ttl 0.001``, so every stored page is stale:
  one conditional GET per URL, a ``304``, the cached record, no extraction;
* ``hit``: again within the TTL — no request at all.

Rounds alternate the three in this order ``--repeat`` times; the table gives the median of each
(URLs/s of the whole command and of the run alone — from its closing line, start-up
excluded —, client CPU of the whole process tree, server CPU, requests the server saw by
method and status), with the machine's load average at the start.

    python benchmarks/revalidation.py [--urls 2000] [--kind html] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil
from corpus_server import serve_in_subprocess
from measure import run_measured

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RUNS = {"first": "3600", "revalidate": "0.001", "hit": "3600"}  # run: --cache-ttl
TIMEOUT = 1800.0
ENGINE_RATE = re.compile(r"\(([\d.]+) URLs/s\)")


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    server_cpu_s: float
    requests: dict[str, int]
    summary: str
    ok: int

    @property
    def engine_rate(self) -> float:
        """URLs/s of the run itself, from its closing line (start-up excluded)."""
        match = ENGINE_RATE.search(self.summary)
        return float(match.group(1)) if match else 0.0


def _stats(base_url: str) -> dict[str, int]:
    # loopback only; no proxy from the environment
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{base_url}/stats", timeout=10) as response:
        return json.load(response)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_once(base_url: str, server: psutil.Process, urls: Path, cache: Path, ttl: str,
             args: argparse.Namespace) -> Run:
    out = urls.with_suffix(".jsonl")
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pipeline", str(urls), "-o", str(out),
               "--allow-net", "127.0.0.1/32", "--format", "text",
               "--concurrency", str(args.concurrency), "--per-host", str(args.concurrency),
               "--rate", "inf", "--cache", str(cache), "--cache-ttl", ttl]
    before, cpu_before = _stats(base_url), server.cpu_times()
    measured = run_measured(command, cwd=REPO, env=_env(), timeout=TIMEOUT)
    after, cpu_after = _stats(base_url), server.cpu_times()
    if measured.returncode != 0:
        raise SystemExit(f"run failed ({measured.returncode}): {measured.stderr[-500:]}")
    ok = sum(json.loads(line)["ok"] for line in out.read_text().splitlines())
    return Run(
        measured.wall_s, measured.cpu_s,
        (cpu_after.user + cpu_after.system) - (cpu_before.user + cpu_before.system),
        {k: after[k] - before.get(k, 0) for k in sorted(after) if after[k] != before.get(k, 0)},
        measured.stderr.strip().splitlines()[-1], ok)


def row(name: str, runs: list[Run], n: int) -> str:
    runs = sorted(runs, key=lambda r: r.wall_s)
    median = runs[(len(runs) - 1) // 2]
    rates = ", ".join(f"{n / r.wall_s:.0f}" for r in sorted(runs, key=lambda r: n / r.wall_s))
    requests = ", ".join(f"{k} {v}" for k, v in median.requests.items()) or "none"
    return (f"| {name} | {n / median.wall_s:.0f} ({rates}) | "
            f"{statistics.median(r.engine_rate for r in runs):.0f} | {median.wall_s:.2f} | "
            f"{statistics.median(r.cpu_s for r in runs):.2f} | "
            f"{statistics.median(r.server_cpu_s for r in runs):.2f} | {requests} | "
            f"{median.ok} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--kind", choices=("html", "text", "article"), default="html")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args(argv)
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    results: dict[str, list[Run]] = {name: [] for name in RUNS}
    with serve_in_subprocess(args.kind, validators=True) as (bases, proc), \
            tempfile.TemporaryDirectory() as work:
        base_url = bases[0]
        server = psutil.Process(proc.pid)
        urls = Path(work) / "urls.txt"
        urls.write_text("".join(f"{base_url}/p/{i}\n" for i in range(args.urls)))
        for round_number in range(args.repeat):
            cache = Path(work) / f"cache{round_number}"
            for name, ttl in RUNS.items():
                run = run_once(base_url, server, urls, cache, ttl, args)
                results[name].append(run)
                print(f"round {round_number + 1} {name}: {args.urls / run.wall_s:.0f} URLs/s, "
                      f"cpu {run.cpu_s:.2f} s, {run.requests}; {run.summary}", flush=True)
    print(f"\n{args.urls} {args.kind} pages, {os.cpu_count()} cores, load average at start "
          f"{load}, median of {args.repeat} (all runs' URLs/s in brackets)\n")
    print("| run | URLs/s, whole command | URLs/s, run alone | wall s | client CPU s | "
          "server CPU s | requests seen | ok |")
    print("|---|---|---|---|---|---|---|---|")
    for name, runs in results.items():
        print(row(name, runs, args.urls))


if __name__ == "__main__":
    main()

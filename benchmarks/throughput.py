"""Batch throughput: the pipeline against a naive script, a fetch-only loop and the CPU limit.

For each page kind (html; text: plain text as large as the HTML pages; article: each page's
ground-truth article text), latency (0, 50 ms) and size N (2,000, 20,000) the corpus server
(``corpus_server.py``, its own process) serves N distinct URLs over ``--hosts`` hosts (ports;
the URLs take turns) and each client runs as a subprocess whose whole process tree is
measured (``measure.py``), ``--repeat`` times (the run with the median URLs/s is reported):

* ``pipeline``: ``python -m pipeline`` with the per-host politeness limits opened
  (``--per-host``/``--rate``: the benchmark measures the machine, not politeness);
* ``processes2``: the same with ``--processes 2`` (two shards by host, two processes;
  plain-text kinds only);
* ``ray``: the same with ``--engine ray`` (a local Ray started by the command; article only);
* ``raykill``: ``ray`` again, with the worker process of one running shard task killed once
  its part holds ``KILL_AFTER`` records (Ray retries the task; the run must still have every
  line exactly once);
* ``naive``: aiohttp + gather + semaphore + readability-lxml on the event loop (html only);
* ``fetch``: the same loop with the body dropped — the ceiling of the fetch path.

A sharded run's records are read from its parts; an index found twice or missing is counted
as a ``duplicate`` or ``missing_record`` error.

``cpu:<kind>`` is the CPU-bound limit: our handler over the pages in memory on one core,
times the number of cores (``cpu_limit.py``), with passes taken before and after the cases
(the median pass is the limit). ``pool:html`` is the batch worker pool alone over the same
pages in memory (``cpu_limit.py html --pool N``, the median of its runs): what the engine
could reach if fetching cost nothing. The table goes to stdout and into
``benchmarks/README.md`` between the ``throughput`` markers.

    python benchmarks/throughput.py            # the full run (about 12 minutes on 2 cores)
    python benchmarks/throughput.py --quick    # N=500 smoke run
    python benchmarks/throughput.py --only 'fetch:*' --only 'naive:html:*:50'
    python benchmarks/throughput.py --only 'pipeline:html:2000:50' --only 'cpu:html' --repeat 3
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import itertools
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from itertools import groupby
from pathlib import Path

import psutil
from corpus_server import PageKind, dataset_bodies, serve_in_subprocess
from measure import Measurement, run_measured

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
README = BENCH / "README.md"
START, END = "<!-- throughput:start -->", "<!-- throughput:end -->"

KINDS = ("html", "text", "article")
# tool: its flags (a sharded tool writes a directory); its label in the targets
PIPELINE_TOOLS = {"pipeline": [], "processes2": ["--processes", "2"],
                  "ray": ["--engine", "ray"], "raykill": ["--engine", "ray"]}
SHARDED = ("processes2", "ray", "raykill")
HOSTS = 64  # hosts the corpus server plays by default (--hosts); shards split by host
KILL_AFTER = 300  # raykill: records in a shard's part before its worker is killed
# The plain-text kinds, each against the fetch-only loop; {kb} is its average body size.
PLAIN_LABELS: dict[PageKind, str] = {
    "text": "text (HTML-sized bodies, avg {kb} KB)",
    "article": "article text (avg {kb} KB)",
}
LATENCIES = (0.0, 0.05)
SIZES = (2_000, 20_000)
QUICK_SIZES = (500,)
# The naive client runs readability on one core: about 30 ms a page, so 20,000 pages take
# ~10 minutes per latency while its rate does not depend on N. Select it with --only.
DEFAULT_EXCLUDE = ("naive:html:20000:*",)
CASE_TIMEOUT = 1800.0
POOL_PAGES = 2_000


@dataclass(frozen=True)
class Case:
    tool: str  # pipeline | processes2 | ray | raykill | naive | fetch
    kind: str
    n: int
    latency: float

    @property
    def id(self) -> str:
        return f"{self.tool}:{self.kind}:{self.n}:{round(self.latency * 1000)}"


@dataclass
class Row:
    case: Case
    wall_s: float
    cpu_s: float
    main_cpu_s: float
    server_cpu_s: float
    peak_mib: float
    ok: int
    errors: int
    error_kinds: dict[str, int] = field(default_factory=dict)
    note: str = ""
    run_rates: list[float] = field(default_factory=list)  # URLs/s of every run, ascending

    @property
    def rate(self) -> float:
        return self.case.n / self.wall_s if self.wall_s else 0.0


def matrix(sizes: tuple[int, ...]) -> list[Case]:
    return [
        Case(tool, kind, n, latency)
        for kind in KINDS for latency in LATENCIES for n in sizes
        for tool in ("pipeline", "processes2", "ray", "raykill", "naive", "fetch")
        if not (tool == "naive" and kind != "html")
        and not (tool == "processes2" and kind not in PLAIN_LABELS)
        and not (tool in ("ray", "raykill") and (kind != "article" or latency))
        and not (tool == "raykill" and n != max(sizes))
    ]


def selected(ids: list[str], only: list[str] | None) -> list[str]:
    if only:
        return [i for i in ids if any(fnmatch.fnmatchcase(i, p) for p in only)]
    return [i for i in ids if not any(fnmatch.fnmatchcase(i, p) for p in DEFAULT_EXCLUDE)]


def subprocess_env() -> dict[str, str]:
    """Children import this checkout's ``pipeline`` and ``handlers`` (repo root on the path)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def client_command(case: Case, urls: Path, out: Path, args: argparse.Namespace) -> list[str]:
    if case.tool in PIPELINE_TOOLS:
        return [
            sys.executable, "-m", "pipeline", str(urls), "-o", str(out), "--quiet",
            "--allow-net", "127.0.0.1/32", "--format", "text",
            "--concurrency", str(args.concurrency), "--workers", str(args.workers),
            # The machine is measured, not politeness: open the per-host limits.
            "--per-host", str(args.concurrency), "--rate", "inf",
            *PIPELINE_TOOLS[case.tool],
            *args.pipeline_arg,
        ]
    script = {"naive": "naive.py", "fetch": "fetch_only.py"}[case.tool]
    return [sys.executable, str(BENCH / script), str(urls), "--concurrency", str(args.concurrency)]


def record_lines(out: Path) -> list[Path]:
    """The files holding a run's records: its output, or a sharded run's parts."""
    if out.is_dir():
        return sorted([*out.glob("part-*.jsonl"), *out.glob("part-*.jsonl.partial")])
    return [out] if out.exists() else []


def count_records(case: Case, out: Path, measured: Measurement) -> tuple[int, int, dict[str, int]]:
    """(ok, errors, errors by kind) from the pipeline's JSONL or a baseline's summary line;
    an index recorded twice is a ``duplicate`` error, one never recorded ``missing_record``."""
    if case.tool not in PIPELINE_TOOLS:
        lines = measured.stdout.strip().splitlines()
        summary = json.loads(lines[-1]) if lines else {"ok": 0, "errors": case.n}
        return summary["ok"], summary["errors"], {}
    kinds: Counter[str] = Counter()
    ok = 0
    seen: set[int] = set()
    for path in record_lines(out):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                if record["index"] in seen:
                    kinds["duplicate"] += 1
                    continue
                seen.add(record["index"])
                if record.get("ok"):
                    ok += 1
                else:
                    kinds[(record.get("error") or {}).get("kind", "?")] += 1
    if missing := case.n - len(seen):
        kinds["missing_record"] = missing
    return ok, sum(kinds.values()), dict(kinds)


def kill_a_shard_task(out: Path, stop: threading.Event, killed: list[str]) -> None:
    """raykill: once a shard's part holds ``KILL_AFTER`` records, kill the Ray worker process
    running a shard task (``ray::_shard_task``), once."""
    while not stop.wait(0.05):
        partials = list(out.glob("part-*.jsonl.partial")) if out.is_dir() else []
        if not any(path.stat().st_size and path.read_bytes().count(b"\n") >= KILL_AFTER
                   for path in partials):
            continue
        for process in psutil.process_iter(["cmdline"]):
            if (process.info["cmdline"] or [""])[0].startswith("ray::_shard_task"):
                process.kill()
                killed.append(f"killed the Ray worker of a shard task ({len(partials)} "
                              "shards running)")
                return
        killed.append("no running shard task found to kill")
        return


def run_case(case: Case, bases: list[str], server: psutil.Process, workdir: Path,
             args: argparse.Namespace) -> Row:
    urls, out = workdir / f"{case.id.replace(':', '_')}.txt", workdir / "out.jsonl"
    urls.write_text("".join(f"{bases[i % len(bases)]}/p/{i}\n" for i in range(case.n)))
    remove(out)
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=kill_a_shard_task, args=(out, stop, killed), daemon=True)
    if case.tool == "raykill":
        killer.start()
    before = server.cpu_times()
    measured = run_measured(client_command(case, urls, out, args), cwd=REPO,
                            env=subprocess_env(), timeout=CASE_TIMEOUT)
    after = server.cpu_times()
    stop.set()
    ok, errors, kinds = count_records(case, out, measured)
    note = "" if measured.returncode == 0 else f"exit {measured.returncode}: " + (
        measured.stderr.strip().splitlines() or [""])[-1][:120]
    if case.tool == "raykill":
        note = "; ".join([*killed, note] if killed else ["NOTHING KILLED", note]).strip("; ")
    remove(out)
    urls.unlink()
    return Row(case, measured.wall_s, measured.cpu_s, measured.root_cpu_s,
               (after.user + after.system) - (before.user + before.system),
               measured.peak_rss_bytes / 2**20, ok, errors, kinds, note)


def remove(out: Path) -> None:
    if out.is_dir():
        shutil.rmtree(out)
    else:
        out.unlink(missing_ok=True)


def run_repeated(case: Case, bases: list[str], server: psutil.Process, workdir: Path,
                 args: argparse.Namespace) -> Row:
    """``args.repeat`` runs of ``case``: the one with the median URLs/s (the lower middle for
    an even count), with every run's rate."""
    runs: list[Row] = []
    for _ in range(args.repeat):
        runs.append(run_case(case, bases, server, workdir, args))
        print(rows_table(runs[-1:])[-1], flush=True)
    runs.sort(key=lambda row: row.rate)
    chosen = runs[(len(runs) - 1) // 2]
    chosen.run_rates = [row.rate for row in runs]
    return chosen


def run_cpu_limit(kind: str, pool: int | None = None) -> dict:
    extra = ["--pool", str(pool)] if pool else []
    measured = run_measured([sys.executable, str(BENCH / "cpu_limit.py"), kind, *extra],
                            cwd=REPO, env=subprocess_env(), timeout=CASE_TIMEOUT)
    if measured.returncode != 0:
        tail = (measured.stderr.strip().splitlines() or ["?"])[-1]
        return {"kind": kind, "error": tail[:160]}
    result = json.loads(measured.stdout.strip().splitlines()[-1])
    if pool:  # a list, like the CPU limit's passes, so measurements merge alike
        result["runs_per_s"] = [result["pages_per_s"]]
    return result


def measure_limits(chosen: list[str]) -> list[dict]:
    limits = []
    for kind in KINDS:
        if f"cpu:{kind}" in chosen:
            limits.append(run_cpu_limit(kind))
            print(f"cpu:{kind}", limits[-1], flush=True)
    if "pool:html" in chosen:
        limits.append(run_cpu_limit("html", pool=POOL_PAGES))
        print("pool:html", limits[-1], flush=True)
    return limits


def merged(first: dict, again: dict) -> dict:
    """One limit from its measurements before and after the cases: the median of all their
    passes (or pool runs). The machine's speed drifts both ways (a shared VM: the same pass
    has measured 5.7 and 9.7 ms a page an hour apart), so the median is the fair match for a
    case's median run; the best pass would flatter the limit against it."""
    if "error" in first or "error" in again:
        return again if "error" in first else first
    samples, value = ("pass_ms", "ms_per_page") if "pass_ms" in first else (
        "runs_per_s", "pages_per_s")
    every = [*first[samples], *again[samples]]
    return {**first, samples: every, value: statistics.median(every)}


# --- report ---------------------------------------------------------------------------------

def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = " (" + line.split(":", 1)[1].strip() + ")"
                break
    except OSError:
        pass
    ram = psutil.virtual_memory().total / 2**30
    return (f"{os.cpu_count()} cores{model}, {ram:.0f} GiB RAM, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}")


def rows_table(rows: list[Row]) -> list[str]:
    lines = [
        "| case | URLs/s | wall s | client CPU s | of which main process | server CPU s "
        "| peak RSS MiB | ok | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        errors = str(r.errors)
        if r.error_kinds:
            errors += " (" + ", ".join(f"{k} {v}" for k, v in sorted(r.error_kinds.items())) + ")"
        if r.note:
            errors += f" — {r.note}"
        rate = f"{r.rate:,.0f}"
        if len(r.run_rates) > 1:
            rate += f" ({r.run_rates[0]:,.0f}–{r.run_rates[-1]:,.0f})"
        lines.append(f"| `{r.case.id}` | {rate} | {r.wall_s:.1f} | {r.cpu_s:.1f} | "
                     f"{r.main_cpu_s:.1f} | {r.server_cpu_s:.1f} | {r.peak_mib:,.0f} | "
                     f"{r.ok:,} | {errors} |")
    return lines


def limits_table(limits: list[dict], cores: int) -> list[str]:
    lines = ["| case | handler | ms/page best / median / worst (1 core) | URLs/s (1 core, "
             f"median) | URLs/s × {cores} cores | failed pages |", "|---|---|---:|---:|---:|---:|"]
    for lim in limits:
        if "pages_per_s" in lim:
            runs = ", ".join(f"{rate:,.1f}" for rate in lim["runs_per_s"])
            lines.append(f"| `pool:{lim['kind']}` | {lim['kind']}, {lim['workers']} workers, "
                         f"{lim['pages']:,} pages | — | — | {lim['pages_per_s']:,.1f} (measured; "
                         f"median of {runs}) | {lim['failures']}/{lim['pages']} |")
            continue
        if "error" in lim:
            lines.append(f"| `cpu:{lim['kind']}` | — | — | — | — | {lim['error']} |")
            continue
        rate = 1000.0 / lim["ms_per_page"]
        spread = (f"{min(lim['pass_ms']):.3g} / {lim['ms_per_page']:.3g} / "
                  f"{max(lim['pass_ms']):.3g} ({len(lim['pass_ms'])} passes)")
        lines.append(f"| `cpu:{lim['kind']}` | {lim['handler']} | {spread} | "
                     f"{rate:,.1f} | {rate * cores:,.1f} | {lim['failures']}/{lim['pages']} |")
    return lines


def verdict(ok: bool) -> str:
    return "**hit**" if ok else "**MISS**"


def html_targets(by_id: dict[str, Row], sizes: list[int], limits: list[dict],
                 cores: int) -> list[str]:
    """HTML at 50 ms against the naive client and against the CPU limit (and the pool)."""
    cpu = next((lim for lim in limits if lim["kind"] == "html" and "ms_per_page" in lim), None)
    pool = next((lim["pages_per_s"] for lim in limits
                 if lim["kind"] == "html" and "pages_per_s" in lim), None)
    out: list[str] = []
    for n in sizes:
        ours = by_id.get(f"pipeline:html:{n}:50")
        if ours is None:
            continue
        naive = by_id.get(f"naive:html:{n}:50") or next(
            (by_id[f"naive:html:{m}:50"] for m in sizes if f"naive:html:{m}:50" in by_id), None)
        if naive is not None:
            ratio = ours.rate / naive.rate
            out.append(f"- HTML, 50 ms, N={n:,}: pipeline {ours.rate:,.1f} URLs/s vs naive "
                       f"{naive.rate:,.1f} (N={naive.case.n:,}) = {ratio:.2f}× "
                       f"(target ≥ 3×): {verdict(ratio >= 3)}")
        if cpu is None:
            continue
        single = 1000.0 / cpu["ms_per_page"]
        limit = single * cores
        server_cores = ours.server_cpu_s / ours.wall_s
        ratio = ours.rate / limit
        out.append(f"- HTML, 50 ms, N={n:,}: pipeline {ours.rate:,.1f} URLs/s vs CPU limit "
                   f"{limit:,.1f} ({cores} cores × {single:,.1f}, median of "
                   f"{len(cpu['pass_ms'])} passes) = {ratio:.0%} (target ≥ 70%): "
                   f"{verdict(ratio >= 0.7)}; the corpus server used {server_cores:.2f} of the "
                   f"{cores} cores meanwhile, so the limit left to the client was "
                   f"{single * (cores - server_cores):,.1f}")
        per_url = 1000.0 * ours.cpu_s / n
        out.append(f"  - CPU per URL: the client {per_url:.2f} ms (of which its main process "
                   f"{1000.0 * ours.main_cpu_s / n:.2f}), the handler alone "
                   f"{cpu['ms_per_page']:.2f}: the handler is {cpu['ms_per_page'] / per_url:.0%}"
                   " of the client's CPU (independent of other load on the machine)")
        if pool is not None:
            out.append(f"  - the worker pool alone (pages in memory, no fetching) reached "
                       f"{pool:,.1f} pages/s = {pool / limit:.0%} of that limit; "
                       f"the pipeline is at {ours.rate / pool:.0%} of the pool")
    return out


@functools.cache
def plain_label(kind: PageKind) -> str:
    """``kind``'s label in the targets, with its average body over the corpus (1 KB = 1,000
    bytes)."""
    average = statistics.mean(len(body) for body in dataset_bodies(kind)) / 1000
    return PLAIN_LABELS[kind].format(kb=f"{average:,.1f}")


def plain_text_targets(by_id: dict[str, Row], sizes: list[int]) -> list[str]:
    """Each plain-text kind against the fetch-only loop on the same bodies."""
    out: list[str] = []
    for kind in PLAIN_LABELS:
        for n in sizes:
            for latency in (0, 50):
                fetch = by_id.get(f"fetch:{kind}:{n}:{latency}")
                for tool in PIPELINE_TOOLS:
                    ours = by_id.get(f"{tool}:{kind}:{n}:{latency}")
                    if ours and fetch:
                        ratio = ours.rate / fetch.rate
                        out.append(f"- {plain_label(kind)}, {latency} ms, N={n:,}: {tool} "
                                   f"{ours.rate:,.0f} URLs/s vs fetch-only {fetch.rate:,.0f} = "
                                   f"{ratio:.0%} (target ≥ 50%): {verdict(ratio >= 0.5)}")
    return out


def sharded_targets(by_id: dict[str, Row], sizes: list[int]) -> list[str]:
    """``--processes 2`` against one process; Ray against ``--processes 2``; the Ray run with
    a killed task."""
    out: list[str] = []
    for kind, n, latency in itertools.product(PLAIN_LABELS, sizes, (0, 50)):
        one = by_id.get(f"pipeline:{kind}:{n}:{latency}")
        two = by_id.get(f"processes2:{kind}:{n}:{latency}")
        if one and two:
            ratio = two.rate / one.rate
            target = (f" (target ≥ 1.5×): {verdict(ratio >= 1.5)}"
                      if kind == "article" and n == 20_000 and latency == 0 else "")
            out.append(f"- {plain_label(kind)}, {latency} ms, N={n:,}: --processes 2 "
                       f"{two.rate:,.0f} URLs/s vs one process {one.rate:,.0f} = "
                       f"{ratio:.2f}×{target}")
    for n in sizes:
        ray, two = by_id.get(f"ray:article:{n}:0"), by_id.get(f"processes2:article:{n}:0")
        if ray:
            once = ray.ok + ray.errors == n and not {"duplicate", "missing_record"} & set(
                ray.error_kinds)
            line = (f"- Ray, local, article text, N={n:,}: {ray.rate:,.0f} URLs/s, every line "
                    f"exactly once: {verdict(once)}")
            if two:
                line += (f"; --processes 2: {two.rate:,.0f} URLs/s, so Ray costs "
                         f"{ray.wall_s - two.wall_s:+.1f} s of wall time "
                         f"({two.rate / ray.rate - 1:+.0%}) and {ray.cpu_s - two.cpu_s:+.1f} s "
                         "of CPU (starting a local Ray included)")
            out.append(line)
        killed = by_id.get(f"raykill:article:{n}:0")
        if killed:
            once = killed.ok + killed.errors == n and not killed.error_kinds
            out.append(f"- Ray with a shard task's worker killed, N={n:,}: {killed.note or '?'}; "
                       f"{killed.rate:,.0f} URLs/s; every line exactly once: "
                       f"{verdict(once and killed.note.startswith('killed'))}")
    return out


def memory_targets(rows: list[Row]) -> list[str]:
    """Peak memory of the pipeline at the largest N against the smallest, per kind and latency."""
    out: list[str] = []
    for tool, kind in itertools.product(PIPELINE_TOOLS, KINDS):
        for latency in (0, 50):
            series = sorted((r for r in rows if r.case.tool == tool and r.case.kind == kind
                             and round(r.case.latency * 1000) == latency), key=lambda r: r.case.n)
            if len(series) >= 2:
                small, large = series[0], series[-1]
                ratio = large.peak_mib / small.peak_mib
                out.append(f"- memory, {tool}, {kind}, {latency} ms: peak "
                           f"{large.peak_mib:,.0f} MiB at "
                           f"N={large.case.n:,} vs {small.peak_mib:,.0f} MiB at "
                           f"N={small.case.n:,} = {ratio:.2f}× (target ≤ 1.2×): "
                           f"{verdict(ratio <= 1.2)}")
    return out


def targets(rows: list[Row], limits: list[dict], cores: int) -> list[str]:
    """Hit/miss per target (issues 2 and 15), for every case pair that was measured."""
    by_id = {r.case.id: r for r in rows}
    sizes = sorted({r.case.n for r in rows})
    out = [*html_targets(by_id, sizes, limits, cores), *plain_text_targets(by_id, sizes),
           *sharded_targets(by_id, sizes), *memory_targets(rows)]
    return out or ["- (no case pair measured for any target)"]


def repeat_note(repeat: int) -> str:
    if repeat == 1:
        return "Each case ran once."
    return (f"Each case ran {repeat} times; its row is the run with the median URLs/s (the "
            f"lower middle for an even count), with the range of the {repeat} runs in brackets.")


def report(rows: list[Row], limits: list[dict], command: str, cores: int, repeat: int,
           hosts: int) -> str:
    return "\n".join([
        "## Throughput", "",
        f"Command: `{command}`  ", f"Machine: {machine()}", "",
        "Case ids are `tool:page kind:N:latency ms`. URLs/s = N / wall time. CPU is summed "
        "over the client's process tree (`getrusage` of reaped children); \"of which main "
        "process\" is the client's own process (for the pipeline: the event loop, without the "
        "handler workers); the corpus server "
        "runs in its own process and its CPU is counted apart. Peak RSS is the largest sum of "
        "RSS over the client's process tree, sampled every 50 ms (shared pages of forked "
        "workers are counted once per process, so it is an upper bound; a local Ray's own "
        f"processes are in the tree). The corpus server plays {hosts} hosts (ports), the URLs "
        "taking turns; the pipeline runs with the per-host politeness limits opened "
        "(`--per-host`, `--rate`): the benchmark measures the machine, not politeness. "
        "`processes2` is the pipeline with `--processes 2` (two shards by host in two "
        "processes), run on the plain-text kinds, where the event loop rather than the "
        "handlers is the limit; `ray` is `--engine ray` with a local Ray (started by the "
        "command, inside the measured time), `raykill` the same with one shard task's worker "
        "process killed once its part holds "
        f"{KILL_AFTER} records. Sharded runs are counted from their parts (an index twice is "
        f"a `duplicate`). {repeat_note(repeat)} A CPU limit "
        "is the median of its handler passes over the corpus, taken before and after the "
        "cases (best / median / worst shown); the pool's, the median of its runs.", "",
        *rows_table(rows), "", *limits_table(limits, cores), "", "Targets:", "",
        *targets(rows, limits, cores),
    ])


def write_readme(section: str, start: str = START, end: str = END, heading: str = "") -> None:
    """Put ``section`` between the ``start`` and ``end`` markers of the README (appended,
    under ``heading``, when they are not there yet)."""
    text = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    block = f"{start}\n{section}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + heading + block + "\n"
    README.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N=500 only (smoke run)")
    parser.add_argument("--only", action="append", metavar="GLOB",
                        help="case ids to run, e.g. 'pipeline:html:*:50' or 'cpu:*' (repeatable)")
    parser.add_argument("--concurrency", type=int, default=256, help="requests in flight")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="pipeline process-pool size")
    parser.add_argument("--pipeline-arg", action="append", default=[],
                        help="extra argument for the pipeline command (repeatable)")
    parser.add_argument("--hosts", type=int, default=HOSTS,
                        help="hosts (ports) the corpus server plays, the URLs taking turns")
    parser.add_argument("--repeat", type=int, default=1, metavar="R",
                        help="runs per case; the run with the median URLs/s is reported")
    parser.add_argument("--json", type=Path, help="also write raw results here")
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    cases = {c.id: c for c in matrix(QUICK_SIZES if args.quick else SIZES)}
    chosen = selected([*cases, *(f"cpu:{k}" for k in KINDS), "pool:html"], args.only)
    cores = os.cpu_count() or 1
    limits = measure_limits(chosen)
    rows: list[Row] = []
    to_run = [cases[i] for i in chosen if i in cases]
    with tempfile.TemporaryDirectory(prefix="throughput-") as tmp:
        for (kind, latency), group in groupby(to_run, key=lambda c: (c.kind, c.latency)):
            with serve_in_subprocess(kind, latency, hosts=args.hosts) as (bases, proc):  # type: ignore[arg-type]
                server = psutil.Process(proc.pid)
                for case in group:
                    rows.append(run_repeated(case, bases, server, Path(tmp), args))
    if rows:  # once more after the cases: the median is taken over both measurements
        limits = [merged(first, again) for first, again in zip(limits, measure_limits(chosen),
                                                               strict=True)]
    given = list(argv if argv is not None else sys.argv[1:])
    if args.json and "--json" in given:  # a local output path does not belong in the README
        del given[given.index("--json"):given.index("--json") + 2]
    command = "python benchmarks/throughput.py " + " ".join(given)
    section = report(rows, limits, command.strip(), cores, args.repeat, args.hosts)
    print("\n" + section)
    if not args.no_readme:
        write_readme(section)
    if args.json:
        args.json.write_text(json.dumps({"rows": [asdict(r) for r in rows], "cpu": limits},
                                        indent=1))


if __name__ == "__main__":
    main()

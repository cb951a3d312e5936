"""WARC out and in (issue 26): the cost of ``--warc-out``, the speed of ``--input-format warc``
against a WARC reader + trafilatura loop, content identity, and ``kill -9`` + ``--resume``.

    python benchmarks/warc.py [--urls 2000] [--pairs 3] [--only out|in|kill] [--no-readme]

* ``out``: per dev set, a corpus server on 127.0.0.1 (``corpus_server.py``, 50 ms per
  request) serves ``--urls`` URLs of the set's pages; the batch command runs them with and
  without ``--warc-out``, alternating, ``--pairs`` times: wall and CPU seconds of the whole
  process tree (``measure.py``), the load average beside each. Every record of the WARC is
  then read by warcio with its digests checked, and a ``--input-format warc`` run over the
  WARC is compared with the HTTP run, page by page (content, title, metadata, status, type).
* ``in``: a WARC of both dev sets' pages (warcio writes it: one response record per page)
  is extracted by ``python -m pipeline FILE --input-format warc`` and, in the same run, by a
  fastwarc + trafilatura loop and a warcio + trafilatura loop (one process each). Pages per
  CPU-second is pages/s per core.
* ``kill``: ``--warc-out`` over ``--urls`` URLs, ``kill -9`` once half the records are out,
  then ``--resume``: every URL once in the JSONL, every WARC file read to its end by warcio.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))  # throughput.py imports its siblings by their bare names

from benchmarks.corpus_server import DATASET_ENV, serve_in_subprocess  # noqa: E402
from benchmarks.measure import run_measured  # noqa: E402
from benchmarks.throughput import write_readme  # noqa: E402

START, END = "<!-- warc:start -->", "<!-- warc:end -->"
DATASETS = {"news": "article-extraction-benchmark", "modern": "modern-web-dev"}
SHARED = REPO.parent / "shared" / "datasets"
LATENCY = 0.05
FLAGS = ["--allow-net", "127.0.0.1/32", "--rate", "inf", "--per-host", "64", "--quiet"]
COMPARED = ("content", "title", "metadata", "status", "content_type", "handler")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f}/{five:.1f}/{fifteen:.1f}"


def env_for(dataset: Path) -> dict[str, str]:
    return {**os.environ, DATASET_ENV: str(dataset), "PYTHONPATH": str(REPO)}


def pipeline(*argv: str) -> list[str]:
    return [sys.executable, "-m", "pipeline", *argv]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def validate(directory: Path) -> tuple[int, int, list[str]]:
    """(records read, responses, problems) of every WARC file in ``directory``, by warcio
    with every digest checked, each file read to its end; and Python's gzip reads every
    member whole (warcio passes over a member cut short at the end of a file)."""
    from warcio.archiveiterator import ArchiveIterator

    count = responses = 0
    problems = []
    for path in sorted(directory.glob("*.warc.gz")):
        try:
            with open(path, "rb") as handle:
                for record in ArchiveIterator(handle, check_digests="raise"):
                    record.content_stream().read()
                    count += 1
                    responses += record.rec_type == "response"
                if handle.read():
                    problems.append(f"{path.name}: bytes after the last record")
            with gzip.open(path) as members:
                while members.read(1 << 20):
                    pass
        except Exception as exc:
            problems.append(f"{path.name}: {exc!r}")
    return count, responses, problems


def identical(http: list[dict], warc: list[dict]) -> tuple[int, int, list[str]]:
    """(pages compared, pages identical, the first differences): every page fetched whole
    (an ok HTTP record) against the WARC run's record of its final URL."""
    by_url = {r["url"]: r for r in warc}
    same = 0
    differences = []
    fetched = [r for r in http if r["ok"]]
    for record in fetched:
        other = by_url.get(record["final_url"])
        wrong = [field for field in COMPARED if other is None or other[field] != record[field]]
        if wrong:
            differences.append(f"{record['final_url']}: {wrong}")
        else:
            same += 1
    return len(fetched), same, differences[:5]


def bench_out(urls: int, pairs: int, work: Path) -> list[str]:
    lines = ["### WARC out: overhead on a 2,000-URL run, and WARC in vs HTTP", "",
             f"`python benchmarks/warc.py --only out --urls {urls} --pairs {pairs}`: corpus "
             f"server at {LATENCY * 1000:.0f} ms per request, `--rate inf --per-host 64`; "
             "runs alternate without/with `--warc-out` (wall and CPU of the process tree, load "
             "average 1/5/15 min before each run).", "",
             "| set | run | wall s | CPU s | load before |", "|---|---|---:|---:|---|"]
    summary = []
    for name, folder in DATASETS.items():
        dataset = SHARED / folder
        if not dataset.is_dir():
            lines.append(f"| {name} | skipped: no {dataset} | | | |")
            continue
        env = env_for(dataset)
        walls: dict[str, list[float]] = {"plain": [], "warc": []}
        cpus: dict[str, list[float]] = {"plain": [], "warc": []}
        with serve_in_subprocess("html", LATENCY, env=env) as (bases, _server):
            listed = work / f"{name}-urls.txt"
            listed.write_text("".join(f"{bases[0]}/p/{i}\n" for i in range(urls)))
            for pair in range(pairs):
                for kind in ("plain", "warc") if pair % 2 == 0 else ("warc", "plain"):
                    out = work / f"{name}-{kind}.jsonl"
                    warc = work / f"{name}-warc"
                    extra = ["--warc-out", str(warc)] if kind == "warc" else []
                    before = load()
                    done = run_measured(pipeline(str(listed), "-o", str(out), "--overwrite",
                                                 *FLAGS, *extra), cwd=REPO, env=env,
                                        timeout=900)
                    assert done.returncode == 0, done.stderr[-2000:]
                    walls[kind].append(done.wall_s)
                    cpus[kind].append(done.cpu_s)
                    lines.append(f"| {name} | {kind} | {done.wall_s:.2f} | {done.cpu_s:.2f} | "
                                 f"{before} |")
        count, responses, problems = validate(work / f"{name}-warc")
        size = sum(path.stat().st_size for path in (work / f"{name}-warc").glob("*.warc.gz"))
        again = work / f"{name}-again.jsonl"
        done = run_measured(pipeline(str(work / f"{name}-warc"), "--input-format", "warc",
                                     "-o", str(again), "--overwrite", "--quiet"),
                            cwd=REPO, env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        compared, same, differences = identical(records(work / f"{name}-plain.jsonl"),
                                                records(again))
        wall = statistics.median(walls["warc"]) / statistics.median(walls["plain"]) - 1
        cpu = statistics.median(cpus["warc"]) / statistics.median(cpus["plain"]) - 1
        summary += [
            f"- {name}: `--warc-out` costs **{wall:+.1%} wall** (goal ≤ 10%: "
            f"{'hit' if wall <= 0.10 else 'MISS'}) and **{cpu:+.1%} CPU** (goal ≤ 5%: "
            f"{'hit' if cpu <= 0.05 else 'MISS'}), medians of {pairs}; the WARC: {count} "
            f"records ({responses} responses) in {size / 1e6:.1f} MB, every one read by warcio "
            f"with its digests checked: {'all valid' if not problems else problems[:3]}",
            f"- {name}: WARC in vs HTTP, {compared} pages fetched whole: **{same} identical** "
            f"({', '.join(COMPARED)})" + (f"; differences: {differences}" if differences
                                          else ""),
        ]
    return [*lines, "", *summary]


def build_dev_warc(path: Path) -> int:
    """Both dev sets' pages as response records (warcio writes them); returns the count."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    count = 0
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True, warc_version="1.1")
        for name, folder in DATASETS.items():
            for page in sorted((SHARED / folder / "html").glob("*.html.gz")):
                body = gzip.decompress(page.read_bytes())
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"),
                                                   ("Content-Length", str(len(body)))],
                                        protocol="HTTP/1.1")
                url = f"https://{name}.example/{page.name.removesuffix('.html.gz')}"
                writer.write_record(writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), http_headers=http))
                count += 1
    return count


PEER = """
import sys, time, trafilatura
reader, path = sys.argv[1], sys.argv[2]
pages = 0
if reader == "fastwarc":
    from fastwarc.warc import ArchiveIterator, WarcRecordType
    for record in ArchiveIterator(open(path, "rb"), record_types=WarcRecordType.response):
        trafilatura.extract(record.reader.read(), url=record.headers.get("WARC-Target-URI"))
        pages += 1
else:
    from warcio.archiveiterator import ArchiveIterator
    for record in ArchiveIterator(open(path, "rb")):
        if record.rec_type == "response":
            trafilatura.extract(record.content_stream().read(),
                                url=record.rec_headers.get_header("WARC-Target-URI"))
            pages += 1
print(pages)
"""


def bench_in(work: Path) -> list[str]:
    if not all((SHARED / folder).is_dir() for folder in DATASETS.values()):
        return ["### WARC in: pages/s per core", "", "skipped: the dev sets are not there"]
    warc = work / "dev.warc.gz"
    pages = build_dev_warc(warc)
    lines = ["### WARC in: pages/s per core", "",
             f"`python benchmarks/warc.py --only in`: {pages} HTML pages of both dev sets in "
             f"one WARC ({warc.stat().st_size / 1e6:.1f} MB, warcio wrote it); pages per "
             "CPU-second of the whole process tree is pages/s per core. Ours runs its handler "
             "pool (2 workers) beside its event loop; each peer is one process.", "",
             "| reader | pages | wall s | CPU s | pages/s | pages/s per core | load before |",
             "|---|---:|---:|---:|---:|---:|---|"]
    rates = {}
    runs = {
        "ours (`--input-format warc`)": pipeline(str(warc), "--input-format", "warc", "-o",
                                                 str(work / "in.jsonl"), "--overwrite",
                                                 "--quiet"),
        "fastwarc + trafilatura": [sys.executable, "-c", PEER, "fastwarc", str(warc)],
        "warcio + trafilatura": [sys.executable, "-c", PEER, "warcio", str(warc)],
    }
    for name, command in runs.items():
        before = load()
        done = run_measured(command, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                            timeout=1800)
        assert done.returncode == 0, done.stderr[-2000:]
        count = (len(records(work / "in.jsonl")) if name.startswith("ours")
                 else int(done.stdout.split()[-1]))
        rates[name] = count / done.cpu_s
        lines.append(f"| {name} | {count} | {done.wall_s:.1f} | {done.cpu_s:.1f} | "
                     f"{count / done.wall_s:.1f} | {count / done.cpu_s:.1f} | {before} |")
    ours = rates["ours (`--input-format warc`)"]
    peer = rates["fastwarc + trafilatura"]
    ok = sum(r["ok"] for r in records(work / "in.jsonl"))
    verdict = "hit" if ours >= 2 * peer else "MISS"
    return [*lines, "", f"- ours {ours:.1f} pages/s per core against fastwarc + trafilatura "
            f"{peer:.1f}: **{ours / peer:.2f}×** (goal ≥ 2×: {verdict}); {ok} of {pages} "
            "records ok"]


def bench_kill(urls: int, work: Path) -> list[str]:
    dataset = SHARED / DATASETS["news"]
    if not dataset.is_dir():
        return ["### kill -9 during a `--warc-out` run, then `--resume`", "", "skipped"]
    env = env_for(dataset)
    out, warc = work / "kill.jsonl", work / "kill-warc"
    with serve_in_subprocess("html", LATENCY, env=env) as (bases, _server):
        listed = work / "kill-urls.txt"
        listed.write_text("".join(f"{bases[0]}/p/{i}\n" for i in range(urls)))
        argv = pipeline(str(listed), "-o", str(out), "--warc-out", str(warc),
                        "--warc-max-bytes", "20000000", *FLAGS)
        proc = subprocess.Popen(argv, cwd=REPO, env=env)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            if out.exists() and out.read_bytes().count(b"\n") >= urls // 2:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed_at = out.read_bytes().count(b"\n")
        files_then = len(list(warc.glob("*.warc.gz")))
        resumed = subprocess.run([*argv, "--resume"], cwd=REPO, env=env, timeout=900)
        assert resumed.returncode == 0
    indexes = [r["index"] for r in records(out)]
    once = sorted(indexes) == list(range(urls))
    count, responses, problems = validate(warc)
    return ["### kill -9 during a `--warc-out` run, then `--resume`", "",
            f"`python benchmarks/warc.py --only kill --urls {urls}` (load before: {load()}): "
            f"killed with {killed_at} of {urls} records out and {files_then} WARC files "
            f"(20 MB each); after `--resume`: every URL once in the JSONL: "
            f"**{'yes' if once else 'NO'}** ({len(indexes)} lines); every WARC file read to "
            f"its end by warcio, digests checked: **{problems if problems else 'yes'}** "
            f"({count} records, {responses} responses: a URL archived but not yet recorded "
            "when killed is fetched again, a second capture)"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--only", choices=("out", "in", "kill"), action="append")
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args(argv)
    wanted = args.only or ["out", "in", "kill"]
    parts = []
    with tempfile.TemporaryDirectory(prefix="warc-bench-") as folder:
        work = Path(folder)
        if "out" in wanted:
            parts += [*bench_out(args.urls, args.pairs, work), ""]
        if "in" in wanted:
            parts += [*bench_in(work), ""]
        if "kill" in wanted:
            parts += [*bench_kill(args.urls, work), ""]
    section = "\n".join(parts).rstrip() + "\n"
    print(section)
    if not args.no_readme:
        write_readme(section, START, END, "## WARC out and in (`warc.py`)\n\n")


if __name__ == "__main__":
    main()

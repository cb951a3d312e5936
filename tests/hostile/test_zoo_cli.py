"""The command line end to end against the hostile-server zoo, in two runs at once: the
cases that end only by their deadline (drips, silence) with a 3 s one, every other case with
room (a 60 s deadline), so a busy machine cannot turn a bomb's ``too_large`` into a timeout.

Invariants: one record per URL line, each with an acceptable kind; the runs end (a hang is a
failure, caught by a bound far past any run's length, not a timed test); memory stays near
the byte cap whatever the bombs do; exit 0 and no traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.core.truncate import METADATA_CHARS, TITLE_CHARS
from tests.hostile.zoo import MAX_BYTES, OK

ROOT = Path(__file__).resolve().parents[2]
MAX_CHARS = 20_000
COMMON = ["--max-bytes", str(MAX_BYTES), "--retries", "1", "--retry-after-cap", "1",
          "--rate", "1000", "--per-host", "128", "--concurrency", "128",
          "--handler-timeout", "60", "--workers", "2", "--max-chars", str(MAX_CHARS), "--quiet",
          "--allow-net", "127.0.0.1/32"]
DEADLINE = ["--timeout", "3", "--read-timeout", "1", "--connect-timeout", "1", *COMMON]
ROOM = ["--timeout", "60", "--read-timeout", "30", "--connect-timeout", "30", *COMMON]
RUN_BOUND = 600  # seconds: only a hang gets near it
RSS_BOUND_KIB = 400 * 1024  # a bomb read whole would be ~1 GiB; a capped run is far below
DUPLICATES = 10_000
# The runs are started in the first test's setup: a bound for a loaded machine, not a deadline.
pytestmark = pytest.mark.timeout(RUN_BOUND + 120)


@dataclass
class Run:
    """The two runs: their processes, records, peak RSS, and the room run's URL lines."""

    procs: list[subprocess.CompletedProcess[bytes]]
    room: list[dict]
    timed: list[dict]
    maxrss_kib: int
    lines: list[str]

    @property
    def records(self) -> list[dict]:
        return self.room + self.timed


def _start(tmp: Path, name: str, raw: bytes, args: list[str]) -> subprocess.Popen[bytes]:
    (tmp / f"{name}.txt").write_bytes(raw)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAXRSS_FILE": str(tmp / f"{name}.rss")}
    return subprocess.Popen([sys.executable, str(Path(__file__).with_name("maxrss.py")),
                             sys.executable, "-m", "pipeline", str(tmp / f"{name}.txt"), "-o",
                             str(tmp / f"{name}.jsonl"), *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def run(zoo, tmp_path_factory) -> Run:
    """Two subprocess runs at once: the cases that end by their deadline, and every other
    case plus a hostile input file."""
    tmp = tmp_path_factory.mktemp("zoo")
    timed = [zoo.url(case.name) for case in zoo.listed(deadline=True)] + [zoo.deaf_url]
    lines = [zoo.url(case.name) for case in zoo.listed(deadline=False)]
    raw = b"\xef\xbb\xbf" + lines[0].encode() + b"\r\n# a comment\r\n\r\n   \n"
    raw += b"\n".join(line.encode() for line in lines[1:]) + b"\n"
    raw += b"http://127.0.0.1/\x00nul\n" + b"http://127.0.0.1/\xff\xfe\n"
    raw += b"http://127.0.0.1/" + b"a" * 100_000 + b"\n"
    raw += (zoo.url("dup").encode() + b"\n") * DUPLICATES
    started = {"room": _start(tmp, "room", raw, ROOM),
               "deadline": _start(tmp, "deadline", "\n".join(timed).encode() + b"\n", DEADLINE)}
    procs = []
    for proc in started.values():
        try:
            stdout, stderr = proc.communicate(timeout=RUN_BOUND)
        finally:
            proc.kill()
        procs.append(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    records = {name: [json.loads(line) for line in (tmp / f"{name}.jsonl").read_text()
                      .splitlines()] for name in started}
    rss = max(int((tmp / f"{name}.rss").read_text()) for name in started)
    return Run(procs, records["room"], records["deadline"], rss, lines)


def outcome(record: dict) -> str:
    return OK if record["ok"] else record["error"]["kind"]


def test_the_run_exits_cleanly(run):
    for proc in run.procs:
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
        assert b"Traceback" not in proc.stderr


def test_one_record_per_url_line(run, zoo):
    assert len(run.room) == len(run.lines) + 3 + DUPLICATES
    assert len(run.timed) == len(zoo.listed(deadline=True)) + 1
    first = [r for r in run.room if r["index"] == 0]  # the line behind the BOM and the CRLF
    assert first[0]["url"] == run.lines[0] and first[0]["ok"]
    for records in (run.room, run.timed):
        assert sorted(r["index"] for r in records) == list(range(len(records)))


def test_every_case_ends_with_an_acceptable_kind(run, zoo):
    by_url = {r["url"]: r for r in run.records}
    wrong = {}
    for case in zoo.listed():
        record = by_url[zoo.url(case.name)]
        if outcome(record) not in case.kinds:
            wrong[case.name] = (outcome(record), record["error"] and record["error"]["message"])
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())
    assert outcome(by_url[zoo.deaf_url]) == "timeout"


def test_hostile_input_lines_are_records(run):
    odd = [r for r in run.records if r["url"].startswith("http://127.0.0.1/")]
    assert len(odd) == 3 and {outcome(r) for r in odd} == {"invalid_url"}


def test_duplicates_are_fetched_once(run, zoo):
    dups = [r for r in run.records if r["url"] == zoo.url("dup")]
    assert len(dups) == DUPLICATES and all(r["ok"] for r in dups)
    assert zoo.seen[("GET", "dup")] == 1


def test_hostile_documents_leak_nothing(run, zoo):
    for record in run.records:
        assert "root:" not in (record["content"] or "")  # XXE
        assert "EVIL" not in (record["content"] or "")  # a response smuggled after the body
        assert "\x00" not in (record["content"] or "")
        assert "javascript:" not in (record["content"] or "")
        if record["error"]:
            assert all(ord(c) >= 32 for c in record["error"]["message"])


def test_records_are_bounded_whatever_the_page(run):
    for record in run.records:
        assert len(record["content"] or "") <= MAX_CHARS
        assert len(record["title"] or "") <= TITLE_CHARS
        assert all(len(str(v)) <= METADATA_CHARS for v in (record["metadata"] or {}).values())


def test_memory_stays_near_the_cap(run):
    print(f"peak RSS {run.maxrss_kib >> 10} MiB")
    assert run.maxrss_kib < RSS_BOUND_KIB


def test_interrupt_with_hostile_urls_in_flight_then_resume(zoo, tmp_path):
    """Ctrl-C while drips and silent servers hold URLs (60 s deadlines keep them in flight
    however long a loaded machine takes to write half the records): the run still stops
    within its grace period, and --resume records every URL once."""
    lines = [zoo.url(case.name) for case in zoo.listed()] + [zoo.deaf_url]
    urls, out = tmp_path / "urls.txt", tmp_path / "out.jsonl"
    urls.write_text("\n".join(lines) + "\n")
    longer = {"--timeout": "60", "--read-timeout": "30", "--connect-timeout": "30"}
    slow = [longer.get(before, arg) for before, arg in zip(["", *DEADLINE], DEADLINE, strict=False)]
    argv = [sys.executable, "-m", "pipeline", str(urls), "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*argv, *slow], cwd=ROOT, env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + RUN_BOUND
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= len(lines) // 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=RUN_BOUND)
    finally:
        proc.kill()
    assert proc.returncode == 130 and b"Traceback" not in stderr, stderr[-2000:]
    first = out.read_bytes().count(b"\n")
    assert first < len(lines), first  # the slow ones were still in flight
    done = subprocess.run([*argv, "--resume", *DEADLINE], cwd=ROOT, env=env,
                          capture_output=True, timeout=RUN_BOUND)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]
    keys = [(r["index"], r["url"]) for r in map(json.loads, out.read_text().splitlines())]
    missing = set(enumerate(lines)) - set(keys)
    assert len(keys) == len(lines) and not missing, (first, len(keys), sorted(missing)[:5])

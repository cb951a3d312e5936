"""The command line as a real process: signals, exit codes, resume, stderr behaviour."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.records import read_records

ROOT = Path(__file__).resolve().parents[2]
FAKE_CLI = Path(__file__).with_name("fake_cli.py")
URLS = [f"http://example.test/{i}" for i in range(40)]


def start(argv, delay: float, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAKE_DELAY": str(delay)}
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.Popen([sys.executable, str(FAKE_CLI), *argv, "--workers", "1"], env=env,
                            cwd=ROOT, stderr=subprocess.PIPE, **kwargs)


def wait_for_lines(path: Path, count: int, proc: subprocess.Popen, limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {count} lines")


@pytest.fixture
def url_file(tmp_path):
    path = tmp_path / "urls.txt"
    path.write_text("\n".join(URLS) + "\n")
    return path


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_then_resume_records_every_url_once(signum, url_file, tmp_path):
    out = tmp_path / "out.jsonl"
    proc = start([str(url_file), "-o", str(out), "--concurrency", "2"], delay=0.2)
    wait_for_lines(out, 4, proc)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert b"--resume" in stderr and b"Traceback" not in stderr
    first = read_records(out)
    assert 4 <= len(first) < len(URLS)

    proc = start([str(url_file), "-o", str(out), "--resume", "--concurrency", "8"], delay=0)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    indices = [r["index"] for r in read_records(out)]
    assert sorted(indices) == list(range(len(URLS)))  # every URL exactly once


def test_stderr_that_is_not_a_terminal_gets_the_summary_only(url_file):
    proc = start([str(url_file)], delay=0)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert len(stdout.splitlines()) == len(URLS)
    lines = stderr.decode().splitlines()
    assert len(lines) == 1 and "40 records" in lines[0] and "\r" not in stderr.decode()


def test_a_closed_stdout_ends_the_run_quietly(url_file):
    proc = start([str(url_file), "--concurrency", "1"], delay=0.05)
    first = proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    _, stderr = proc.communicate(timeout=60)
    assert b'"index":0' in first
    assert proc.returncode == 0 and b"Traceback" not in stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_stdout_on_a_full_device_ends_with_one_line_and_exit_74(url_file):
    with open("/dev/full", "wb") as full:
        proc = start([str(url_file)], delay=0, stdout=full)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 74, stderr
    assert stderr.decode().splitlines() == [
        "extract-pipeline: error: cannot write <stdout>: No space left on device; "
        "use -o OUT.jsonl to be able to --resume"]


def test_python_dash_m_pipeline_usage_error_exits_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pipeline", str(tmp_path / "none.txt")],
                          cwd=ROOT, capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("extract-pipeline: error: no such file")


@pytest.mark.parametrize("quiet", [False, True])
def test_an_unconfigured_provider_is_warned_about_once_and_not_under_quiet(url_file, quiet,
                                                                           monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    argv = [str(url_file), "-o", os.devnull, "--extract-backend", "tavily",
            "--extract-backend", "native"]
    proc = start([*argv, *(["--quiet"] if quiet else [])], 0)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    warned = [line for line in stderr.decode().splitlines() if "not configured" in line]
    assert warned == ([] if quiet else [
        "extract-pipeline: warning: extract_backend names 'tavily' but it is not configured "
        "(set TAVILY_API_KEY); skipped"])

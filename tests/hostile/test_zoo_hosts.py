"""The zoo's cases about a whole host, through the command line end to end, in a run of
their own (they need settings of their own):

- a host whose HEAD hangs while GET works, with more URLs than HEAD probes, all admitted at
  once: the first HEAD that stalls sends every URL of the host to the GET alone;
- a host asking one URL for a 2 s pause and another for 8 s, longer than the 5 s deadline:
  waiting out the host's pause does not count against a URL's deadline, so both are served.

Outcomes and request counts are asserted, never durations; the run is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.zoo import HEAD_HANGS_URLS, OK

ROOT = Path(__file__).resolve().parents[2]
# HEAD may take a third of the 5 s deadline; a pause is held off the deadline up to 10 s.
# Deadlines leave a loaded machine room: only the HEAD that hangs and the pause outlast them.
ARGS = ["--timeout", "5", "--read-timeout", "4", "--connect-timeout", "4", "--retries", "2",
        "--retry-after-cap", "10", "--rate", "1000", "--per-host", "64", "--concurrency", "128",
        "--workers", "1", "--quiet", "--allow-net", "127.0.0.1/32"]
RUN_BOUND = 600  # seconds: only a hang gets near it (the run takes a few)
pytestmark = pytest.mark.timeout(RUN_BOUND + 60)  # the run is this module's fixture
HEAD_HANGS = [f"head-hangs-{i}" for i in range(HEAD_HANGS_URLS)]
PAUSES = ["pause-short", "pause-long"]


@pytest.fixture(scope="module")
def records(zoo, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hosts")
    urls, out = tmp / "urls.txt", tmp / "out.jsonl"
    urls.write_text("\n".join(zoo.url(name) for name in [*HEAD_HANGS, *PAUSES]) + "\n")
    proc = subprocess.run([sys.executable, "-m", "pipeline", str(urls), "-o", str(out), *ARGS],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, timeout=RUN_BOUND)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    return {r["url"]: r for r in map(json.loads, out.read_text().splitlines())}


def outcome(record: dict) -> str:
    return OK if record["ok"] else f"{record['error']['kind']}: {record['error']['message']}"


def test_a_host_whose_head_hangs_gets_the_get_alone(zoo, records):
    outcomes = [outcome(records[zoo.url(name)]) for name in HEAD_HANGS]
    assert outcomes == [OK] * len(HEAD_HANGS)
    assert sum(zoo.seen[("HEAD", name)] for name in HEAD_HANGS) == 8  # the first probes only
    assert all(zoo.seen[("GET", name)] == 1 for name in HEAD_HANGS)


def test_a_long_pause_asked_for_one_url_does_not_fail_another(zoo, records):
    assert [outcome(records[zoo.url(name)]) for name in PAUSES] == [OK, OK]
    for name in PAUSES:  # the 429, then the GET that was served: nothing more
        assert zoo.seen[("HEAD", name)] + zoo.seen[("GET", name)] == 2
        assert zoo.seen[("GET", name)] == 1

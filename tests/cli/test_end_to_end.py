"""``python -m pipeline`` end to end against real aiohttp servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from collections import Counter
from pathlib import Path

from aiohttp import web

from tests.support.faulty_handlers import SPECS
from tests.support.pages import serve
from tests.support.records import read_records

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = ["--allow-net", "127.0.0.1/32", "--rate", "1000", "--per-host", "16"]


def site(delay: float = 0.0, jitter: float = 0.0) -> tuple[web.Application, Counter]:
    """Text, JSON, 404 and misbehaving-handler pages; counts GETs per path."""
    gets: Counter = Counter()
    shuffle = random.Random(7)

    async def page(request: web.Request) -> web.Response:
        if request.method == "GET":
            gets[request.path] += 1
        await asyncio.sleep(delay + shuffle.uniform(0, jitter))
        kind, _, name = request.path.strip("/").partition("/")
        if kind == "text":
            return web.Response(text=f"Page {name}. Some words here.", content_type="text/plain")
        if kind == "json":
            return web.json_response({"title": f"Doc {name}", "n": name})
        if kind == "faulty":  # the media type picks a faulty handler (see faulty_handlers)
            body = b"60" if name == "hang" else b"x"
            return web.Response(body=body, content_type=f"application/x-test-{name}")
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    return app, gets


async def start_cli(*argv: str, module: str = "pipeline") -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, *argv, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def run_cli(*argv: str, limit: float = 90, module: str = "pipeline") -> tuple[int, str]:
    proc = await start_cli(*argv, module=module)
    _, stderr = await asyncio.wait_for(proc.communicate(), limit)
    return proc.returncode, stderr.decode()


async def test_mixed_input_gives_one_record_per_url_line(tmp_path):
    app, gets = site()
    async with serve(app) as base:
        lines = [
            "\ufeff" + f"{base}/text/1", "", "# comment", f"  {base}/json/2  ",
            f"{base}/text/1", "not a url", f"{base}/missing", "file:///etc/passwd",
            f"{base}/faulty/crash", f"{base}/faulty/hang", f"{base}/faulty/die",
            f"{base}/text/3", "http://x.test/" + "a" * 100_000, "http://169.254.169.254/",
        ]
        urls = tmp_path / "urls.txt"
        urls.write_bytes("\r\n".join(lines).encode() + b"\n\x00\xff\n")
        out = tmp_path / "out.jsonl"
        handlers = [arg for spec in SPECS for arg in ("--handler", spec)]
        code, stderr = await run_cli(str(urls), "-o", str(out), *LOOPBACK, *handlers,
                                     "--workers", "2", "--handler-timeout", "1",
                                     "--timeout", "5", "--retries", "0")
    assert code == 0, stderr
    records = sorted(read_records(out), key=lambda r: r["index"])
    assert [r["index"] for r in records] == list(range(13))
    kinds = [r["error"]["kind"] if r["error"] else "ok" for r in records]
    assert kinds == ["ok", "ok", "ok", "invalid_url", "http_status", kinds[5], "extract",
                     "extract", "extract", "ok", "invalid_url", "blocked", "invalid_url"]
    assert kinds[5] in {"invalid_url", "blocked"}  # a file: URL is refused either way
    assert records[1]["handler"] == "json" and records[1]["title"] == "Doc 2"
    assert records[0]["content"] == records[2]["content"] == "Page 1. Some words here."
    assert gets["/text/1"] == 1  # the duplicate was fetched once
    assert "13 records" in stderr


async def test_ordered_output_against_a_jittery_server(tmp_path):
    app, _ = site(jitter=0.05)
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text("".join(f"{base}/text/{i}\n" for i in range(60)))
        out = tmp_path / "out.jsonl"
        code, stderr = await run_cli(str(urls), "-o", str(out), "--ordered", "--workers", "1",
                                     "--concurrency", "16", *LOOPBACK)
    assert code == 0, stderr
    records = read_records(out)
    assert [r["index"] for r in records] == list(range(60))
    assert all(r["content"] == f"Page {i}. Some words here." for i, r in enumerate(records))


async def test_sigint_then_resume_against_a_slow_server(tmp_path):
    app, gets = site(delay=0.3)
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text("".join(f"{base}/text/{i}\n" for i in range(40)))
        out = tmp_path / "out.jsonl"
        flags = ["--workers", "1", "--no-head", *LOOPBACK]
        proc = await start_cli(str(urls), "-o", str(out), "--concurrency", "2", *flags)
        for _ in range(600):
            if out.exists() and out.read_bytes().count(b"\n") >= 4:
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 130, stderr
        assert b"--resume" in stderr and b"Traceback" not in stderr
        with out.open("ab") as handle:  # as if killed mid-write
            handle.write(b'{"url":"' + f"{base}/text/39".encode() + b'","ind')
        done_before = {r["index"] for r in read_records_lenient(out)}
        assert 4 <= len(done_before) < 40
        code, stderr2 = await run_cli(str(urls), "-o", str(out), "--resume",
                                      "--concurrency", "8", *flags)
    assert code == 0, stderr2
    indices = [r["index"] for r in read_records(out)]
    assert sorted(indices) == list(range(40))  # every URL exactly once across both runs
    assert all(gets[f"/text/{i}"] == 1 for i in done_before)  # done work was not redone


async def test_a_dripping_model_costs_each_url_its_compress_deadline_only(tmp_path):
    """A model endpoint dripping a byte at a time: each URL's compress stage ends at its
    deadline (a compress error counted in elapsed_ms), and the run ends with them."""
    from tests.store.test_compress import dripping_model

    app, _ = site()
    async with serve(app) as base, dripping_model() as (model, asked):
        urls = tmp_path / "urls.txt"
        urls.write_text("".join(f"{base}/text/{i}\n" for i in range(3)))
        out = tmp_path / "out.jsonl"
        env = {"PIPELINE_COMPRESS_MODEL": "m", "PIPELINE_COMPRESS_BASE_URL": model,
               "PIPELINE_COMPRESS_CONCURRENCY": "1", "PIPELINE_CONFIG": ""}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pipeline", str(urls), "-o", str(out), "--workers", "1",
            "--compress", "--compress-floor", "10", "--compress-deadline", "0.5", *LOOPBACK,
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stderr=asyncio.subprocess.PIPE)
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr
    records = read_records(out)
    assert sorted(r["index"] for r in records) == [0, 1, 2]
    assert all(r["error"]["kind"] == "compress" for r in records)
    assert all("within 0.5 s" in r["error"]["message"] for r in records)
    assert all(r["elapsed_ms"] >= 500 for r in records)
    assert 1 <= len(asked) <= 3  # one model slot: a URL may end while still waiting for it


def read_records_lenient(path: Path) -> list[dict]:
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records

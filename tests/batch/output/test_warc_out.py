"""``--warc-out``: real WARC files, read to their end by warcio (the writer is fastwarc), from
runs against servers on 127.0.0.1; torn records cut back; a WARC run over them gives the same
content."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.batch.output.warc_out import WarcWriter, repair, warc_files
from pipeline.cli import command as cli
from tests.batch.shards.test_sharded import Site, merged, write_urls
from tests.support.pages import in_thread, serve
from tests.support.records import read_records
from tests.support.warc_files import article, exchange, read_all, record_headers

pytest.importorskip("fastwarc", reason="the warc extra: pip install -e '.[warc]'")
pytest.importorskip("warcio", reason="warcio reads what we write (the test extra)")

ROOT = Path(__file__).resolve().parents[3]
LOOPBACK = ["--allow-net", "127.0.0.1/32", "--rate", "1000", "--per-host", "16", "--quiet"]
STEM = "part-00000-of-00001"
CAP = 20_000  # --max-bytes of the site runs


def site_app() -> web.Application:
    """Pages of every kind an archive meets."""
    async def handle(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path.startswith("/gzip"):
            return web.Response(body=gzip.compress(article("Gzip page")),
                                headers={"Content-Type": "text/html",
                                         "Content-Encoding": "gzip"})
        if path.startswith("/chunked") or path == "/endless":
            response = web.StreamResponse(headers={"Content-Type": "text/html"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            if request.method == "HEAD":
                return response
            rounds = 100 if path == "/endless" else 1  # /endless passes --max-bytes
            for _ in range(rounds):
                await response.write(article("Chunked page"))
            await response.write_eof()
            return response
        if path == "/moved":
            raise web.HTTPMovedPermanently("/gzip/after-redirect")
        if path == "/image.png":
            return web.Response(body=b"\x89PNG\r\n\x1a\n" + b"\0" * 100,
                                content_type="image/png")
        if path == "/huge":
            return web.Response(body=b"a " * CAP, content_type="text/plain")
        if path.startswith("/page/"):
            return web.Response(body=article(f"Page {path}"), content_type="text/html")
        raise web.HTTPNotFound(text="no such page")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


PATHS = ["/gzip", "/chunked", "/moved", "/missing", "/endless", "/image.png", "/huge",
         "/page/1"]


def run(argv: list[str]) -> int:
    return cli.main(argv)


def responses(directory: Path) -> dict[str, tuple[dict, object, bytes]]:
    """The response records of every WARC file in ``directory`` by target URI (warcio)."""
    found = {}
    for path in sorted(directory.glob("*.warc.gz")):
        for warc, http, payload in record_headers(path):
            if warc["WARC-Type"] == "response":
                found[warc["WARC-Target-URI"]] = (warc, http, payload)
    return found


def test_every_response_is_archived_as_received_and_read_to_the_end(tmp_path):
    warc = tmp_path / "warc"
    with in_thread(serve(site_app())) as base:
        urls = write_urls(tmp_path / "urls.txt", [base + path for path in PATHS])
        code = run([str(urls), "-o", str(tmp_path / "out.jsonl"), "--warc-out",
                    str(warc), "--max-bytes", str(CAP), "--header", "Cookie: id=secret",
                          "--header", "Authorization: Bearer secret", *LOOPBACK])
    assert code == 0
    [path] = warc_files(warc, STEM)
    assert path.name == f"{STEM}-00000.warc.gz"
    kinds = [kind for kind, _, _ in read_all(path)]  # every digest checked, to the end
    assert kinds[0] == "warcinfo"
    assert kinds[1:] == ["request", "response"] * ((len(kinds) - 1) // 2)
    found = responses(warc)
    # refused before a byte of the body: a binary type, a Content-Length over the cap
    assert base + "/image.png" not in found and base + "/huge" not in found
    warc_headers, http, payload = found[base + "/gzip"]
    assert http.get_header("Content-Encoding") == "gzip"
    assert gzip.decompress(payload) == article("Gzip page")  # stored as it came
    assert "WARC-Truncated" not in warc_headers
    _, http, payload = found[base + "/chunked"]
    assert http.get_header("Transfer-Encoding") is None  # the framing is gone: renamed
    assert http.get_header("X-Crawler-Transfer-Encoding") == "chunked"
    assert payload == article("Chunked page")
    warc_headers, http, payload = found[base + "/endless"]
    assert warc_headers["WARC-Truncated"] == "length"
    assert CAP < len(payload) < 100 * len(article("Chunked page"))  # what came, up to the cap
    warc_headers, http, _ = found[base + "/moved"]
    assert http.get_statuscode() == "301" and warc_headers["WARC-Truncated"] == "unspecified"
    assert base + "/gzip/after-redirect" in found and base + "/missing" in found
    requests = [headers for headers, _, _ in record_headers(path)
                if headers["WARC-Type"] == "request"]
    everything = gzip.decompress(path.read_bytes())  # every member
    assert b"secret" not in everything and b"\r\nCookie: <redacted>\r\n" in everything
    assert b"\r\n\r\nHEAD /" not in everything  # HEAD probes are not archived
    ids = {headers["WARC-Record-ID"] for headers, _, _ in record_headers(path)}
    assert all(headers["WARC-Concurrent-To"] in ids for headers in requests)


def test_a_warc_run_over_the_archive_gives_the_same_content(tmp_path):
    warc = tmp_path / "warc"
    with in_thread(serve(site_app())) as base:
        urls = write_urls(tmp_path / "urls.txt", [base + path for path in PATHS])
        assert run([str(urls), "-o", str(tmp_path / "http.jsonl"), "--warc-out",
                    str(warc), "--max-bytes", str(CAP), *LOOPBACK]) == 0
    assert run([str(warc), "--input-format", "warc", "-o", str(tmp_path / "warc.jsonl"),
                "--max-bytes", str(CAP), "--quiet"]) == 0
    fetched = {r["final_url"]: r for r in read_records(tmp_path / "http.jsonl")}
    stored = read_records(tmp_path / "warc.jsonl")
    ok = {r["url"]: r for r in stored if r["ok"]}
    assert set(ok) == {r["final_url"] for r in fetched.values() if r["ok"]}
    for url, record in ok.items():
        for field in ("content", "title", "metadata", "content_type", "status", "handler"):
            assert record[field] == fetched[url][field], (url, field)
    kinds = {r["url"]: r["error"]["kind"] for r in stored if not r["ok"]}
    assert kinds == {base + "/moved": "http_status", base + "/missing": "http_status",
                     base + "/endless": "too_large"}  # the same verdict under the same cap
    assert all(r["source"].startswith(str(warc)) for r in stored)


def test_files_rotate_at_the_size_and_each_opens_with_warcinfo(tmp_path):
    warc = tmp_path / "warc"
    with in_thread(serve(site_app())) as base:
        urls = write_urls(tmp_path / "urls.txt", [f"{base}/page/{n}" for n in range(12)])
        assert run([str(urls), "-o", str(tmp_path / "out.jsonl"), "--warc-out",
                    str(warc), "--warc-max-bytes", "3000", *LOOPBACK]) == 0
    files = warc_files(warc, STEM)
    assert len(files) > 3
    assert [path.name for path in files] == [f"{STEM}-{n:05d}.warc.gz"
                                             for n in range(len(files))]
    targets = []
    for path in files:
        records = list(read_all(path))
        assert records[0][0] == "warcinfo"
        targets += [url for kind, url, _ in records if kind == "response"]
    assert sorted(targets) == sorted(f"{base}/page/{n}" for n in range(12))


def test_earlier_files_are_neither_lost_nor_mixed_in_unasked(tmp_path, capsys):
    warc = tmp_path / "warc"
    with in_thread(serve(site_app())) as base:
        urls = write_urls(tmp_path / "urls.txt", [f"{base}/page/1"])
        argv = [str(urls), "--warc-out", str(warc), *LOOPBACK]
        assert run([*argv, "-o", str(tmp_path / "a.jsonl")]) == 0
        first = warc_files(warc, STEM)[0].read_bytes()
        assert run([*argv, "-o", str(tmp_path / "b.jsonl")]) == 2
        assert "holds WARC files of an earlier run" in capsys.readouterr().err
        assert warc_files(warc, STEM)[0].read_bytes() == first
        assert run([*argv, "-o", str(tmp_path / "b.jsonl"), "--overwrite"]) == 0
        assert warc_files(warc, STEM)[0].read_bytes() != first
        assert run([str(tmp_path / "a.jsonl"), "--input-format", "warc", "-o",
                    str(tmp_path / "c.jsonl"), "--warc-out", str(warc)]) == 2
    assert "fetches none" in capsys.readouterr().err


def test_without_fastwarc_the_flag_says_what_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "fastwarc", None)
    urls = write_urls(tmp_path / "urls.txt", ["http://127.0.0.1:9/"])
    assert cli.main([str(urls), "-o", str(tmp_path / "o.jsonl"), "--warc-out",
                     str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pip install -e '.[warc]'" in err


def _pairs(tmp_path: Path, count: int) -> Path:
    """A WARC file of ``count`` request/response pairs written by the writer."""
    writer = WarcWriter(tmp_path, STEM).open()
    for n in range(count):
        writer.keep(exchange(f"http://example.test/{n}", article(f"Page {n}")))
    writer.close()
    return warc_files(tmp_path, STEM)[0]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(min_value=0.0, max_value=1.0))
def test_a_torn_end_is_cut_back_to_the_last_whole_pair(tmp_path_factory, cut):
    folder = tmp_path_factory.mktemp("torn")
    path = _pairs(folder, 4)
    whole = path.read_bytes()
    path.write_bytes(whole[:int(len(whole) * cut)])
    repair(path)
    kinds = [kind for kind, _, _ in read_all(path)]  # readable to its end
    assert kinds in ([], ["warcinfo"], *[["warcinfo"] + ["request", "response"] * n
                                         for n in range(1, 5)])
    assert whole.startswith(path.read_bytes())
    writer = WarcWriter(folder, STEM).open()  # and it goes on after the last whole pair
    writer.keep(exchange("http://example.test/after", article("After")))
    writer.close()
    assert list(read_all(path))[-1][1] == "http://example.test/after"


def test_a_failed_warc_write_stops_the_run_before_its_next_record(tmp_path, monkeypatch):
    from pipeline.batch.output import warc_out

    real_write = os.write
    writes = {"n": 0}

    def failing(fd: int, data: bytes) -> int:
        if len(data) > 1000:  # a record pair, not the warcinfo
            writes["n"] += 1
            if writes["n"] == 3:
                real_write(fd, bytes(data)[:100])  # part of it reached the disk
                raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(warc_out.os, "write", failing)
    with in_thread(serve(site_app())) as base:
        urls = write_urls(tmp_path / "urls.txt", [f"{base}/page/{n}" for n in range(8)])
        code = run([str(urls), "-o", str(tmp_path / "out.jsonl"), "--warc-out",
                    str(tmp_path / "w"), "--concurrency", "1", *LOOPBACK])
    assert code == cli.EXIT_OUTPUT
    [path] = warc_files(tmp_path / "w", STEM)
    archived = {url for kind, url, _ in read_all(path) if kind == "response"}
    assert len(archived) == 2  # the torn third pair was cut off
    assert {r["url"] for r in read_records(tmp_path / "out.jsonl")} <= archived


async def test_kill_9_then_resume_every_url_once_and_every_file_readable(tmp_path):
    site = Site(delay=0.05)
    async with site.serving(hosts=1):
        urls = site.urls(per_host=120)
        listed = write_urls(tmp_path / "urls.txt", urls)
        out, warc = tmp_path / "out.jsonl", tmp_path / "warc"
        argv = [sys.executable, "-m", "pipeline", str(listed), "-o", str(out), "--warc-out",
                str(warc), "--warc-max-bytes", "4000", "--concurrency", "8", *LOOPBACK]
        proc = await asyncio.create_subprocess_exec(*argv, cwd=ROOT,
                                                    env={**os.environ, "PYTHONPATH": str(ROOT)})
        for _ in range(600):  # until a few records are out, at most 60 s
            await asyncio.sleep(0.1)
            if out.exists() and out.read_bytes().count(b"\n") >= 20:
                break
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        assert out.read_bytes().count(b"\n") < len(urls)  # killed half-way
        resumed = await asyncio.create_subprocess_exec(*argv, "--resume", cwd=ROOT,
                                                       env={**os.environ,
                                                            "PYTHONPATH": str(ROOT)})
        assert await asyncio.wait_for(resumed.wait(), 120) == 0
    records = read_records(out)
    assert sorted(r["index"] for r in records) == list(range(len(urls)))
    archived = set()
    for path in warc_files(warc, STEM):
        archived |= {url for kind, url, _ in read_all(path) if kind == "response"}
    assert {r["url"] for r in records} == archived == set(urls)


def test_each_shard_writes_its_own_files_listed_in_the_manifest(tmp_path):
    site = Site()
    with in_thread(site.serving(hosts=3)):
        urls = site.urls(per_host=4)
        out, warc = tmp_path / "out", tmp_path / "warc"
        # its own process, as a user runs it (the shard processes fork from it)
        done = subprocess.run([sys.executable, "-m", "pipeline",
                               str(write_urls(tmp_path / "urls.txt", urls)), "-o", str(out),
                               "--processes", "2", "--warc-out", str(warc), *LOOPBACK],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    listed = manifest["warc"]["files"]
    assert sorted(listed) == sorted(path.name for path in warc.iterdir())
    assert {name[:len("part-00000-of-00002")] for name in listed} == {
        "part-00000-of-00002", "part-00001-of-00002"}
    archived = set()
    for shard in range(2):
        marker = json.loads((out / f"part-{shard:05d}-of-00002.done").read_text())
        for name in marker["warc"]:
            archived |= {url for kind, url, _ in read_all(warc / name) if kind == "response"}
    assert archived == set(urls)
    assert len(merged(out, tmp_path)) == len(urls)


@pytest.mark.parametrize("keep", [0.3, 0.55, 0.999])
def test_a_torn_end_of_a_file_larger_than_a_read_is_cut_back(tmp_path, keep):
    writer = WarcWriter(tmp_path, STEM).open()
    bodies = [os.urandom(400_000) for _ in range(6)]  # incompressible: ~2.4 MB of members
    for n, body in enumerate(bodies):
        writer.keep(exchange(f"http://example.test/{n}", body))
    writer.close()
    [path] = warc_files(tmp_path, STEM)
    whole = path.read_bytes()
    assert len(whole) > 2 * (1 << 20)
    path.write_bytes(whole[:int(len(whole) * keep)])
    assert repair(path) > 0
    records = list(read_all(path))
    assert [size for kind, _, size in records if kind == "response"] == [
        400_000] * ((len(records) - 1) // 2)
    assert len(records) % 2 == 1 and len(records) < 13

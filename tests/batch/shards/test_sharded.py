"""Sharded runs: ``--shard K/N``, ``--processes N``, ``merge``, against servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import signal
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from pipeline.batch.host_queue import host_key
from pipeline.batch.input.items import InputItem, load_items, read_items
from pipeline.batch.shards.plan import parse_shard, shard_of, split_items
from pipeline.cli import command as cli
from pipeline.core.errors import UsageError
from tests.cli.test_end_to_end import run_cli, start_cli
from tests.support.pages import serve
from tests.support.records import read_records

LOOPBACK = ["--allow-net", "127.0.0.1/32", "--rate", "1000", "--no-head", "--workers", "1"]


# --- which shard takes which line ------------------------------------------------------------

HOSTS = st.sampled_from(["a.test", "B.test", "b.test:8080", "127.0.0.1:9", "[::1]:80", "c.test"])
LINES = st.one_of(
    st.builds(lambda scheme, host, path: f"{scheme}://{host}/{path}",
              st.sampled_from(["http", "https", "HTTP"]), HOSTS, st.text(max_size=12)),
    st.text(max_size=30),  # not a URL at all
)


@given(lines=st.lists(LINES, max_size=60), shards=st.integers(1, 40))
def test_every_line_lands_in_exactly_one_shard_with_all_of_its_host(lines, shards,
                                                                     tmp_path_factory):
    items = list(read_items(io.BytesIO("\n".join(lines).encode())))
    spools = split_items(items, shards, list(range(shards)), tmp_path_factory.mktemp("spool"))
    taken: dict[int, int] = {}
    for shard, spool in spools.items():
        with open(spool.path, "rb") as handle:
            found = list(load_items(handle))
        assert spool.count == len(found)
        assert [item.index for item in found] == sorted(item.index for item in found)
        for item in found:
            assert item.index not in taken  # exactly one shard
            taken[item.index] = shard
    assert sorted(taken) == [item.index for item in items]  # and every line has one
    by_host: dict[str, set[int]] = {}
    for item in items:
        if (key := host_key(item.url)) is not None:
            by_host.setdefault(key, set()).add(taken[item.index])
    assert all(len(found) == 1 for found in by_host.values())  # a host lives in one shard


def test_a_shard_is_k_of_n():
    assert parse_shard("0/1") == (0, 1) and parse_shard("3/8") == (3, 8)
    for wrong in ("1/1", "-1/2", "2", "a/b", "0/0"):
        with pytest.raises(UsageError, match="K/N"):
            parse_shard(wrong)
    assert shard_of("http://A.test/x", 7) == shard_of("http://a.test:80/y?z", 7)


def test_an_item_crosses_a_spool_file_whole():
    item = InputItem(7, "http://a.test/é", "a problem", {"column": ["x", 1]})
    assert list(load_items(io.BytesIO(item.to_json() + InputItem(8, "u").to_json()))) == [
        item, InputItem(8, "u")]


# --- runs over several hosts ------------------------------------------------------------------

class Site:
    """Text pages on ``count`` hosts (one server each); GETs per URL and the most GETs in
    progress at once per host."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.gets: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self._now: Counter[str] = Counter()
        self.bases: list[str] = []

    def app(self, host: int) -> web.Application:
        async def page(request: web.Request) -> web.Response:
            url = f"{self.bases[host]}{request.path}"
            self.gets[url] += 1
            self._now[host] += 1
            self.peak[host] = max(self.peak[host], self._now[host])
            try:
                await asyncio.sleep(self.delay)
            finally:
                self._now[host] -= 1
            if request.path.startswith("/kill"):  # the kill_once handler, see faulty_handlers
                return web.Response(body=request.query["marker"].encode(),
                                    content_type="application/x-test-kill-once")
            return web.Response(text=f"Page {url}.", content_type="text/plain")

        app = web.Application()
        app.router.add_get("/{tail:.*}", page)
        return app

    @contextlib.asynccontextmanager
    async def serving(self, hosts: int) -> AsyncIterator[Site]:
        async with contextlib.AsyncExitStack() as stack:
            for host in range(hosts):
                self.bases.append("")
                self.bases[host] = await stack.enter_async_context(serve(self.app(host)))
            yield self

    def urls(self, per_host: int) -> list[str]:
        """``per_host`` pages of every host, the hosts interleaved."""
        return [f"{base}/p/{i}" for i in range(per_host) for base in self.bases]


def write_urls(path: Path, urls: list[str]) -> Path:
    path.write_text("".join(f"{url}\n" for url in urls))
    return path


def merged(out_dir: Path, tmp_path: Path) -> list[dict]:
    """``merge`` the run (in this process); every record, in the merged file's order."""
    target = tmp_path / "merged.jsonl"
    assert cli.main(["merge", str(out_dir), "-o", str(target)]) == 0
    return read_records(target)


def lines_in(paths: list[Path]) -> int:
    return sum(path.read_bytes().count(b"\n") for path in paths if path.exists())


@pytest.mark.parametrize("start", ["default", "spawn"])  # spawn: where fork is not safe
async def test_processes_run_every_line_once_with_each_host_polite_and_in_one_shard(tmp_path,
                                                                                   start):
    site = Site(delay=0.02)
    async with site.serving(hosts=5):
        urls = [*site.urls(per_host=12), "not a url", site.urls(1)[0]]
        out = tmp_path / "out"
        code, stderr = await run_cli(
            str(write_urls(tmp_path / "urls.txt", urls)), "-o", str(out), "--processes", "2",
            "--per-host", "2", "--concurrency", "8", *LOOPBACK,
            module="tests.batch.shards.spawn_cli" if start == "spawn" else "pipeline")
    assert code == 0, stderr
    assert "62 records" in stderr and "merge" in stderr and "Traceback" not in stderr
    assert "went to shard" not in stderr  # five hosts: both shards work
    assert sorted(path.name for path in out.iterdir()) == [
        "_SUCCESS", "manifest.json", "part-00000-of-00002.done", "part-00000-of-00002.jsonl",
        "part-00001-of-00002.done", "part-00001-of-00002.jsonl"]  # the spool is gone
    for shard in (0, 1):
        records = read_records(out / f"part-{shard:05d}-of-00002.jsonl")
        assert all(shard_of(r["url"], 2) == shard for r in records)  # by host
        marker = json.loads((out / f"part-{shard:05d}-of-00002.done").read_text())
        assert marker["records"] == len(records)
    records = merged(out, tmp_path)
    assert [r["index"] for r in records] == list(range(62))  # input order, each once
    assert records[60]["error"]["kind"] == "invalid_url"
    assert records[61]["content"] == records[0]["content"]
    assert all(count == 1 for count in site.gets.values()) and len(site.gets) == 60
    assert all(peak <= 2 for peak in site.peak.values())  # --per-host held for every host


async def test_processes_stop_on_ctrl_c_and_resume_to_every_line_once(tmp_path):
    site = Site(delay=0.3)
    async with site.serving(hosts=4):
        urls = write_urls(tmp_path / "urls.txt", site.urls(per_host=10))
        out = tmp_path / "out"
        flags = ["-o", str(out), "--processes", "2", "--per-host", "1", *LOOPBACK]
        proc = await start_cli(str(urls), *flags, "--concurrency", "2")
        partials = [out / f"part-{k:05d}-of-00002.jsonl.partial" for k in (0, 1)]
        for _ in range(600):
            if lines_in(partials) >= 4:
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # to the driver only: it passes the stop on
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 130, stderr
        assert b"--resume" in stderr and b"Traceback" not in stderr
        assert not (out / "_SUCCESS").exists()
        done_before = {r["url"] for path in partials if path.exists()
                       for r in read_records(path)}
        assert 4 <= len(done_before) < 40
        code, stderr = await run_cli(str(urls), *flags, "--resume", "--concurrency", "8")
    assert code == 0, stderr
    assert (out / "_SUCCESS").exists()
    assert [r["index"] for r in merged(out, tmp_path)] == list(range(40))
    assert all(site.gets[url] == 1 for url in done_before)  # finished work was not redone


async def test_shards_run_apart_interrupted_and_resumed_merge_to_every_line_once(tmp_path):
    site = Site(delay=0.2)
    async with site.serving(hosts=6):
        urls = write_urls(tmp_path / "urls.txt", site.urls(per_host=8))
        out = tmp_path / "out"
        flags = ["-o", str(out), "--per-host", "1", *LOOPBACK]
        busiest = Counter(shard_of(url, 3) for url in urls.read_text().split()).most_common(1)
        stopped = busiest[0][0]
        for shard in range(3):
            if shard != stopped:
                code, stderr = await run_cli(str(urls), "--shard", f"{shard}/3", *flags)
                assert code == 0, stderr
        # Not finished yet: merge refuses, naming the shard.
        assert cli.main(["merge", str(out), "-o", str(tmp_path / "early.jsonl")]) == 2
        assert not (tmp_path / "early.jsonl").exists()
        partial = out / f"part-{stopped:05d}-of-00003.jsonl.partial"
        proc = await start_cli(str(urls), "--shard", f"{stopped}/3", *flags, "--concurrency", "2")
        for _ in range(600):
            if lines_in([partial]) >= 3:
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 130, stderr
        with partial.open("ab") as handle:  # as if killed mid-write
            handle.write(b'{"url":"http://127.0.0.1:1/p/x","ind')
        code, stderr = await run_cli(str(urls), "--shard", f"{stopped}/3", *flags, "--resume",
                                     "--concurrency", "8")
    assert code == 0, stderr
    assert "resuming:" in stderr and "dropped a torn last line" in stderr
    assert [r["index"] for r in merged(out, tmp_path)] == list(range(48))
    assert all(count == 1 for count in site.gets.values())


def test_sharded_runs_check_their_options_and_their_directory(tmp_path, capsys):
    urls = write_urls(tmp_path / "urls.txt", ["http://a.test/1"])
    a_file = tmp_path / "out.jsonl"
    a_file.write_text("")
    cases = [
        (["--processes", "2"], "give -o OUT_DIR"),
        (["--shard", "2/2", "-o", str(tmp_path / "d")], "K/N"),
        (["--shards", "4", "-o", str(tmp_path / "d")], "--engine ray"),
        (["--shard", "0/2", "--processes", "2", "-o", str(tmp_path / "d")], "drop --processes"),
        (["--processes", "2", "-o", str(a_file)], "is a file"),
        (["--shard", "0/2", "-o", str(tmp_path / "new.jsonl")],
         f"names a file: give -o OUT_DIR, then extract-pipeline merge OUT_DIR -o "
         f"{tmp_path / 'new.jsonl'}"),
    ]
    for flags, message in cases:
        assert cli.main([str(urls), *flags]) == 2, flags
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, (flags, err)
    assert cli.main(["merge", str(tmp_path)]) == 2
    assert "not the output directory of a sharded run" in capsys.readouterr().err
    assert not (tmp_path / "new.jsonl").exists()


async def test_a_resume_with_other_settings_is_refused(tmp_path):
    site = Site()
    async with site.serving(hosts=1):
        urls = write_urls(tmp_path / "urls.txt", site.urls(per_host=3))
        out = tmp_path / "out"
        code, stderr = await run_cli(str(urls), "--shard", "0/2", "-o", str(out), *LOOPBACK)
        assert code == 0, stderr
        code, stderr = await run_cli(str(urls), "--shard", "1/2", "-o", str(out), "--resume",
                                     "--format", "text", *LOOPBACK)
    assert code == 2 and '--format "markdown" there, "text" here' in stderr
    urls.write_text(urls.read_text() + "http://a.test/more\n")
    code, stderr = await run_cli(str(urls), "--shard", "1/2", "-o", str(out), "--resume",
                                 *LOOPBACK)
    assert code == 2 and "another input file" in stderr


def test_the_ray_engine_without_ray_is_a_one_line_usage_error(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "pipeline.batch.shards.ray_engine", raising=False)
    urls = write_urls(tmp_path / "urls.txt", ["http://a.test/1"])
    assert cli.main([str(urls), "-o", str(tmp_path / "out"), "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert "pip install -e '.[ray]'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()  # nothing was started or written

"""``--engine ray`` end to end on a local Ray (2 CPUs) over servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.cli import command as cli
from tests.batch.shards.test_sharded import LOOPBACK, Site, merged, write_urls

ray = pytest.importorskip(
    "ray", reason="Ray is not installed (not in the test extra: it is large): "
    "pip install -e '.[test,ray]' runs this test")
# Starting a local Ray, its workers and the retried task: minutes on a loaded 2-core machine.
# The bound catches a hang; it is not what is tested.
pytestmark = pytest.mark.timeout(900)


async def test_ray_runs_every_shard_and_a_killed_task_costs_no_line(tmp_path, local_ray):
    """One page kills the worker running its shard the first time it is handled: Ray runs
    the shard again, which continues its part file, so every line is there exactly once and
    what the lost attempt had finished is not fetched again."""
    site = Site()
    async with site.serving(hosts=3):
        urls = site.urls(per_host=10)
        marker = tmp_path / "killed"
        kill = f"{site.bases[0]}/kill?marker={marker}"
        urls.insert(3 * 4, kill)  # after host 0's first four pages
        out = tmp_path / "out"
        argv = [str(write_urls(tmp_path / "urls.txt", urls)), "-o", str(out),
                "--engine", "ray", "--shards", "5", "--concurrency", "1", "--quiet",
                "--handler", "tests.support.faulty_handlers:kill_once", *LOOPBACK]
        # in a thread: the servers answer from this event loop meanwhile
        code = await asyncio.to_thread(cli.main, argv)
    assert code == 0
    assert marker.exists()  # the first attempt of the shard was killed
    records = merged(out, tmp_path)
    assert [r["index"] for r in records] == list(range(len(urls)))
    assert records[12]["content"] == "survived killed"
    killed = f"{site.bases[0]}/kill"
    assert site.gets[killed] == 2  # the killed attempt, then the retry
    assert all(count == 1 for url, count in site.gets.items() if url != killed)
    assert sorted(path.name for path in out.glob("part-*.jsonl")) == [
        f"part-{shard:05d}-of-00005.jsonl" for shard in range(5)]  # empty shards too
    assert (out / "_SUCCESS").exists()


async def test_ray_shards_each_write_their_own_warc_files(tmp_path, local_ray):
    """--warc-out under Ray: one writer per shard task, every file listed and read whole."""
    warcio = pytest.importorskip("warcio", reason="warcio reads what we write (the test extra)")
    pytest.importorskip("fastwarc", reason="the warc extra")
    from pipeline.batch.output.warc_out import warc_files

    site = Site()
    async with site.serving(hosts=3):
        urls = site.urls(per_host=3)
        out, warc = tmp_path / "out", tmp_path / "warc"
        argv = [str(write_urls(tmp_path / "urls.txt", urls)), "-o", str(out), "--engine",
                "ray", "--shards", "3", "--warc-out", str(warc), "--quiet", *LOOPBACK]
        code = await asyncio.to_thread(cli.main, argv)
    assert code == 0
    archived = set()
    for shard in range(3):
        for path in warc_files(warc, f"part-{shard:05d}-of-00003"):
            with open(path, "rb") as handle:
                archived |= {record.rec_headers.get_header("WARC-Target-URI")
                             for record in warcio.ArchiveIterator(handle)
                             if record.rec_type == "response"}
    assert archived == set(urls)
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["warc"]["files"]) == sorted(path.name for path in warc.iterdir())

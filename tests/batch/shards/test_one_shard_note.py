"""A ``--processes N`` run whose URLs all fall to one shard (one host) says so."""

from __future__ import annotations

from pathlib import Path

from pipeline.batch.shards.plan import Spool
from pipeline.batch.shards.processes import one_shard_note
from tests.batch.shards.test_sharded import LOOPBACK, Site, write_urls
from tests.cli.test_end_to_end import run_cli


def spools(*counts: int) -> dict[int, Spool]:
    return {shard: Spool(Path(f"items-{shard}"), count) for shard, count in enumerate(counts)}


def test_the_note_is_for_one_busy_shard_among_several_only():
    note = one_shard_note(spools(0, 7, 0))
    assert note is not None and note.startswith("all 7 URLs went to shard 1")
    assert one_shard_note(spools(3, 4)) is None  # the work is shared
    assert one_shard_note(spools(5)) is None  # one shard asked for (a resume of one)
    assert one_shard_note(spools(0, 1)) is None  # one URL: nothing to share
    assert one_shard_note(spools(0, 0)) is None


async def test_a_single_host_processes_run_says_one_shard_got_everything(tmp_path):
    site = Site()
    async with site.serving(hosts=1):
        urls = write_urls(tmp_path / "urls.txt", site.urls(per_host=6))
        out = tmp_path / "out"
        code, stderr = await run_cli(str(urls), "-o", str(out), "--processes", "2", *LOOPBACK)
    assert code == 0, stderr
    [note] = [line for line in stderr.splitlines() if "went to shard" in line]
    assert note.startswith("extract-pipeline: all 6 URLs went to shard ")
    assert "6 records" in stderr

"""--dedup keeps the earliest input line as the original, whichever copy finishes first: in a
plain run, after an interrupted run is resumed, and in a sharded run and its ``merge --dedup``.

A loopback site plants pairs of copies (lines 2k and 2k+1) and answers the earlier line of
each pair only after its later line has been asked for (and a little later), so the later
copy finishes first.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal

import pytest
from aiohttp import web

from pipeline.cli import command as cli
from tests.batch.shards.test_sharded import write_urls
from tests.cli.test_end_to_end import run_cli
from tests.support.pages import in_thread, serve
from tests.support.records import read_records

PAIRS = 40
VOCABULARY = [f"word{n}" for n in range(400)]
FLAGS = ["--allow-net", "127.0.0.1/32", "--rate", "inf", "--per-host", "64",
         "--concurrency", "100", "--no-head", "--workers", "1", "--quiet"]
HELD_BACK = 0.05  # seconds the earlier copy is answered after the later one is asked for


def texts(mode: str) -> list[str]:
    """Pair k: a 300-word text (line 2k) and its copy (line 2k+1): three words changed for
    ``near``, other white space for ``exact``."""
    rng = random.Random(33)
    out = []
    for _ in range(PAIRS):
        words = rng.choices(VOCABULARY, k=300)
        copy = list(words)
        if mode == "near":
            for place in rng.sample(range(len(copy)), 3):
                copy[place] = "changed"
        out += [" ".join(words), "  ".join(copy) + "\n"]
    return out


class PairSite:
    """Serves ``texts`` at /p/<line>; an even line waits for its partner's request.
    ``stop_at``: asking for that line sends this process SIGTERM (an in-process run stops),
    and ``hang`` is not answered until a request comes after ``hang`` is set to None."""

    def __init__(self, mode: str, *, stop_at: int | None = None,
                 hang: int | None = None, hold: bool = True) -> None:
        self.texts = texts(mode)
        self.stop_at, self.hang, self.hold = stop_at, hang, hold
        self.asked: dict[int, asyncio.Event] = {}

    def _asked(self, line: int) -> asyncio.Event:
        return self.asked.setdefault(line, asyncio.Event())

    def app(self) -> web.Application:
        async def page(request: web.Request) -> web.Response:
            line = int(request.match_info["n"])
            self._asked(line).set()
            if line == self.stop_at:
                os.kill(os.getpid(), signal.SIGTERM)
            if line == self.hang:
                await self._asked(-1).wait()  # the next run's first request ends it
            if self.hang is None:
                self._asked(-1).set()
            if self.hold and line % 2 == 0:
                await self._asked(line + 1).wait()
                await asyncio.sleep(HELD_BACK)
            return web.Response(text=self.texts[line], content_type="text/plain")

        app = web.Application()
        app.router.add_get("/p/{n}", page)
        return app


def urls(base: str) -> list[str]:
    return [f"{base}/p/{n}" for n in range(2 * PAIRS)]


def assert_earliest_is_original(records: list[dict]) -> None:
    marks = {r["index"]: r["duplicate_of"] for r in records}
    assert sorted(marks) == list(range(2 * PAIRS))
    later_kept = [k for k in range(PAIRS) if marks[2 * k] is not None]
    assert later_kept == [], f"the later copy was the original in pairs {later_kept}"
    assert all(marks[2 * k + 1] == 2 * k for k in range(PAIRS))


@pytest.mark.parametrize("mode", ["near", "exact"])
def test_a_plain_run_keeps_the_earliest_line_as_the_original(tmp_path, mode):
    site = PairSite(mode)
    out = tmp_path / "out.jsonl"
    with in_thread(serve(site.app())) as base:
        listing = write_urls(tmp_path / "urls.txt", urls(base))
        assert cli.main([str(listing), "-o", str(out), "--dedup", mode, *FLAGS]) == 0
    assert_earliest_is_original(read_records(out))


def test_a_resumed_run_keeps_the_earliest_line_as_the_original(tmp_path):
    """The first run is stopped while line 20 (the earlier of a pair) is unanswered and its
    copy, line 21, done: the resumed run must still make line 20 the original."""
    out = tmp_path / "out.jsonl"
    site = PairSite("near", stop_at=2 * PAIRS - 1, hang=20)
    with in_thread(serve(site.app())) as base:
        listing = write_urls(tmp_path / "urls.txt", urls(base))
        assert cli.main([str(listing), "-o", str(out), "--dedup", "near", *FLAGS]) == 130
        first = [r["index"] for r in read_records(out)]
        assert first == list(range(20))  # an input-order prefix, up to the unanswered line
        site.stop_at = site.hang = None
        site.hold = False  # line 21 is done: line 20 must not wait for it
        assert cli.main([str(listing), "-o", str(out), "--dedup", "near", "--resume",
                         *FLAGS]) == 0
    assert_earliest_is_original(read_records(out))


async def test_shards_and_merge_keep_the_earliest_line_as_the_original(tmp_path):
    site_a, site_b = PairSite("near"), PairSite("near")
    async with serve(site_a.app()) as one, serve(site_b.app()) as two:
        listing = write_urls(tmp_path / "urls.txt", urls(one) + urls(two))
        out = tmp_path / "out"
        code, stderr = await run_cli(str(listing), "-o", str(out), "--processes", "2",
                                     "--dedup", "near", *FLAGS)
    assert code == 0, stderr
    for path in sorted(out.glob("part-*.jsonl")):
        # the two sites serve the same texts: a shard marks each copy with the lowest
        # index among the lines of its pair that it holds (one site's, or both sites')
        part = read_records(path)
        first: dict[int, int] = {}
        for index in sorted(r["index"] for r in part):
            first.setdefault(index % (2 * PAIRS) // 2, index)
        expected = {r["index"]: first[r["index"] % (2 * PAIRS) // 2] for r in part}
        assert {r["index"]: r["duplicate_of"] for r in part} == {
            index: None if original == index else original
            for index, original in expected.items()}
    target = tmp_path / "merged.jsonl"
    assert cli.main(["merge", str(out), "-o", str(target), "--dedup", "near"]) == 0
    merged = read_records(target)
    # the two sites serve the same texts: the second site's lines are copies of the first's
    assert [r["duplicate_of"] for r in merged[2 * PAIRS:]] == [
        2 * (n // 2) for n in range(2 * PAIRS)]
    assert_earliest_is_original(merged[:2 * PAIRS])

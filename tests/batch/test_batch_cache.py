"""``--cache DIR``: a re-run reads fresh pages from the full-text cache, not the network."""

from __future__ import annotations

from collections import Counter

from aiohttp import web

from tests.cli.test_end_to_end import LOOPBACK, run_cli
from tests.support.pages import serve
from tests.support.records import read_records

LONG = " ".join(f"Sentence number {i} of a long page." for i in range(40))


async def test_rerun_with_cache_does_not_refetch(tmp_path):
    gets: Counter = Counter()

    async def page(request: web.Request) -> web.Response:
        if request.method == "GET":
            gets[request.path] += 1
        if request.path == "/long":
            return web.Response(text=LONG, content_type="text/plain")
        if request.path == "/short":
            return web.Response(text="Short page.", content_type="text/plain")
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    cache = tmp_path / "cache"
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{base}/long\n{base}/short\n{base}/missing\n")
        runs = []
        for n, extra in enumerate([[], [], ["--max-chars", "100"]]):
            out = tmp_path / f"out{n}.jsonl"
            code, stderr = await run_cli(str(urls), "-o", str(out), "--cache", str(cache),
                                         "--workers", "1", "--retries", "0", *LOOPBACK, *extra)
            assert code == 0, stderr
            runs.append(sorted(read_records(out), key=lambda r: r["index"]))
    assert gets["/long"] == 1 and gets["/short"] == 1  # later runs hit the cache
    assert gets["/missing"] == 3  # failures are not cached
    first, second, smaller = runs
    assert first[0]["content"] == LONG and not first[0]["truncated"]
    assert [r["content"] for r in first] == [r["content"] for r in second]
    assert [r["index"] for r in second] == [0, 1, 2]
    assert second[2]["error"]["kind"] == "http_status"
    # the same cached full text, cut to the new budget
    assert len(smaller[0]["content"]) <= 100 and smaller[0]["truncated"]
    assert LONG[smaller[0]["next_offset"]:].startswith("Sentence number")
    assert smaller[1]["content"] == "Short page."

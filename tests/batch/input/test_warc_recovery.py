"""WARC input recovers as warcio does: a record with a wrong Content-Length costs no other
record; a URL captured several times (a run's own archive of a retry) is one record from its
last capture, or one per capture with ``--warc-captures all``; a FIFO is refused in one
line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from aiohttp import web

from pipeline.batch.input.warc_in import warc_items
from pipeline.cli import command as cli
from tests.batch.shards.test_sharded import write_urls
from tests.support.pages import in_thread, serve
from tests.support.records import read_records
from tests.support.warc_files import pages_warc, warcio_responses

pytest.importorskip("fastwarc", reason="the warc extra: pip install -e '.[warc]'")
pytest.importorskip("warcio", reason="warcio writes the test files (the test extra)")

LENGTHS = {"too short": b"100", "negative": b"-5", "not a number": b"abc",
           "absurd": b"99999999999999999999", "a little too large": b"3000",
           "past the end": b"50000"}


def warc_run(*argv: str) -> int:
    return cli.main([*argv, "--input-format", "warc", "--quiet"])


@pytest.mark.parametrize("gzipped", [False, True], ids=["warc", "warc.gz"])
@pytest.mark.parametrize("name", sorted(LENGTHS))
def test_a_wrong_content_length_costs_no_other_record(tmp_path, name, gzipped):
    path = tmp_path / ("a.warc.gz" if gzipped else "a.warc")
    urls = pages_warc(path, 5, gzipped=gzipped, bad=1, content_length=LENGTHS[name])
    others = [url for n, url in enumerate(urls) if n != 1]
    # what warcio reads (up to where it gives up), we read too
    assert set(warcio_responses(path)) - {urls[1]} <= set(others)
    items = list(warc_items([str(path)]))
    assert [item.url for item in items if item.problem is None and item.url != urls[1]] \
        == others
    assert len(items) == 5  # the bad record is one item (ok, or an error), nothing else
    out = tmp_path / "out.jsonl"
    assert warc_run(str(path), "-o", str(out)) == 0
    records = {r["url"]: r for r in read_records(out)}
    assert all(records[url]["ok"] and f"Page {url[-1]}" in records[url]["content"]
               for url in others)


def retry_site() -> web.Application:
    """/page/N: text pages; /page/3 answers 500 to its first GET, then 200."""
    gets: dict[str, int] = {}

    async def page(request: web.Request) -> web.Response:
        gets[request.path] = gets.get(request.path, 0) + 1
        if request.path == "/page/3" and gets[request.path] == 1:
            return web.Response(status=500, text="try again")
        return web.Response(text=f"<html><body><p>Page {request.path} holds a paragraph of "
                            "words to extract.</p></body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/page/{n}", page)
    return app


def test_a_runs_own_archive_of_a_retry_replays_as_the_runs_records(tmp_path):
    warc = tmp_path / "warc"
    with in_thread(serve(retry_site())) as base:
        urls = write_urls(tmp_path / "urls.txt", [f"{base}/page/{n}" for n in range(14)])
        assert cli.main([str(urls), "-o", str(tmp_path / "http.jsonl"), "--warc-out",
                         str(warc), "--allow-net", "127.0.0.1/32", "--rate", "1000",
                         "--retries", "1", "--no-head", "--quiet"]) == 0
    fetched = {r["url"]: r for r in read_records(tmp_path / "http.jsonl")}
    assert all(r["ok"] for r in fetched.values()) and len(fetched) == 14
    assert warc_run(str(warc), "-o", str(tmp_path / "again.jsonl")) == 0
    again = read_records(tmp_path / "again.jsonl")
    assert sorted(r["url"] for r in again) == sorted(fetched)  # 14, not 15
    assert all(r["ok"] and r["content"] == fetched[r["url"]]["content"] for r in again)
    assert warc_run(str(warc), "-o", str(tmp_path / "all.jsonl"), "--warc-captures",
                    "all") == 0
    every = sorted(read_records(tmp_path / "all.jsonl"), key=lambda r: r["index"])
    retried = [r for r in every if r["url"].endswith("/page/3")]
    assert len(every) == 15 and [r["ok"] for r in retried] == [False, True]
    assert retried[0]["error"]["kind"] == "http_status"


def test_the_last_capture_of_a_url_across_files_and_the_numbering(tmp_path):
    first, second = tmp_path / "a.warc", tmp_path / "b.warc"
    pages_warc(first, 3, gzipped=False)
    pages_warc(second, 2, gzipped=True)  # example.test/0 and /1 again
    items = list(warc_items([str(first), str(second)]))
    assert [(item.index, item.url, item.extra["source"].split("@")[0]) for item in items] == [
        (0, "http://example.test/2", str(first)), (1, "http://example.test/0", str(second)),
        (2, "http://example.test/1", str(second))]
    assert len(list(warc_items([str(first), str(second)], captures="all"))) == 5


def test_warc_captures_goes_with_warc_input(tmp_path, capsys):
    urls = write_urls(tmp_path / "urls.txt", ["http://example.test/"])
    assert cli.main([str(urls), "--warc-captures", "all"]) == 2
    assert "--warc-captures goes with --input-format warc" in capsys.readouterr().err


def test_a_fifo_named_as_a_warc_is_refused_in_one_line(tmp_path, capsys):
    fifo = tmp_path / "stream.warc"
    os.mkfifo(fifo)
    assert cli.main([str(fifo), "-o", str(tmp_path / "out.jsonl"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "not a file nor a directory" in err
    assert not Path(tmp_path / "out.jsonl").exists()

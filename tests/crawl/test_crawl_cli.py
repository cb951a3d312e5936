"""``crawl`` and ``map`` on the command line: flags, outputs, the summary, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli.command import main
from tests.crawl.site import Site, html, raw
from tests.support.pages import in_thread, serve

FLAGS = ["--allow-private", "--retries", "0", "--no-head", "--no-detect-lang"]


def _site() -> Site:
    site = Site()
    site.pages.update({
        "/": html("Home", ["/a", "/b", "/secret/x", "/a.pdf"]),
        "/a": html("Page A", ["/b"]),
        "/b": html("Page B"),
        "/secret/x": html("Secret"),
        "/robots.txt": raw("User-agent: *\nDisallow: /secret/\n", "text/plain"),
    })
    return site


def test_crawl_writes_records_a_ledger_and_a_summary(tmp_path: Path, capsys) -> None:
    site = _site()
    out, skipped = tmp_path / "out.jsonl", tmp_path / "skipped.jsonl"
    with in_thread(serve(site.app())) as url:
        status = main(["crawl", url + "/", "-o", str(out), "--skipped", str(skipped),
                       "--exclude", "*.pdf", "--links", "--markdown-dir",
                       str(tmp_path / "md"), *FLAGS])
    assert status == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(record["url"][len(url):] for record in records) == ["/", "/a", "/b"]
    home = next(record for record in records if record["url"] == url + "/")
    assert (home["depth"], home["parent"], home["via"]) == (0, None, "start")
    assert url + "/a" in home["links"]
    reasons = sorted(json.loads(line)["reason"] for line in skipped.read_text().splitlines())
    assert reasons == ["excluded", "robots"]
    host = url.split("//", 1)[1].replace(":", "_")
    page = (tmp_path / "md" / host / "a.md").read_text()
    assert page.startswith(f'---\nurl: "{url}/a"\ntitle: "Page A"\ndepth: 1\n---\n')
    assert (tmp_path / "md" / host / "index.md").exists()
    err = capsys.readouterr().err
    assert "skipped 2 URLs (" in err and "Crawl-delay capped at 30 s" in err


def test_map_writes_urls_and_jsonl(tmp_path: Path) -> None:
    site = _site()
    lines, jsonl = tmp_path / "urls.txt", tmp_path / "urls.jsonl"
    with in_thread(serve(site.app())) as url:
        assert main(["map", url + "/", "-o", str(lines), "--ignore-robots", *FLAGS]) == 0
        assert main(["map", url + "/", "-o", str(jsonl), "--max-depth", "0", *FLAGS]) == 0
    found = lines.read_text().splitlines()
    assert sorted(found) == sorted(url + path for path in ("/", "/a", "/b", "/secret/x"))
    assert [json.loads(line) for line in jsonl.read_text().splitlines()] == [
        {"url": url + "/", "depth": 0, "parent": None, "title": "Home", "via": "start"}]


@pytest.mark.parametrize(("argv", "message"), [
    (["crawl", "ftp://example.com/"], "a start URL must be an absolute http(s) URL"),
    (["crawl", "not a url"], "a start URL must be an absolute http(s) URL"),
    (["crawl", "http://example.com/", "--include", "/a[b"], "unusable pattern"),
    (["crawl", "http://example.com/", "--max-pages", "0"], "--max-pages must be at least 1"),
    (["map", "http://example.com/", "-o", "x.parquet"], "map writes URLs"),
])
def test_bad_input_is_a_one_line_usage_error(argv: list[str], message: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_a_refused_address_is_a_record_not_a_traceback(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    # loopback without --allow-private: the address policy refuses it
    assert main(["crawl", "http://127.0.0.1:9/", "-o", str(out), "--no-sitemap"]) == 0
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["error"]["kind"] == "blocked"
    assert "Traceback" not in capsys.readouterr().err


def _written(out: Path) -> list[dict]:
    """The records a crawl wrote so far: JSON lines, or a Parquet directory's parts and the
    journal of the group not written as a part yet (read as the crawl goes on)."""
    if out.suffix == ".txt":  # a map's URL lines
        lines = out.read_bytes().splitlines(keepends=True) if out.exists() else []
        return [{"url": line.decode().rstrip()} for line in lines if line.endswith(b"\n")]
    if out.suffix != ".parquet":
        return [json.loads(line) for line in out.read_bytes().splitlines()
                if line.endswith(b"}")] if out.exists() else []
    import pyarrow.parquet as pq

    rows = [row for part in sorted(out.glob("part-*.parquet"))
            for row in pq.read_table(part, columns=["index", "url"]).to_pylist()]
    for journal in sorted(out.glob(".journal-*.jsonl")):
        rows += [json.loads(line) for line in journal.read_bytes().splitlines()
                 if line.endswith(b"}")]
    return rows


@pytest.mark.parametrize(("command", "stop", "name"), [
    ("crawl", "SIGKILL", "out.jsonl"), ("crawl", "SIGTERM", "out.jsonl"),
    ("crawl", "SIGKILL", "out.parquet"), ("map", "SIGKILL", "urls.txt"),
    ("map", "SIGTERM", "urls.jsonl")])
def test_a_stopped_crawl_then_resume_writes_every_page_once(tmp_path: Path, command: str,
                                                            stop: str, name: str) -> None:
    """A crawl killed mid-way (kill -9, or SIGTERM: exit 130) is finished by --resume: every
    page once, and only pages that were in flight (or whose records had not reached the
    file) are fetched again. Parquet output too: its journal holds the records of the
    group not written as a part yet. A map too: its frontier log says which pages are done
    (a page that failed is no URL of the map, and is not fetched again either)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.crawl.site import slow

    site = Site()
    pages = [f"/p{number}" for number in range(30)]
    site.pages["/"] = html("Home", pages[:10])
    for number, path in enumerate(pages):
        children = pages[10 + 2 * number: 12 + 2 * number] if number < 10 else []
        site.pages[path] = slow(html(f"Page {number}", [*children, f"/gone{number}"]), 0.05)
    out = tmp_path / name
    argv = [command, "-o", str(out), "--no-sitemap", "--ignore-robots", "--concurrency", "2",
            "--per-host", "2", *FLAGS]
    with in_thread(serve(site.app())) as url:
        process = subprocess.Popen([sys.executable, "-m", "pipeline", *argv, url + "/"],
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while len(_written(out)) < 8 and (
                process.poll() is None and time.monotonic() < deadline):
            time.sleep(0.05)
        os.kill(process.pid, getattr(signal, stop))
        status = process.wait()
        assert status == (-signal.SIGKILL if stop == "SIGKILL" else 130)
        before = len(_written(out))
        assert 0 < before < 31, "the crawl should have been killed mid-way"
        assert main([*argv, "--resume", url + "/"]) == 0
    urls = [record["url"][len(url):] for record in _written(out)]
    gone = [] if command == "map" else [f"/gone{number}" for number in range(30)]
    assert sorted(urls) == sorted(["/", *pages, *gone])  # every page, once
    repeated = [path for path, count in site.hits.items() if count > 1]
    assert len(repeated) <= 4, repeated  # in flight at the kill: at most 2 × 2 per host


@pytest.mark.timeout(180)
def test_render_auto_takes_links_from_the_rendered_page(tmp_path: Path) -> None:
    """A JS-only navigation: the home page is an app shell whose script writes the article
    and its links; with --render auto the crawl follows them."""
    from pipeline.browser.locate import check_rendering
    from pipeline.core.errors import PipelineError
    from pipeline.core.settings import Settings

    try:
        check_rendering(Settings(render="auto"))
    except PipelineError as exc:
        pytest.skip(f"no browser: {exc.message}")
    prose = "".join(f"<p>Paragraph {i} of the app's page tells the reader about the harbour, "
                    "its tides and the boats that wait for them.</p>" for i in range(8))
    script = ("document.getElementById('root').innerHTML = "
              + json.dumps(f'<article><h1>App</h1>{prose}<a href="/next">next</a></article>'))
    site = Site()
    site.pages["/"] = ('<!doctype html><html><head><title>App</title></head><body>'
                       f'<div id="root"></div><script>{script}</script></body></html>')
    site.pages["/next"] = html("Next page")
    out = tmp_path / "out.jsonl"
    with in_thread(serve(site.app())) as url:
        assert main(["crawl", url + "/", "-o", str(out), "--render", "auto", "--no-sitemap",
                     "--ignore-robots", "--render-wait", "5", *FLAGS]) == 0
    records = {json.loads(line)["url"][len(url):]: json.loads(line)
               for line in out.read_text().splitlines()}
    assert records["/"]["rendered"] is True
    assert records["/next"]["parent"] == url + "/" and records["/next"]["ok"]


def test_a_resumed_map_writes_no_url_twice(tmp_path: Path) -> None:
    """A map stopped after a page's URL line reached the file but before its log said the
    page was done: resumed, the page is fetched again (it was in flight) and its URL is not
    written a second time."""
    site = Site()
    site.pages.update({"/": html("Home", ["/a"]), "/a": html("Page A")})
    out = tmp_path / "urls.txt"
    with in_thread(serve(site.app())) as url:
        out.write_text(f"{url}/\n")
        (tmp_path / "urls.txt.frontier.jsonl").write_text(json.dumps(
            {"q": url + "/", "d": 0, "p": None, "v": "start"}) + "\n")
        assert main(["map", url + "/", "-o", str(out), "--resume", "--no-sitemap",
                     "--ignore-robots", *FLAGS]) == 0
    assert out.read_text().splitlines() == [url + "/", url + "/a"]
    assert site.hits == {"/": 1, "/a": 1}


@pytest.mark.parametrize(("command", "name"), [("crawl", "out.jsonl"), ("crawl", "out.parquet"),
                                               ("map", "urls.txt")])
def test_a_resumed_crawl_keeps_the_trap_guard_s_memory(tmp_path: Path, command: str,
                                                       name: str) -> None:
    """A crawl that gave up on a URL pattern (its pages kept coming back the same) and
    stopped: resumed, it does not fetch that pattern again — neither the URL it had queued
    before giving up nor any after."""
    site = Site()
    site.pages["/"] = html("Home", ["/cal/0"])
    for month in range(12):
        site.pages[f"/cal/{month}"] = html("Calendar", [f"/cal/{month + 1}"],
                                           text="No events this month. " * 20)
    out = tmp_path / name
    argv = [command, "-o", str(out), "--no-sitemap", "--ignore-robots", "--concurrency", "1",
            "--per-host", "1", *FLAGS]
    with in_thread(serve(site.app())) as url:
        assert main([*argv, url + "/"]) == 0
        fetched = sum(site.hits.values())
        stopped = next(month for month in range(12) if f"/cal/{month}" not in site.hits)
        assert 1 < stopped < 12  # the pattern was given up before the calendar's end
        assert main([*argv, "--resume", url + "/"]) == 0
    assert sum(site.hits.values()) == fetched  # the URL of /cal/<stopped> was queued, not fetched
    assert len(_written(out)) == stopped + 1  # home and the pages before the stop, once


def test_a_finished_crawl_resumed_fetches_nothing(tmp_path: Path) -> None:
    """Pages that ended as no record (a redirect onto a page already written, a redirect
    out of the scope) are done too: resuming a crawl that had finished requests no page."""
    from tests.crawl.site import redirect

    site = Site()
    site.pages.update({"/": html("Home", ["/b", "/a", "/away"]), "/b": html("Page B"),
                       "/a": redirect("/b"), "/away": redirect("http://127.0.0.2:9/x")})
    out = tmp_path / "out.jsonl"
    argv = ["crawl", "-o", str(out), "--no-sitemap", "--ignore-robots", "--concurrency", "1",
            "--per-host", "1", "--skipped", str(tmp_path / "skipped.jsonl"), *FLAGS]
    with in_thread(serve(site.app())) as url:
        assert main([*argv, url + "/"]) == 0
        fetched = dict(site.hits)
        assert main([*argv, "--resume", url + "/"]) == 0
    assert fetched["/a"] == 1 and fetched["/away"] == 1  # both requested, neither a record
    assert dict(site.hits) == fetched
    assert sorted(record["url"][len(url):] for record in _written(out)) == ["/", "/b"]

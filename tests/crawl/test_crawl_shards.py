"""``crawl --processes N -o DIR``: several loopback sites (several ports of 127.0.0.1: other
hosts, so other shards), links across them, the global budget, robots per site, the skip
ledger, ``merge``, and ``--resume`` after ``kill -9`` of the driver."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.batch.shards.plan import shard_of
from pipeline.cli.command import main
from tests.crawl.site import Site, html, raw, redirect, slow
from tests.support.pages import in_thread, serve

FLAGS = ["--allow-private", "--retries", "0", "--no-head", "--no-detect-lang", "--quiet"]


@contextlib.contextmanager
def sites(count: int, shards: int = 2) -> Iterator[list[tuple[Site, str]]]:
    """``count`` sites served on 127.0.0.1, the first two owned by different shards."""
    with contextlib.ExitStack() as stack:
        served: list[tuple[Site, str]] = []
        while len(served) < count:
            site = Site()
            url = stack.enter_context(in_thread(serve(site.app())))
            if len(served) == 1 and shard_of(url, shards) == shard_of(served[0][1], shards):
                continue  # the second site must be another shard's
            served.append((site, url))
        yield served


def idle(directory: Path) -> None:
    """Wait (bounded) until no process holds a shard's lock."""
    from pipeline.batch.output.output_dir import OutputDir
    from pipeline.core.errors import UsageError

    output = OutputDir(directory, 2)
    for _ in range(600):
        try:
            output.check_idle(range(2))
            return
        except UsageError:
            time.sleep(0.05)
    raise AssertionError("a shard process outlived its killed driver")


def records(directory: Path) -> list[dict[str, object]]:
    """The records of the parts, finished or not (a torn last line left out)."""
    found = []
    for part in sorted([*directory.glob("part-*.jsonl"), *directory.glob("part-*.partial")]):
        for line in part.read_text().splitlines():
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
    return found


def test_links_across_sites_each_page_once_ledger_and_merge(tmp_path: Path, capsys) -> None:
    out, skipped, merged = tmp_path / "out", tmp_path / "skipped.jsonl", tmp_path / "all.jsonl"
    with sites(3) as [(a, au), (b, bu), (c, cu)]:
        a.pages.update({
            "/": html("A home", [f"{bu}/x", "/a", f"{bu}/private/p"], nofollow=[f"{cu}/nf"]),
            "/a": html("A a", [f"{bu}/x", f"{cu}/", "/"]),
        })
        b.pages.update({
            "/x": html("B x", [f"{au}/a", "/y", f"{au}/"], nofollow=[f"{cu}/nf"]),
            "/y": html("B y", [f"{cu}/", "/x"]),
            "/private/p": html("B private"),
            "/robots.txt": raw("User-agent: *\nDisallow: /private/\n", "text/plain"),
        })
        c.pages.update({"/": html("C home", [f"{au}/", f"{bu}/y"]), "/nf": html("C nf")})
        status = main(["crawl", au + "/", "--scope", "any", "--processes", "2", "-o", str(out),
                       "--skipped", str(skipped), "--no-sitemap", "--concurrency", "4",
                       *FLAGS[:-1]])
        assert status == 0
        expected = {au + "/", au + "/a", bu + "/x", bu + "/y", cu + "/"}
        found = records(out)
        assert sorted(str(record["url"]) for record in found) == sorted(expected)
        for site in (a, b, c):  # each page fetched once; robots.txt read, not the page
            pages = {path: count for path, count in site.hits.items() if path != "/robots.txt"}
            assert all(count == 1 for count in pages.values()), pages
        assert b.hits["/private/p"] == 0 and c.hits["/nf"] == 0
    by_url = {record["url"]: record for record in found}
    assert (by_url[bu + "/x"]["depth"], by_url[bu + "/x"]["parent"]) == (1, au + "/")
    ledger = [json.loads(line) for line in skipped.read_text().splitlines()]
    assert sorted((entry["url"], entry["reason"]) for entry in ledger) == sorted([
        (bu + "/private/p", "robots"), (cu + "/nf", "nofollow")])  # each once, whole lines
    err = capsys.readouterr().err
    assert "5 records" in err and "skipped 2 URLs" in err
    assert main(["merge", str(out), "-o", str(merged)]) == 0
    lines = [json.loads(line) for line in merged.read_text().splitlines()]
    assert sorted(str(line["url"]) for line in lines) == sorted(expected)
    assert [line["index"] for line in lines] == sorted(line["index"] for line in lines)


def test_the_global_budget_under_concurrency(tmp_path: Path, capsys) -> None:
    """Many pages on two sites, eight in flight per shard: exactly --max-pages records
    across the shards, no page requested past them, and the summary says so."""
    out = tmp_path / "out"
    with sites(2) as [(a, au), (b, bu)]:
        for site, url, other in ((a, au, bu), (b, bu, au)):
            site.pages["/"] = html("Home", [f"/p{n}" for n in range(30)] + [f"{other}/"])
            for n in range(30):
                site.pages[f"/p{n}"] = html(f"Page {n} of {url}", [f"{other}/p{n}"])
        status = main(["crawl", au + "/", bu + "/", "--scope", "any", "--processes", "2",
                       "-o", str(out), "--max-pages", "7", "--no-sitemap", "--ignore-robots",
                       "--concurrency", "8", "--per-host", "8", *FLAGS[:-1]])
        assert status == 0
        assert len(records(out)) == 7
        assert sum(a.hits.values()) + sum(b.hits.values()) == 7
    assert "the page budget ended the crawl with" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--processes", "2"], "a sharded run (--processes) writes a directory: give -o OUT_DIR"),
    (["--processes", "2", "-o", "out.jsonl"], "names a file"),
    (["--shards", "2", "-o", "out"], "--shards and --address go with --engine ray"),
    (["--engine", "ray", "--processes", "2", "-o", "out"], "drop --processes"),
])
def test_sharded_usage_errors_are_one_line(argv: list[str], message: str, tmp_path: Path,
                                           capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["crawl", "http://example.com/", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_map_is_one_process(capsys) -> None:
    assert main(["map", "http://example.com/", "--processes", "2"]) == 2
    assert "map runs in one process" in capsys.readouterr().err


@pytest.mark.parametrize("stop", ["SIGKILL", "SIGTERM"])
def test_resume_after_kill_9_of_the_driver(tmp_path: Path, stop: str) -> None:
    """``kill -9`` of a ``--processes 2`` crawl's driver (its shard processes die with it),
    or SIGTERM (passed on to the shards: exit 130), then ``--resume``: every page once, and
    only pages in flight at the stop (or whose records had not reached their part) fetched
    again."""
    out = tmp_path / "out"
    with sites(2) as [(a, au), (b, bu)]:
        for site, other in ((a, bu), (b, au)):
            pages = [f"/p{n}" for n in range(12)]
            site.pages["/"] = html("Home", [*pages[:4], f"{other}/"])
            for n, path in enumerate(pages):
                children = [*pages[4 + 2 * n: 6 + 2 * n], f"{other}{path}"] if n < 4 else []
                site.pages[path] = slow(html(f"Page {n}", children), 0.05)
        argv = ["crawl", au + "/", "--scope", "any", "--processes", "2", "-o", str(out),
                "--no-sitemap", "--ignore-robots", "--concurrency", "2", "--per-host", "2",
                *FLAGS]
        process = subprocess.Popen([sys.executable, "-m", "pipeline", *argv],
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while len(records(out)) < 6 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(process.pid, getattr(signal, stop))
        assert process.wait() == (-signal.SIGKILL if stop == "SIGKILL" else 130)
        idle(out)  # the shard processes die with the driver (PR_SET_PDEATHSIG)
        before = len(records(out))
        assert 0 < before < 26, "the crawl should have been killed mid-way"
        assert main([*argv, "--resume"]) == 0
        found = [str(record["url"]) for record in records(out)]
        expected = [base + path for base in (au, bu)
                    for path in ["/", *(f"/p{n}" for n in range(12))]]
        assert sorted(found) == sorted(expected)  # every page, once
        repeated = [path for site in (a, b) for path, count in site.hits.items() if count > 1]
        assert len(repeated) <= 8, repeated  # in flight: 2 per shard, records not yet written
    assert (out / "_SUCCESS").exists()


def test_a_start_page_redirect_to_another_shard_widens_every_scope(tmp_path: Path) -> None:
    """The start page redirects to a host another shard owns: that origin joins every
    shard's scope, its page is known there as an alias (not fetched again when linked), and
    its sitemap's URLs go to their owners."""
    out = tmp_path / "out"
    with sites(2) as [(a, au), (b, bu)]:
        a.pages.update({"/": redirect(f"{bu}/home"), "/y": html("A y"), "/z": html("A z")})
        b.pages.update({
            "/home": html("B home", ["/x", f"{au}/y"]),
            "/x": html("B x", ["/home", f"{au}/"]),
            "/s": html("B s"),
            "/sitemap.xml": raw(f"<urlset><url><loc>{bu}/s</loc></url>"
                                f"<url><loc>{au}/z</loc></url></urlset>", "application/xml"),
        })
        assert main(["crawl", au + "/", "--processes", "2", "-o", str(out),
                     "--ignore-robots", *FLAGS]) == 0
        found = {str(record["url"]): record for record in records(out)}
        assert sorted(found) == sorted([au + "/", bu + "/x", au + "/y", bu + "/s", au + "/z"])
        assert found[au + "/"]["final_url"] == bu + "/home"
        assert found[bu + "/s"]["via"] == "sitemap"
        pages = [(site, path) for site in (a, b) for path in site.pages
                 if path not in ("/robots.txt", "/sitemap.xml")]
        assert all(site.hits[path] == 1 for site, path in pages), [a.hits, b.hits]


def test_a_caller_that_crawled_in_process_before_can_shard(tmp_path: Path) -> None:
    """A crawl in this process starts its handler pool's forkserver; the shard processes a
    later sharded crawl forks must not use it (their pools would not start)."""
    with sites(2) as [(a, au), (b, bu)]:
        a.pages["/"] = html("A", [f"{bu}/"])
        b.pages["/"] = html("B", [f"{au}/"])
        common = ["--scope", "any", "--no-sitemap", "--ignore-robots", *FLAGS]
        assert main(["crawl", au + "/", "-o", str(tmp_path / "one.jsonl"), *common]) == 0
        assert main(["crawl", au + "/", "--processes", "2", "-o", str(tmp_path / "out"),
                     *common]) == 0
        assert sorted(str(record["url"]) for record in records(tmp_path / "out")) == [
            *sorted([au + "/", bu + "/"])]


def test_one_site_sharded_says_one_shard_does_the_work(tmp_path: Path, capsys) -> None:
    with sites(1) as [(a, au)]:
        a.pages["/"] = html("A", ["/b"])
        a.pages["/b"] = html("B")
        assert main(["crawl", au + "/", "--processes", "2", "-o", str(tmp_path / "out"),
                     "--no-sitemap", "--ignore-robots", *FLAGS[:-1]]) == 0
    assert len(records(tmp_path / "out")) == 2
    assert "one shard does the work" in capsys.readouterr().err

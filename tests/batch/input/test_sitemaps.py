"""``--sitemap`` and ``--feed`` end to end against a site on 127.0.0.1, and the parsers."""

from __future__ import annotations

import contextlib
import gzip

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.batch.input.expand import Expander
from pipeline.batch.input.feeds import feed_links
from pipeline.batch.input.run_input import ExpandOptions
from pipeline.batch.input.sitemaps import XmlLinks
from pipeline.batch.shards.plan import shard_of
from pipeline.fetch.base import FakeFetcher, FetchResult
from tests.batch.input.sitemap_site import NS, index, rss, sitemap_site, urlset
from tests.cli.test_end_to_end import run_cli
from tests.support.pages import serve
from tests.support.records import read_records

LOOPBACK = ["--allow-net", "127.0.0.1/32", "--rate", "1000", "--workers", "1", "--retries", "0"]


@contextlib.asynccontextmanager
async def site():
    base_of: dict[str, str] = {}
    app, gets = sitemap_site(base_of)
    async with serve(app) as base:
        base_of["base"] = base
        yield base, gets


def by_url(records: list[dict]) -> dict[str, dict]:
    found = {record["url"]: record for record in records}
    assert len(found) == len(records), "a URL was recorded twice"
    return found


async def test_sitemap_index_with_a_gzipped_child_and_a_loop_gives_each_url_once(tmp_path):
    out = tmp_path / "out.jsonl"
    async with site() as (base, gets):
        code, stderr = await run_cli("--sitemap", f"{base}/index.xml", "-o", str(out),
                                     *LOOPBACK)
    assert code == 0, stderr
    records = read_records(out)
    found = by_url(records)
    pages = {f"{base}/page/{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)}
    assert {url for url, r in found.items() if r["ok"]} == pages
    assert all(found[url]["content"].startswith("Page ") for url in pages)
    # source: the document each was found in, the gzip'd child included
    assert found[f"{base}/page/9"]["source"] == f"{base}/pages-2.xml.gz"
    assert found[f"{base}/page/3"]["source"] == f"{base}/pages-1.xml"  # its first sighting
    assert found[f"{base}/page/6"]["source"] == f"{base}/pages-1.xml"  # relative, resolved
    # the missing child is one error record naming the index that listed it
    missing = found[f"{base}/missing.xml"]
    assert missing["error"]["kind"] == "http_status" and missing["source"] == f"{base}/index.xml"
    assert len(records) == len(pages) + 1
    assert sorted(r["index"] for r in records) == list(range(len(records)))
    # the loop back to the index, the duplicates and the image are not fetched
    assert gets["/index.xml"] == 1 and gets["/pages-2.xml.gz"] == 1
    assert gets["/photo.jpg"] == 0 and all(gets[f"/page/{n}"] == 1 for n in range(1, 11))
    assert "2 duplicates" in stderr and "1 not http(s)" in stderr


async def test_feeds_rss_atom_and_json_give_their_item_links(tmp_path):
    out = tmp_path / "out.jsonl"
    async with site() as (base, _):
        code, stderr = await run_cli("--feed", f"{base}/feed.rss", "--feed", f"{base}/feed.atom",
                                     "--feed", f"{base}/feed.json", "-o", str(out),
                                     "--ordered", *LOOPBACK)
    assert code == 0, stderr
    records = read_records(out)
    assert [r["url"] for r in records] == [f"{base}/page/{n}" for n in range(20, 27)]
    assert all(r["ok"] for r in records)
    assert [r["source"].rsplit("/", 1)[1] for r in records] == \
        ["feed.rss"] * 3 + ["feed.atom"] * 2 + ["feed.json"] * 2


async def test_filters_cap_depth_and_a_list_beside_the_sitemaps(tmp_path):
    out = tmp_path / "out.jsonl"
    urls = tmp_path / "urls.txt"
    async with site() as (base, gets):
        urls.write_text(f"{base}/page/30\n{base}/page/31\n")
        code, stderr = await run_cli(
            str(urls), "--sitemap", f"{base}/plain.txt", "--sitemap", f"{base}/robots.txt",
            "--sitemap", f"{base}/nested.xml", "--sitemap-depth", "1",
            "--include", r"/page/1\d?$", "--exclude", "/page/13$",  # not "13": the port may hold it
            "-o", str(out), "--ordered", *LOOPBACK)
    assert code == 0, stderr
    records = read_records(out)
    assert [(r["index"], r["url"].removeprefix(base)) for r in records] == [
        (0, "/page/30"), (1, "/page/31"),  # the list first, untouched by the filters
        (2, "/page/12"),  # plain.txt: 13 excluded
        (3, "/page/1"),  # robots.txt's sitemap: 2..7 not included
        (4, "/nested-3.xml"),  # past --sitemap-depth 1: one record, not fetched
    ], (stderr, dict(gets))
    assert records[4]["error"]["kind"] == "too_large"
    assert records[4]["source"] == f"{base}/nested-2.xml"
    assert gets["/nested-3.xml"] == 0
    assert records[0]["source"] is None and records[2]["source"] == f"{base}/plain.txt"


async def test_max_urls_stops_the_walk(tmp_path):
    out = tmp_path / "out.jsonl"
    async with site() as (base, gets):
        code, stderr = await run_cli("--sitemap", f"{base}/index.xml", "--max-urls", "2",
                                     "-o", str(out), *LOOPBACK)
    assert code == 0, stderr
    assert len(read_records(out)) == 2
    assert gets["/pages-2.xml.gz"] == 0 and "stopped at --max-urls 2" in stderr


async def test_documents_go_through_the_fetcher_policy_robots_and_caps(tmp_path):
    out = tmp_path / "out.jsonl"
    async with site() as (base, gets):
        code, stderr = await run_cli(
            "--sitemap", f"{base}/private.xml", "--sitemap", f"{base}/bomb.xml.gz",
            "--sitemap", f"{base}/not-a-sitemap.html", "--robots", "--max-bytes", "50000",
            "-o", str(out), *LOOPBACK)
        assert code == 0, stderr
        refused = tmp_path / "refused.jsonl"
        code, stderr = await run_cli("--sitemap", f"{base}/index.xml", "-o", str(refused),
                                     "--rate", "1000")
    assert code == 0, stderr
    kinds = {r["url"].removeprefix(base): r["error"]["kind"] for r in read_records(out)}
    assert kinds == {"/private.xml": "robots", "/bomb.xml.gz": "too_large",
                     "/not-a-sitemap.html": "unsupported_type"}
    assert gets["/private.xml"] == 0
    # without --allow-net the loopback sitemap is refused before any request
    [record] = read_records(refused)
    assert record["error"]["kind"] == "blocked" and gets["/index.xml"] == 0


async def test_a_sharded_run_expands_once_and_shards_the_urls_like_lines(tmp_path):
    """--processes 2: the sitemap is read once, by the process that reads the input; its
    URLs (on four hosts) are split by host as lines are, each recorded exactly once."""
    extra: dict[str, tuple[bytes, str]] = {}
    base_of: dict[str, str] = {}
    app, gets = sitemap_site(base_of, extra)
    async with contextlib.AsyncExitStack() as servers:
        base = base_of["base"] = await servers.enter_async_context(serve(app))
        others = [await servers.enter_async_context(serve(sitemap_site({})[0]))
                  for _ in range(3)]
        pages = [f"{host}/page/{n}" for host in (base, *others) for n in range(5)]
        extra["/multi.xml"] = (urlset(pages), "application/xml")
        out = tmp_path / "out"
        code, stderr = await run_cli("--sitemap", f"{base}/multi.xml", "--feed",
                                     f"{base}/feed.rss", "-o", str(out), "--processes", "2",
                                     *LOOPBACK)
        assert code == 0, stderr
        code, stderr = await run_cli("merge", str(out), "-o", str(tmp_path / "merged.jsonl"))
        assert code == 0, stderr
    assert gets["/multi.xml"] == 1 and gets["/feed.rss"] == 1  # expanded once
    merged = read_records(tmp_path / "merged.jsonl")
    assert [r["index"] for r in merged] == list(range(23))
    expected = {*pages, *(f"{base}/page/{n}" for n in (20, 21, 22))}
    assert set(by_url(merged)) == expected and all(r["ok"] for r in merged)
    for shard in (0, 1):
        part = out / f"part-0000{shard}-of-00002.jsonl"
        assert all(shard_of(r["url"], 2) == shard for r in read_records(part))


# --- the parsers -------------------------------------------------------------------------------

LOCS = st.lists(st.from_regex(r"https://[a-z]{1,8}\.test/[a-z0-9/._~-]{0,30}", fullmatch=True),
                max_size=40)


@given(locs=LOCS, cuts=st.lists(st.integers(1, 4000), max_size=20))
@settings(max_examples=60, deadline=None)
def test_sitemap_links_do_not_depend_on_where_the_bytes_are_cut(locs, cuts):
    body = urlset(locs)
    parser = XmlLinks()
    found = []
    start = 0
    for cut in sorted(set(cuts)):
        found += parser.feed(body[start:cut])
        start = max(start, cut)
    found += parser.feed(body[start:]) + parser.close()
    assert found == [("page", loc) for loc in locs]
    assert parser.root == "urlset"


def test_the_xml_parser_expands_no_entity_and_reads_no_file():
    body = (b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/hostname">'
            b'<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            + f"<urlset {NS}><url><loc>https://a.test/&x;</loc></url>".encode()
            + b"<url><loc>https://a.test/&b;</loc></url></urlset>")
    parser = XmlLinks()
    links = parser.feed(body) + parser.close()
    assert all("aaaa" not in link and len(link) < 40 for _, link in links)


def test_feed_bytes_are_never_taken_for_a_file_name():
    with pytest.raises(ValueError):
        feed_links(b"/etc/hostname")


def test_feedparser_reads_rss_items_in_order():
    assert feed_links(rss(["https://a.test/1", "/2"])) == ["https://a.test/1", "/2"]


async def test_an_injected_fetcher_serves_the_documents_too():
    """The expansion takes any Fetcher (here a fake): a gzip'd index, a child, a loop."""
    root = "https://s.test/index.xml.gz"
    routes = {
        root: FetchResult(url=root, final_url=root, status=200, media_type="application/gzip",
                          charset=None, body=gzip.compress(index(["/a.xml", root]))),
        "https://s.test/a.xml": urlset(["https://s.test/1", "https://s.test/2"]),
    }
    fetcher = FakeFetcher(routes, media_type="application/xml")
    expander = Expander(ExpandOptions(sitemaps=(root,)), fetcher, 1 << 20)
    items = [item async for item in expander.items(start=5)]
    assert [(i.index, i.url, i.extra) for i in items] == [
        (5, "https://s.test/1", {"source": "https://s.test/a.xml"}),
        (6, "https://s.test/2", {"source": "https://s.test/a.xml"})]
    assert fetcher.calls == {root: 1, "https://s.test/a.xml": 1}


async def test_a_sitemap_run_is_resumed_without_doing_a_url_twice(tmp_path):
    """An earlier run stopped after 4 URLs (--max-urls stands in for the interruption); the
    resumed run walks the same sitemaps and does only the rest."""
    out = tmp_path / "out.jsonl"
    async with site() as (base, gets):
        args = ["--sitemap", f"{base}/index.xml", "-o", str(out), *LOOPBACK]
        code, stderr = await run_cli(*args, "--max-urls", "4")
        assert code == 0, stderr
        code, stderr = await run_cli(*args, "--resume")
    assert code == 0, stderr
    assert "resuming: 4 records already in" in stderr
    records = read_records(out)
    assert len(by_url(records)) == len(records) == 11
    assert sorted(r["index"] for r in records) == list(range(11))
    assert all(gets[f"/page/{n}"] == 1 for n in range(1, 11))


async def test_a_parser_failure_costs_its_document_not_the_walk(monkeypatch):
    def broken(body: bytes) -> list[str]:
        raise RuntimeError("parser bug")

    monkeypatch.setattr("pipeline.batch.input.documents.feed_links", broken)
    fetcher = FakeFetcher({"https://s.test/feed": rss(["https://s.test/1"]),
                           "https://s.test/map": urlset(["https://s.test/2"])},
                          media_type="application/xml")
    options = ExpandOptions(sitemaps=("https://s.test/map",), feeds=("https://s.test/feed",))
    expander = Expander(options, fetcher, 1 << 20)
    items = [item async for item in expander.items()]
    assert [(i.url, i.problem_kind if i.problem else None) for i in items] == [
        ("https://s.test/2", None), ("https://s.test/feed", "extract")]
    assert "parser bug" in items[1].problem


async def test_max_urls_bounds_a_fanning_index_of_indexes(tmp_path):
    """Every index lists 40 more indexes (and never a page): with --max-urls 5 the walk
    fetches at most 5 + --sitemap-depth documents and writes at most 5 records, the
    records of the documents nested too deep included (before: 8,385 documents and
    326,441 error records in two minutes, still going)."""
    gets: list[str] = []

    async def fan(request: web.Request) -> web.Response:
        if request.method == "GET":
            gets.append(request.path)
        name = request.path.removesuffix(".xml")
        children = [f"http://{request.host}{name}-{n}.xml" for n in range(40)]
        return web.Response(body=index(children), content_type="application/xml")

    app = web.Application()
    app.router.add_get("/{tail:.*}", fan)
    out = tmp_path / "out.jsonl"
    async with serve(app) as base:
        code, stderr = await run_cli("--sitemap", f"{base}/i.xml", "--max-urls", "5",
                                     "-o", str(out), *LOOPBACK, limit=300)
    assert code == 0, stderr
    records = read_records(out)
    assert 0 < len(records) <= 5 and not any(r["ok"] for r in records)
    assert len(gets) <= 5 + 4 and "stopped at --max-urls 5" in stderr


async def test_a_document_that_is_no_sitemap_or_feed_is_always_a_record(tmp_path):
    """Each says what it is; none yields garbage URLs (before: the lower-case doctype wrote
    nothing, the others read their bytes as lines of a text sitemap)."""
    base_of: dict[str, str] = {}
    page = "http://127.0.0.1:1/page/1"
    extra = {
        "/lower.html": (b"<!doctype html><html><body><p>Hi</p></body></html>", "text/html"),
        "/upper.html": (b"<!DOCTYPE html><html><body><p>Hi</p></body></html>", "text/html"),
        "/double.xml.gz": (gzip.compress(gzip.compress(urlset([page]))), "application/gzip"),
        "/utf16.xml": (urlset([page]).decode().replace("UTF-8", "UTF-16").encode("utf-16"),
                       "application/xml"),
        "/utf16.txt": (f"{page}\n".encode("utf-16-le"), "text/plain"),
        "/prose.txt": (b"Hello there\nno address on any line\n", "text/plain"),
        "/prologue.xml": (b'<?xml version="1.0"?>' + b"\n" * 60 + b"!", "application/xml"),
    }
    app, _ = sitemap_site(base_of, extra)
    out = tmp_path / "out.jsonl"
    async with serve(app) as base:
        base_of["base"] = base
        code, stderr = await run_cli(*(arg for path in extra for arg in ("--sitemap",
                                                                         base + path)),
                                     "-o", str(out), *LOOPBACK)
    assert code == 0, stderr
    found = {r["url"].removeprefix(base): r["error"] for r in read_records(out)}
    said = {path: (error["kind"], error["message"]) for path, error in found.items()}
    assert set(said) == set(extra), said  # one record each, and no page
    expected = {"/lower.html": "an HTML page", "/upper.html": "an HTML page",
                "/double.xml.gz": "a gzip file inside the gzip file",
                "/utf16.xml": "UTF-16", "/utf16.txt": "UTF-16 text without a byte-order mark",
                "/prose.txt": "none of them an http(s) URL", "/prologue.xml": "neither"}
    for path, words in expected.items():
        assert words in said[path][1], (path, said[path])
    assert {kind for kind, _ in said.values()} <= {"unsupported_type", "decode"}

"""The crawl through the batch engine on generated loopback sites."""

from __future__ import annotations

import io
import json

import pytest

from pipeline.crawl.ledger import Ledger
from pipeline.crawl.run import CrawlOptions, crawl
from tests.crawl.site import LOCAL, Site, html, raw, redirect


def _urls(result) -> list[str]:
    return sorted(record.url.split("/", 3)[3] for record in result.records)


async def test_a_small_site_each_page_once_with_depth_parent_and_via(site: Site) -> None:
    site.pages.update({
        "/": html("Home", ["/a", "/b", "/a#part", "/a?utm_source=x", "/b/index.html"]),
        "/a": html("A", ["/", "/c", "/moved"]),
        "/moved": redirect("/new"),
        "/new": html("New"),
        "/b/index.html": html("B", ["/a"]),
        "/b": redirect("/b/index.html"),
        "/c": html("C", ["/a"]),
    })
    stream = io.StringIO()
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False), LOCAL,
                         ledger=Ledger(stream))
    # /b redirects to /b/index.html, which is linked too: one record, whichever came first
    assert _urls(result) == ["", "a", "b/index.html", "c", "moved"]
    # ... though /b/index.html may be fetched twice: once as itself and once as /b's target
    # when both are in flight together (a redirect's target is known only once it answers)
    assert all(count == 1 for path, count in site.hits.items() if path != "/b/index.html")
    by_url = {record.url.rsplit("/", 1)[1] or "/": record for record in result.records}
    assert (by_url["/"].depth, by_url["/"].parent, by_url["/"].via) == (0, None, "start")
    assert (by_url["c"].depth, by_url["c"].parent) == (2, site.url + "/a")
    assert (by_url["moved"].via, by_url["moved"].final_url) == ("redirect", site.url + "/new")
    assert by_url["c"].links is None  # only with links=True
    skipped = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert {entry["reason"] for entry in skipped} <= {"duplicate"}
    assert not result.budget_ended


async def test_scope_robots_nofollow_and_another_origin(site: Site, other_site: Site) -> None:
    other_site.pages["/elsewhere"] = html("Elsewhere")
    other_site.pages["/away"] = html("Away")
    site.pages.update({
        "/": html("Home", ["/private/x", other_site.url + "/elsewhere", "/jump", "/ok"],
                  nofollow=["/hidden"]),
        "/robots.txt": raw("User-agent: *\nDisallow: /private/\n", "text/plain"),
        "/private/x": html("Private"),
        "/jump": redirect(other_site.url + "/away"),
        "/ok": html("Ok"),
        "/hidden": html("Hidden"),
    })
    stream = io.StringIO()
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False), LOCAL,
                         ledger=Ledger(stream))
    assert _urls(result) == ["", "ok"]
    assert site.hits["/private/x"] == 0 and site.hits["/hidden"] == 0
    assert other_site.hits["/away"] == 0 and other_site.hits["/elsewhere"] == 0
    reasons = {entry["url"].rsplit("/", 1)[1]: entry["reason"]
               for entry in map(json.loads, stream.getvalue().splitlines())}
    assert reasons == {"x": "robots", "elsewhere": "out_of_scope", "away": "out_of_scope",
                       "hidden": "nofollow"}
    assert result.skipped == {"robots": 1, "out_of_scope": 2, "nofollow": 1}
    assert "robots.txt obeyed, Crawl-delay capped at 30 s" in result.describe()


async def test_canonical_makes_an_alias(site: Site) -> None:
    canonical = '<link rel="canonical" href="{{}}/article">'
    site.pages.update({
        "/": html("Home", ["/article?ref=feed", "/article"]),
        "/article?ref=feed": html("Article", head=canonical.format(site.url)),
        "/article": html("Article", head=canonical.format(site.url)),
    })
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False, max_pages=10), LOCAL)
    assert len(result.records) == 2


async def test_the_budget_holds_under_concurrency(site: Site) -> None:
    site.pages["/"] = html("Home", [f"/p{number}" for number in range(60)])
    for number in range(60):
        site.pages[f"/p{number}"] = html(f"Page {number}", [f"/p{number}/q{i}" for i in range(3)])
    settings = LOCAL.model_copy(update={"concurrency": 16, "per_host": 16})
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False, max_pages=25), settings)
    assert len(result.records) == 25
    assert sum(site.hits.values()) - site.hits["/robots.txt"] == 25
    assert result.budget_ended and result.left > 0
    assert f"with {result.left} in-scope URLs left" in result.describe()


async def test_depth_limit_and_include_exclude(site: Site) -> None:
    site.pages.update({
        "/": html("Home", ["/docs/a", "/blog/b", "/docs/a.pdf"]),
        "/docs/a": html("A", ["/docs/deeper"]),
        "/docs/deeper": html("Deeper"),
        "/blog/b": html("B"),
    })
    result = await crawl([site.url + "/"], CrawlOptions(
        sitemap=False, max_depth=1, include=("/docs/**",), exclude=("*.pdf",)), LOCAL)
    assert _urls(result) == ["", "docs/a"]
    assert result.skipped == {"excluded": 2, "depth": 1}


async def test_sitemaps_from_robots_txt_seed_at_depth_zero(site: Site) -> None:
    site.pages.update({
        "/": html("Home"),
        "/orphan": html("Orphan"),
    })
    site.pages["/robots.txt"] = raw(f"Sitemap: {site.url}/map.xml\n", "text/plain")
    site.pages["/map.xml"] = raw(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{site.url}/orphan</loc></url></urlset>", "application/xml")
    result = await crawl([site.url + "/"], CrawlOptions(), LOCAL)
    orphan = next(record for record in result.records if record.url.endswith("/orphan"))
    assert (orphan.depth, orphan.via, orphan.parent) == (0, "sitemap", site.url + "/map.xml")


async def test_traps_are_named(site: Site) -> None:
    loop = "/".join(["x"] * 3)
    site.pages["/"] = html("Home", [f"/{loop}", "/" + "a" * 2100,
                                    "/" + "/".join(f"s{i}" for i in range(21))]
                           + [f"/cal/{month}" for month in range(1, 10)])
    for month in range(1, 10):
        site.pages[f"/cal/{month}"] = html("Calendar", [f"/cal/{month + 10}"],
                                           text="No events this month. " * 20)
    stream = io.StringIO()
    settings = LOCAL.model_copy(update={"concurrency": 1, "per_host": 1})
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False), settings,
                         ledger=Ledger(stream))
    reasons = {entry["reason"] for entry in map(json.loads, stream.getvalue().splitlines())}
    assert {"trap:repeated_segment", "trap:too_long", "trap:too_deep",
            "trap:same_content"} <= reasons
    assert sum(1 for record in result.records if "/cal/" in record.url) < 9


async def test_a_pdf_is_a_page_and_a_404_start_is_a_record(site: Site) -> None:
    from tests.handlers.conftest import make_pdf

    site.pages["/"] = html("Home", ["/doc.pdf"])
    site.pages["/doc.pdf"] = raw(make_pdf([["A PDF page of text"]]), "application/pdf")
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False), LOCAL)
    pdf = next(record for record in result.records if record.url.endswith(".pdf"))
    assert pdf.ok and pdf.handler == "pdf"
    missing = await crawl([site.url + "/nothing"], CrawlOptions(sitemap=False), LOCAL)
    assert [record.error.kind for record in missing.records] == ["http_status"]


async def test_a_page_of_100k_links_is_bounded(site: Site) -> None:
    links = "".join(f'<a href="/l{number}">l</a>' for number in range(100_000))
    site.pages["/"] = ("<html><head><title>Many</title></head><body><p>" + "Prose. " * 100
                       + "</p>" + links + "</body></html>")
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False, max_pages=1), LOCAL)
    assert len(result.records) == 1 and result.records[0].ok
    assert result.budget_ended and result.left == 10_000


async def test_a_page_of_links_alone_is_an_empty_record_whose_links_are_followed(
        site: Site) -> None:
    site.pages["/"] = ('<html><head><title>Hub</title></head><body>'
                       '<a href="/a"></a> <a href="/b"></a></body></html>')
    site.pages["/a"] = html("A")
    site.pages["/b"] = html("B")
    result = await crawl([site.url + "/"], CrawlOptions(sitemap=False), LOCAL)
    by_path = {record.url[len(site.url):]: record for record in result.records}
    assert sorted(by_path) == ["/", "/a", "/b"]
    assert by_path["/"].error is not None and by_path["/"].error.kind == "empty"


@pytest.mark.parametrize(("done", "stopped"), [(4, True), (3, False)])
async def test_a_resumed_crawl_replays_the_trap_memory_of_pages_done_only(
        done: int, stopped: bool) -> None:
    """The trap guard's memory comes back from the log's digests, but only for pages whose
    records are in the output: a page whose record was lost is fetched (and seen) again."""
    from pipeline.crawl.resume import Resumed
    from pipeline.crawl.run import Crawl

    pages = [f"http://127.0.0.1:1/cal/{month}" for month in range(4)]
    digest = bytes(8)  # four pages of one pattern, one text: three repeats stop it
    resumed = Resumed(done=["http://127.0.0.1:1/", *pages[:done]], last_index=done,
                      observed=[(page, page, digest) for page in pages])
    state = Crawl(["http://127.0.0.1:1/"], CrawlOptions(sitemap=False), resumed=resumed)
    assert (state.traps.check("http://127.0.0.1:1/cal/9") == "trap:same_content") is stopped

"""benchmarks/crawl.py: the generated site and the counting are right (no timing)."""

from collections import deque

from benchmarks.crawl import ALIASES, Site, count, generate, html, page_id, read_urls


def reachable_from_start(site: Site) -> set[int]:
    seen, queue = {0}, deque([0])
    while queue:
        for href in site.links[queue.popleft()]:
            target = page_id("http://127.0.0.1" + href) if href.startswith("/") else None
            if target is not None and target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def test_every_reachable_page_is_linked_and_no_orphan_is():
    site = generate(500, orphans=20)
    assert site.pages == 520 and len(site.links) == 520
    assert reachable_from_start(site) == set(range(500))


def test_links_spell_pages_every_alias_way_and_one_leaves_the_site():
    site = generate(300)
    hrefs = [href for links in site.links for href in links]
    for alias in ALIASES:
        shape = alias.format("")
        assert any(href.startswith("/s/") and href.endswith(shape.removeprefix("/s/"))
                   for href in hrefs)
    assert all(links[-1].startswith("http://elsewhere.invalid/") for links in site.links)
    page = html(site, 3)
    assert "<title>Page 3</title>" in page and all(f'href="{h}"' in page for h in site.links[3])


def test_page_id_folds_aliases_and_refuses_other_paths():
    base = "http://127.0.0.1:1"
    assert {page_id(base + a.format(42)) for a in ALIASES} == {42}
    assert page_id(base + "/robots.txt") is None and page_id(base + "/s/x/") is None


def test_count_judges_found_duplicates_and_orphans():
    site = generate(10, orphans=2)
    base = "http://127.0.0.1:1"
    urls = [base + "/s/0/", base + "/s/0/index.html", base + "/s/1/?utm_source=nav",
            base + "/s/11/", base + "/robots.txt"]
    judged = count(site, urls, {0: 2, 1: 1, 11: 3})
    assert judged.records == 5 and judged.found == 2 and judged.reachable == 10
    assert judged.duplicate_records == 1 and judged.duplicate_fetches == 3
    assert judged.orphans_returned == 1


def test_read_urls_takes_final_urls_and_skips_failures(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"url": "a", "final_url": "b", "ok": true}\n{"url": "c", "ok": false}\n'
                   '{"url": "d"}\n\n')
    assert read_urls(out) == ["b", "d"]
    assert read_urls(tmp_path / "missing.jsonl") == []

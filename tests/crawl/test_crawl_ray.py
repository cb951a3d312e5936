"""``crawl --engine ray`` on a local Ray (2 CPUs): two loopback sites linking each other,
every page fetched and written once, the exchange through the hub actor."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli.command import main
from tests.crawl.site import html
from tests.crawl.test_crawl_shards import FLAGS, records, sites

ray = pytest.importorskip(
    "ray", reason="Ray is not installed (not in the test extra: it is large): "
    "pip install -e '.[test,ray]' runs this test")
pytestmark = pytest.mark.timeout(900)  # a local Ray starts slowly on a loaded machine


def test_ray_crawls_two_sites_each_page_once(tmp_path: Path, local_ray) -> None:
    out, skipped = tmp_path / "out", tmp_path / "skipped.jsonl"
    with sites(2) as [(a, au), (b, bu)]:
        a.pages.update({"/": html("A", [f"{bu}/", "/a"]), "/a": html("A a", [f"{bu}/b"])})
        b.pages.update({"/": html("B", [f"{au}/a", "/b"]), "/b": html("B b", [f"{au}/"]),
                        "/c": html("B c")})
        assert main(["crawl", au + "/", "--scope", "any", "--engine", "ray", "--shards", "2",
                     "-o", str(out), "--no-sitemap", "--ignore-robots", "--skipped",
                     str(skipped), *FLAGS]) == 0
        assert sorted(str(record["url"]) for record in records(out)) == sorted(
            [au + "/", au + "/a", bu + "/", bu + "/b"])
        assert all(count == 1 for site in (a, b) for count in site.hits.values())
    assert (out / "_SUCCESS").exists()
    assert skipped.read_text() == ""

"""Smoke tests of benchmarks/warc.py's checks (no timing: the figures are benchmarks/)."""

from __future__ import annotations

import gzip

import pytest

pytest.importorskip("fastwarc", reason="the warc extra")
pytest.importorskip("warcio", reason="warcio reads what we write (the test extra)")

from benchmarks import warc as bench
from pipeline.batch.output.warc_out import WarcWriter
from tests.support.warc_files import article, exchange


def test_validate_reads_every_record_and_names_a_damaged_file(tmp_path):
    writer = WarcWriter(tmp_path, "part-00000-of-00001").open()
    for n in range(3):
        writer.keep(exchange(f"http://example.test/{n}", article(f"Page {n}")))
    writer.close()
    assert bench.validate(tmp_path) == (7, 3, [])
    whole = (tmp_path / "part-00000-of-00001-00000.warc.gz").read_bytes()
    (tmp_path / "torn.warc.gz").write_bytes(whole[:-100])  # warcio alone passes over it
    _, responses, problems = bench.validate(tmp_path)
    assert responses == 6 and len(problems) == 1 and problems[0].startswith("torn")


def test_identical_compares_each_fetched_page_with_its_warc_record():
    http = [{"url": "a", "final_url": "b", "ok": True, **dict.fromkeys(bench.COMPARED, 1)},
            {"url": "c", "final_url": "c", "ok": False}]
    same = [{"url": "b", **dict.fromkeys(bench.COMPARED, 1)}]
    assert bench.identical(http, same) == (1, 1, [])
    other = [{"url": "b", **dict.fromkeys(bench.COMPARED, 1), "content": 2}]
    assert bench.identical(http, other) == (1, 0, ["b: ['content']"])


def test_the_dev_warc_holds_one_response_per_page(tmp_path, monkeypatch):
    for name in ("one", "two"):
        (tmp_path / name / "html").mkdir(parents=True)
        (tmp_path / name / "html" / "p.html.gz").write_bytes(gzip.compress(article(name)))
    monkeypatch.setattr(bench, "SHARED", tmp_path)
    monkeypatch.setattr(bench, "DATASETS", {"a": "one", "b": "two"})
    path = tmp_path / "dev.warc.gz"
    assert bench.build_dev_warc(path) == 2
    assert bench.validate(tmp_path) == (2, 2, [])

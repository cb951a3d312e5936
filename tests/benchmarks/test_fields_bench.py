"""benchmarks/fields.py: the scoring is the product benchmark's evaluate.py (tp/fp/fn per page,
price as a decimal), and the script runs on a tiny hand-made dataset with a published peer,
--save and a paired --compare (no shared dataset needed)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks import fields as bench

PAGE = ("<html><head><title>Lamp</title>"
        '<script type="application/ld+json">{"@type": "Product", "name": "Lamp", "sku": "L-1",'
        ' "offers": {"price": "24.990", "availability": "https://schema.org/InStock"}}</script>'
        "</head><body><h1>Lamp</h1><p>A lamp for reading, warm and bright, 24,99 €.</p>"
        "</body></html>")


@pytest.mark.parametrize(("true", "predicted", "decimal", "expected"), [
    (["24.99"], "24.990", True, (1, 0, 0)),  # a decimal, not a string
    (["24.99"], "25", True, (0, 1, 1)),  # a wrong value: a false positive and a negative
    ([], "25", True, (0, 1, 0)),  # a value for a page that has none
    (["X"], None, False, (0, 0, 1)),
    ([], None, False, (0, 0, 0)),
    (["a"], "A", False, (0, 1, 1)),  # exact
])
def test_counts_as_evaluate_py(true, predicted, decimal, expected):
    assert bench.counts(true, predicted, decimal) == expected


def test_f1_edge_cases_as_evaluate_py():
    assert bench.f1([(0, 0, 0)]) == 1.0  # nothing to find and nothing given
    assert bench.f1([(1, 0, 0), (0, 1, 1)]) == pytest.approx(0.5)


def test_runs_on_a_small_dataset(tmp_path: Path, capsys):
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "p1.html.gz").write_bytes(gzip.compress(PAGE.encode()))
    (tmp_path / "ground-truth.json").write_text(json.dumps({"p1": {
        "url": "https://shop.example/lamp", "price": ["24.99"], "sku": ["L-1"],
        "availability": ["InStock"]}}))
    (tmp_path / "peers").mkdir()
    (tmp_path / "peers" / "Zyte.json").write_text(json.dumps({"p1": {"price": "20"}}))
    saved = tmp_path / "ours.json"
    bench.main(["--dataset", str(tmp_path), "--no-extruct", "--save", str(saved)])
    out = capsys.readouterr().out
    ours = next(line for line in out.splitlines() if line.startswith("ours "))
    assert ours.count("1.000") == 3
    zyte = next(line for line in out.splitlines() if line.startswith("Zyte"))
    assert zyte.split()[1] == "0.000"
    assert json.loads(saved.read_text())["p1"] == {"price": "24.99", "sku": "L-1",
                                                   "availability": "InStock"}
    bench.main(["--dataset", str(tmp_path), "--no-extruct", "--compare", str(saved)])
    assert "ΔF1 +0.000" in capsys.readouterr().out


ARTICLE = ("<html><head><title>Rain returns to the valley</title>"
           '<meta name="author" content="Ana Ruiz">'
           '<meta property="article:published_time" content="2024-03-05T08:00:00Z">'
           "</head><body><article><h1>Rain returns to the valley</h1><p>By Ana Ruiz</p>"
           + "<p>The first rain in months fell on the valley overnight, filling the dry"
             " riverbeds and the reservoirs the farms depend on.</p>" * 4
           + "</article></body></html>")


def test_article_check_scores_fields_beside_the_metadata(tmp_path: Path):
    sets = {}
    for name in ("news", "modern"):
        folder = tmp_path / name
        (folder / "html").mkdir(parents=True)
        (folder / "html" / "a1.html.gz").write_bytes(gzip.compress(ARTICLE.encode()))
        (folder / "ground-truth.json").write_text(json.dumps({"a1": {
            "url": "https://news.example/2024/rain-returns-to-the-valley",
            "articleBody": "The first rain", "title": "Rain returns to the valley",
            "byline": "Ana Ruiz", "published": "2024-03-05"}}))
        sets[name] = folder
    rows = {check: (metadata, fields, pages)
            for check, metadata, fields, pages in bench.article_check(sets)}
    assert rows["news: pages whose fields equal the metadata"] == (1, 1, 1)
    assert rows["modern: title exact"] == (1, 1, 1)
    assert rows["modern: byline right (name words)"] == (1, 1, 1)
    assert rows["modern: published = true day"] == (1, 1, 1)

"""benchmarks/quality.py on a tiny hand-made dataset: the command line's path, per-type
tables, the goals table, --save and a paired --compare (no shared dataset needed)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks import quality

BODY = ("The ferry timetable changes on Monday, and the first boat now leaves at seven, so "
        "plan the trip with care. ")
MORE = "The last boat leaves an hour earlier than before, at nine in the evening, every day. "
PAGES = {
    "a1": ("article", f"<html><head><title>Ferry</title><meta property='article:published_time'"
                      f" content='2024-09-05T10:00:00Z'></head><body><nav><a href='/'>Home</a>"
                      f"</nav><article><h1>Ferry</h1><p>{BODY}</p><p>{MORE}</p></article>"
                      f"</body></html>", BODY + MORE, "Ferry", "2024-09-05"),
    "p1": ("product", "<html><head><title>Shop</title></head><body><div id='app'></div>"
                      "<script>x()</script><noscript>Please enable JavaScript to continue."
                      "</noscript></body></html>", "Lantern, 49 dollars.", "Lantern", None),
}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    (tmp_path / "html").mkdir()
    truth = {}
    for page_id, (kind, html, body, title, published) in PAGES.items():
        (tmp_path / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(html.encode()))
        truth[page_id] = {"url": f"https://example.test/{page_id}", "articleBody": body,
                          "page_type": kind, "title": title, "published": published}
    (tmp_path / "ground-truth.json").write_text(json.dumps(truth))
    return tmp_path


def test_scores_what_the_command_line_outputs_and_compares_two_runs(dataset, tmp_path,
                                                                    capsys):
    saved = tmp_path / "scores.json"
    assert quality.main(["--dataset", str(dataset), "--only", "ours", "--no-write",
                         "--save", str(saved)]) == 0
    report = capsys.readouterr().out
    assert "| article | 1 | 1.000 |" in report  # the article's body, nav left out
    assert "| product | 1 | 0.000 |" in report  # an app shell: an error record, empty content
    assert "error records on pages with content | 0 | 1 (challenge 1) | **no** |" in report
    assert "title exact match | ≥ 0.80 | 1/2 = 0.500 | **no** |" in report
    assert "`published` ISO date = truth | ≥ 0.85 | 1/1 = 1.000 | yes |" in report
    # the app shell shows no prose: its challenge record is no false claim
    assert "reported `empty` or `challenge` | 0 | 0 | yes |" in report
    rows = json.loads(saved.read_text())[dataset.name]["ours"]
    assert [(r["id"], r["error"]) for r in rows] == [("a1", None), ("p1", "challenge")]

    assert quality.main(["--dataset", str(dataset), "--only", "ours", "--no-write",
                         "--compare", str(saved)]) == 0
    comparison = capsys.readouterr().out.split("### Against")[1]
    # the same code against itself: no difference, and the bootstrap says so
    assert "| all (2) | 0.667 | 0.667 | +0.0000 | [+0.0000, +0.0000] | 0.00 | same |" in (
        comparison)

    assert quality.main(["--dataset", str(dataset), "--only", "ours", "--no-write",
                         "--compare", str(saved), "--split-hosts"]) == 0
    halves = capsys.readouterr().out.split("### Against")[1]
    half = quality.host_half("https://example.test/a1")
    assert f"| {half}:all (2) | 0.667 | 0.667 | +0.0000 |" in halves
    other = "B" if half == "A" else "A"
    assert f"| {half}:product (1) |" in halves and f"{other}:all" not in halves  # no pages

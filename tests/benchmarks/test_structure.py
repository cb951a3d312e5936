"""benchmarks/structure.py on hand-made pages: what it reads from HTML and from markdown, how
it scores, and its report (no shared dataset needed)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks import structure
from benchmarks.structure import Region, markdown_structure, page_structure, score

PAGE = b"""<html><body><nav><ul><li><a href="/">Home</a></li></ul></nav><main>
<h2>Winter<br>timetable</h2>
<ul><li>First train at six<ul><li>on weekdays</li></ul></li><li>Last train at midnight</li></ul>
<table><tr><th rowspan="2">Ticket</th><th colspan="2">Adult</th></tr>
<tr><th>Peak</th><th>Off-peak</th></tr><tr><td>Single</td><td>4.20</td><td>3.10</td></tr></table>
<table><tr><td><pre>1\n2</pre></td><td><pre>let a = 1;<br>let b = 2;</pre></td></tr></table>
<p>Fares stay the same until March, and the rover ticket covers the marina branch.</p>
</main></body></html>"""
TRUTH = ("Winter timetable\nFirst train at six\non weekdays\nLast train at midnight\n"
         "Ticket Adult Peak Off-peak Single 4.20 3.10\nlet a = 1;\nlet b = 2;\n"
         "Fares stay the same until March, and the rover ticket covers the marina branch.")
GOOD = """## Winter timetable

- First train at six
  - on weekdays
- Last train at midnight

| Ticket | Adult |  |
| --- | --- | --- |
|  | Peak | Off-peak |
| Single | 4.20 | 3.10 |

```
let a = 1;
let b = 2;
```

Fares stay the same until March, and the rover ticket covers the marina branch.
"""
# a heading split, the list flattened, the cells shifted, the code on one line
BAD = """Winter

## timetable

- First train at six - on weekdays - Last train at midnight

| Ticket | Adult |
| --- | --- |
| Peak | Off-peak |
| Single | 4.20 | 3.10 |

```
let a = 1;let b = 2;
```

Fares stay the same until March, and the rover ticket covers the marina branch.
"""


def test_the_html_states_headings_items_span_grids_and_code_lines():
    found = page_structure(PAGE).within(Region(TRUTH))
    assert [h.value for h in found.headings] == ["Winter timetable"]
    assert [i.value for i in found.items] == ["First train at six", "on weekdays",
                                              "Last train at midnight"]
    assert [t.value for t in found.tables] == [
        [["Ticket", "Adult", None], [None, "Peak", "Off peak"], ["Single", "4 20", "3 10"]]]
    # the line-number gutter is not code; a <br> starts a line
    assert [c.value for c in found.code] == [["let a 1", "let b 2"]]
    assert "Home" not in [i.value for i in found.items]  # outside the truth's region


def test_the_markdown_is_read_with_a_commonmark_and_gfm_tables_parser():
    read = markdown_structure(GOOD)
    assert [h.value for h in read.headings] == ["Winter timetable"]
    assert [i.value for i in read.items] == ["on weekdays", "First train at six",
                                             "Last train at midnight"]
    assert [t.value for t in read.tables] == [
        [["Ticket", "Adult", ""], ["", "Peak", "Off peak"], ["Single", "4 20", "3 10"]]]
    assert [c.value for c in read.code] == [["let a 1", "let b 2"]]


def test_faithful_markdown_scores_full_marks_and_a_lossy_one_does_not():
    declared, region = page_structure(PAGE).within(Region(TRUTH)), Region(TRUTH)
    whole, rendered = score(declared, GOOD, region)
    assert structure.f1(whole.headings) == structure.f1(whole.items) == 1.0
    assert structure.f1(whole.cells) == 1.0
    assert whole.tables == [1, 1] and whole.code == [1, 1, 1]
    assert rendered.tables == whole.tables
    whole, rendered = score(declared, BAD, region)
    assert whole.headings == [0, 1, 1]  # "timetable" alone is not the heading
    assert whole.items == [0, 0, 3]  # one flattened item is not a line of the truth
    assert whole.tables == [0, 1]  # a row shifted by the rowspan: not reproduced
    assert whole.code == [0, 1, 1]  # glued on one line: found, but not its line breaks
    assert rendered.items == whole.items  # its words are there: a rendering loss


def test_structure_the_extraction_left_out_counts_only_in_the_whole_pipeline_view():
    declared, region = page_structure(PAGE).within(Region(TRUTH)), Region(TRUTH)
    # an output that kept only the closing paragraph
    whole, rendered = score(declared, TRUTH.splitlines()[-1], region)
    assert whole.items == [0, 0, 3] and whole.tables == [0, 1]
    assert rendered.items == [0, 0, 0] and rendered.tables == [0, 0]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "p1.html.gz").write_bytes(gzip.compress(PAGE))
    truth = {"p1": {"url": "https://example.test/p1", "articleBody": TRUTH,
                    "page_type": "article"}}
    (tmp_path / "ground-truth.json").write_text(json.dumps(truth))
    return tmp_path


def test_the_report_puts_ours_beside_the_peers(dataset, tmp_path, capsys):
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "page.html").write_bytes(PAGE)
    assert structure.main(["--dataset", str(dataset), "--only", "ours", "--no-write"]) == 0
    report = capsys.readouterr().out
    row = next(line for line in report.splitlines() if line.startswith(f"| {dataset.name}"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "ours" and cells[5:] == ["1/1", "1/1", "1/1"]
    assert structure.main(["--set", "fixtures", "--fixtures", str(fixtures),
                           "--only", "ours", "--no-write"]) == 0
    assert "| fixtures (1) | ours |" in capsys.readouterr().out

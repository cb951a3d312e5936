"""List the pages our HTML handler scores worst on, with the lines it added and dropped.

    python benchmarks/worst_pages.py [--set news|modern] [--type forum] [-n 10]
                                     [--by f1|precision|recall]

A line is "added" when none of its 4-token shingles is in the true body, "dropped" when none
of its shingles is in our output: a quick view of where extraction goes wrong.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.quality import SETS, command_line_records, load_set  # noqa: E402
from benchmarks.shingle_metric import score_page, shingles, tokens  # noqa: E402


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if tokens(line)]


def foreign_lines(text: str, other: str) -> list[str]:
    """Lines of ``text`` that share no shingle with ``other``."""
    known = shingles(tokens(other))
    return [line for line in _lines(text) if not (shingles(tokens(line)) & known)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=list(SETS), default="news")
    parser.add_argument("--dataset", type=Path, help="a dataset folder instead of --set")
    parser.add_argument("--type", help="only pages of this page type (modern set)")
    parser.add_argument("-n", type=int, default=10)
    parser.add_argument("--by", choices=("f1", "precision", "recall"), default="f1")
    parser.add_argument("--width", type=int, default=160, help="cut printed lines to this")
    args = parser.parse_args(argv)

    pages = load_set(args.dataset or SETS[args.set])
    pages = [p for p in pages if not args.type or p.page_type == args.type]
    rows = []
    for page, (record, _ms) in zip(pages, command_line_records(pages), strict=True):
        page_id, url, truth = page.id, page.url, page.truth
        predicted = record.content or (f"[error {record.error.kind}: {record.error.message}]"
                                       if record.error else "")
        score = score_page(record.content or "", truth)
        p, r = score.precision or 0.0, score.recall or 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        key = {"f1": f1, "precision": p, "recall": r}[args.by]
        rows.append((key, page_id, url, p, r, predicted, truth))
    rows.sort(key=lambda row: row[0])
    for key, page_id, url, p, r, predicted, truth in rows[: args.n]:
        print(f"\n=== {page_id[:12]} {args.by}={key:.3f} P={p:.3f} R={r:.3f} {url}")
        for line in foreign_lines(predicted, truth):
            print("  + " + line[: args.width])
        for line in foreign_lines(truth, predicted):
            print("  - " + line[: args.width])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

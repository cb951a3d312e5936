"""A held-out check: pages that played no part in tuning, with their expected article text.

    python benchmarks/heldout.py [--data DIR] [--only ours,trafilatura-fast] [-v]

The pages are newspaper4k's own test fixtures (MIT licence): ``tests/data/html/*.html`` with
the expected body in ``tests/data/txt/*.txt`` and the URL and title in
``tests/data/metadata/*.json``. They ship in its source distribution, which this script does
not download: get it with the ordinary client and point ``--data`` (or ``HELDOUT_DATA``) at
the unpacked ``tests/data`` folder:

    pip download --no-deps --no-binary :all: newspaper4k==0.9.6 -d DIR && tar xzf DIR/*.tar.gz

Without it the script says so and exits 0. The expected texts are newspaper's outputs, checked
by its authors: a fair but not neutral truth (they favour newspaper's notion of the body).
Scores use the article-extraction-benchmark metric (:mod:`benchmarks.shingle_metric`); the
title is "right" when it equals the expected one, case and spacing aside.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.quality import EXTRACTORS, available  # noqa: E402
from benchmarks.shingle_metric import PageScore, corpus_score, score_page  # noqa: E402
from handlers.html import HTML_HANDLER  # noqa: E402
from handlers.registry import HandlerContext  # noqa: E402
from pipeline.core.errors import PipelineError  # noqa: E402

Page = tuple[str, str, bytes, str, str | None]  # name, url, html, expected text, title


def load(data: Path) -> list[Page]:
    """Every fixture that has an expected text, sorted by name."""
    pages = []
    for html in sorted((data / "html").glob("*.html")):
        expected = data / "txt" / f"{html.stem}.txt"
        if not expected.is_file():
            continue
        meta_path = data / "metadata" / f"{html.stem}.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        pages.append((html.stem, meta.get("url") or "", html.read_bytes(),
                      expected.read_text(encoding="utf-8"), meta.get("title")))
    return pages


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).lower()


def _our_title(body: bytes, url: str) -> str | None:
    try:
        return HTML_HANDLER.handle(body, HandlerContext(url=url, format="text")).title
    except PipelineError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=os.environ.get("HELDOUT_DATA"),
                        help="newspaper4k's unpacked tests/data folder")
    parser.add_argument("--only", help="comma-separated extractor names: " + ", ".join(
        n for n in EXTRACTORS if n != "readability-lxml"))
    parser.add_argument("-v", "--verbose", action="store_true", help="per-page F1")
    args = parser.parse_args(argv)
    if args.data is None or not (Path(args.data) / "txt").is_dir():
        print("held-out data not found: pass --data (see this script's docstring); skipped")
        return 0
    pages = load(Path(args.data))
    names = args.only.split(",") if args.only else ["ours", "trafilatura-fast", "trafilatura"]
    print(f"{len(pages)} pages (newspaper4k test fixtures)\n")
    print("| extractor | F1 | precision | recall | median ms |")
    print("|---|---|---|---|---|")
    per_page: dict[str, list[PageScore]] = {}
    for name in names:
        extract, module = EXTRACTORS[name]
        if not available(module):
            print(f"| {name} | skipped ({module} is not installed) | | | |")
            continue
        scores, times = [], []
        for _name, url, body, expected, _title in pages:
            start = time.process_time()
            scores.append(score_page(extract(body, url), expected))
            times.append((time.process_time() - start) * 1000)
        per_page[name] = scores
        total = corpus_score(scores)
        print(f"| {name} | {total.f1:.3f} | {total.precision:.3f} | {total.recall:.3f} | "
              f"{statistics.median(times):.1f} |")
    titled = [(url, body, title) for _n, url, body, _e, title in pages if title]
    right = sum(_norm(_our_title(body, url)) == _norm(title) for url, body, title in titled)
    print(f"\nTitle (ours) equal to the expected one: {right}/{len(titled)}")
    if args.verbose:
        for index, page in enumerate(pages):
            cells = []
            for name, scores in per_page.items():
                p, r = scores[index].precision or 0.0, scores[index].recall or 0.0
                cells.append(f"{name}={2 * p * r / (p + r) if p + r else 0.0:.3f}")
            print(f"{page[0]:24} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Extraction quality on the article-extraction-benchmark: ours vs readability-lxml vs trafilatura.

    python benchmarks/quality.py [--dataset PATH] [--only ours,trafilatura-fast] [--no-write]

Scores the default HTML handler's ``content`` with format='text' and, in the same run on the
same pages, the peers (optional benchmark-only dependencies, skipped with a note if absent).
Prints a table and writes it into ``benchmarks/README.md`` between the quality markers.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.shingle_metric import PageScore, bootstrap_std, corpus_score, score_page  # noqa: E402
from handlers.registry import HandlerContext  # noqa: E402
from pipeline.errors import PipelineError  # noqa: E402

DEFAULT_DATASET = ROOT.parent / "shared" / "datasets" / "article-extraction-benchmark"
MARK_START, MARK_END = "<!-- quality:start -->", "<!-- quality:end -->"

Extractor = Callable[[bytes, str], str]


def load_pages(dataset: Path) -> list[tuple[str, str, bytes, str]]:
    """(id, url, html bytes, true body) for every page of the dataset, sorted by id."""
    truth = json.loads((dataset / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for page_id in sorted(truth):
        body = gzip.decompress((dataset / "html" / f"{page_id}.html.gz").read_bytes())
        pages.append((page_id, truth[page_id]["url"], body, truth[page_id]["articleBody"]))
    return pages


def ours(body: bytes, url: str) -> str:
    from handlers.html import HTML_HANDLER

    try:
        return HTML_HANDLER.handle(body, HandlerContext(url=url, format="text")).content
    except PipelineError:
        return ""


def readability_raw(body: bytes, url: str) -> str:
    from readability import Document as ReadabilityDocument

    summary = ReadabilityDocument(body.decode("utf-8", "replace")).summary(html_partial=True)
    import lxml.html

    return lxml.html.fromstring(summary).text_content()


def _trafilatura(fast: bool) -> Extractor:
    def run(body: bytes, url: str) -> str:
        import trafilatura

        return trafilatura.extract(
            body.decode("utf-8", "replace"), url=url, fast=fast, include_comments=False
        ) or ""

    return run


EXTRACTORS: dict[str, tuple[Extractor, str | None]] = {
    "ours": (ours, None),
    "readability-lxml": (readability_raw, "readability"),
    "trafilatura-fast": (_trafilatura(True), "trafilatura"),
    "trafilatura": (_trafilatura(False), "trafilatura"),
}


def available(module: str | None) -> bool:
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def run_extractor(
    extract: Extractor, pages: list[tuple[str, str, bytes, str]]
) -> tuple[list[PageScore], list[float], list[str]]:
    """Per-page scores, CPU milliseconds and predicted texts."""
    extract(pages[0][2], pages[0][1])  # warm-up: imports and caches are not per-page costs
    scores, times, texts = [], [], []
    for _page_id, url, body, truth in pages:
        start = time.process_time()
        text = extract(body, url)
        times.append((time.process_time() - start) * 1000)
        scores.append(score_page(text, truth))
        texts.append(text)
    return scores, times, texts


def table(rows: list[tuple[str, list[PageScore], list[float]]]) -> str:
    lines = [
        "| extractor | F1 | precision | recall | accuracy | median ms | mean ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, scores, times in rows:
        score, std = corpus_score(scores), bootstrap_std(scores)
        lines.append(
            f"| {name} | {score.f1:.3f} ± {std.f1:.3f} | {score.precision:.3f} ± "
            f"{std.precision:.3f} | {score.recall:.3f} ± {std.recall:.3f} | "
            f"{score.accuracy:.3f} ± {std.accuracy:.3f} | {statistics.median(times):.1f} | "
            f"{statistics.mean(times):.1f} |"
        )
    return "\n".join(lines)


def write_readme(text: str, path: Path = ROOT / "benchmarks" / "README.md") -> None:
    readme = path.read_text(encoding="utf-8")
    block = f"{MARK_START}\n{text}\n{MARK_END}"
    if MARK_START in readme and MARK_END in readme:
        head, _, rest = readme.partition(MARK_START)
        _, _, tail = rest.partition(MARK_END)
        readme = head + block + tail
    else:
        readme = readme.rstrip("\n") + "\n\n## Extraction quality\n\n" + block + "\n"
    path.write_text(readme, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--only", help="comma-separated extractor names: " + ", ".join(EXTRACTORS))
    parser.add_argument("--no-write", action="store_true",
                        help="do not update benchmarks/README.md")
    args = parser.parse_args(argv)

    names = args.only.split(",") if args.only else list(EXTRACTORS)
    pages = load_pages(args.dataset)
    rows, notes = [], []
    for name in names:
        extract, module = EXTRACTORS[name]
        if not available(module):
            notes.append(f"{name}: skipped ({module} is not installed)")
            continue
        scores, times, _ = run_extractor(extract, pages)
        rows.append((name, scores, times))
    result = table(rows)
    command = "python benchmarks/quality.py" + (f" --only {args.only}" if args.only else "")
    report = (
        f"{len(pages)} pages; content scored as format='text'; CPU time per page "
        f"(time.process_time, one process); ± is the std of 1000 bootstrap resamples.\n\n"
        f"{result}\n"
        + "".join(f"\n- {note}" for note in notes)
        + f"\n\nCommand: `{command}`"
    )
    print(report)
    if not args.no_write:
        write_readme(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

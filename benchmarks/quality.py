"""Extraction quality on both dev sets: ours vs readability-lxml vs trafilatura, by page type.

    python benchmarks/quality.py [--set news|modern ...] [--only ours,trafilatura]
                                 [--save FILE] [--compare FILE] [--no-write]

``ours`` is what the command line outputs with ``--format text``: each page goes through
:class:`pipeline.extract.native.NativeExtractor` (handler selection, the HTML handler, the empty
check, truncation to the default ``--max-chars``) with a fetcher that serves the stored
page; an error record scores as empty content. ``ours-readability`` is the same path with
``--html-extractor readability``. The peers (benchmark-only dependencies, skipped with a
note when absent) run in the same process on the same pages. Scored with the article
extraction benchmark's 4-shingle metric (:mod:`benchmarks.shingle_metric`), overall and per
page type, with titles, dates and error records for ours; CPU time per page.

``--save FILE`` keeps every page's scores; ``--compare FILE`` sets this run against such a
file with a paired bootstrap of the F1 difference, per set, overall and per page type.
Prints the report and writes it into ``benchmarks/README.md`` between the quality markers.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.readme_block import write_block  # noqa: E402
from benchmarks.shingle_metric import (  # noqa: E402
    PageScore,
    bootstrap_std,
    corpus_score,
    paired_bootstrap,
    score_page,
)

DATASETS = ROOT.parent / "shared" / "datasets"
SETS = {"news": DATASETS / "article-extraction-benchmark", "modern": DATASETS / "modern-web-dev"}
DEFAULT_DATASET = SETS["news"]
# The modern set's one "blog" page is an article like the others.
_TYPE_GROUPS = {"blog": "article"}
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                       r"(?:Z|[+-]\d{2}:\d{2})?)?$")


@dataclass(frozen=True)
class Page:
    id: str
    url: str
    body: bytes
    truth: str
    page_type: str  # "" when the set has no types
    title: str | None = None
    published: str | None = None


@dataclass(frozen=True)
class Result:
    """One extractor on one page."""

    precision: float | None
    recall: float | None
    exact: bool
    ms: float
    error: str | None = None  # the record's error kind
    title: str | None = None
    published: str | None = None

    @property
    def score(self) -> PageScore:
        return PageScore(self.precision, self.recall, self.exact)


def load_set(dataset: Path) -> list[Page]:
    """Every page of a dataset folder (``ground-truth.json`` + ``html/<id>.html.gz``)."""
    truth = json.loads((dataset / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for page_id in sorted(truth):
        item = truth[page_id]
        body = gzip.decompress((dataset / "html" / f"{page_id}.html.gz").read_bytes())
        kind = item.get("page_type") or ""
        pages.append(Page(page_id, item["url"], body, item["articleBody"],
                          _TYPE_GROUPS.get(kind, kind), item.get("title"), item.get("published")))
    return pages


def load_pages(dataset: Path) -> list[tuple[str, str, bytes, str]]:
    """(id, url, html bytes, true body) for every page of the dataset, sorted by id."""
    return [(p.id, p.url, p.body, p.truth) for p in load_set(dataset)]


# --------------------------------------------------------------------------- extractors
class _StoredPage:
    """A fetcher that answers every URL with the page being measured."""

    def __init__(self) -> None:
        self.body = b""

    async def fetch(self, url: str) -> Any:
        from pipeline.fetch.base import FetchResult

        return FetchResult(url=url, final_url=url, status=200, media_type="text/html",
                           charset=None, body=self.body)

    async def __aenter__(self) -> _StoredPage:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


def command_line_records(pages: Sequence[Page], html_extractor: str = "builtin",
                         output_format: str = "text") -> list[Any]:
    """(record, CPU ms) per page, through the command line's per-URL path."""
    from pipeline.core.settings import Settings
    from pipeline.extract.native import NativeExtractor

    settings = Settings(format=output_format, html_extractor=html_extractor)

    async def run() -> list[Any]:
        stored = _StoredPage()
        out = []
        async with NativeExtractor(settings, fetcher=stored) as native:
            for page in pages:
                stored.body = page.body
                start = time.process_time()
                record = await native.extract_one(page.url)
                out.append((record, (time.process_time() - start) * 1000))
        return out

    return asyncio.run(run())


def ours_text(body: bytes, url: str) -> str:
    """What ``--format text`` outputs for one page ("" for an error record)."""
    record, _ = command_line_records([Page("", url, body, "", "")])[0]
    return record.content or ""


ours = ours_text  # the name the other benchmark scripts import


def _ours(html_extractor: str) -> Callable[[Sequence[Page]], list[Result]]:
    def run(pages: Sequence[Page]) -> list[Result]:
        command_line_records(pages[:1], html_extractor)  # warm-up: imports are not per page
        results = []
        for page, (record, ms) in zip(pages, command_line_records(pages, html_extractor),
                                      strict=True):
            score = score_page(record.content or "", page.truth)
            results.append(Result(score.precision, score.recall, score.exact, ms,
                                  record.error.kind if record.error else None, record.title,
                                  record.metadata.get("published")))
        return results

    return run


def readability_raw(body: bytes, url: str) -> str:
    import lxml.html
    from readability import Document as ReadabilityDocument

    summary = ReadabilityDocument(body.decode("utf-8", "replace")).summary(html_partial=True)
    return lxml.html.fromstring(summary).text_content()


def _trafilatura(fast: bool) -> Callable[[bytes, str], str]:
    def run(body: bytes, url: str) -> str:
        import trafilatura

        return trafilatura.extract(
            body.decode("utf-8", "replace"), url=url, fast=fast, include_comments=False
        ) or ""

    return run


def _text_only(extract: Callable[[bytes, str], str]) -> Callable[[Sequence[Page]], list[Result]]:
    def run(pages: Sequence[Page]) -> list[Result]:
        extract(pages[0].body, pages[0].url)  # warm-up
        results = []
        for page in pages:
            start = time.process_time()
            text = extract(page.body, page.url)
            ms = (time.process_time() - start) * 1000
            score = score_page(text, page.truth)
            results.append(Result(score.precision, score.recall, score.exact, ms))
        return results

    return run


# name -> (runner, module it needs); text peers keep their plain (bytes, url) form for
# heldout.py and worst_pages.py.
EXTRACTORS: dict[str, tuple[Callable[[bytes, str], str], str | None]] = {
    "ours": (ours_text, None),
    "readability-lxml": (readability_raw, "readability"),
    "trafilatura-fast": (_trafilatura(True), "trafilatura"),
    "trafilatura": (_trafilatura(False), "trafilatura"),
}
RUNNERS: dict[str, tuple[Callable[[Sequence[Page]], list[Result]], str | None]] = {
    "ours": (_ours("builtin"), None),
    "ours-readability": (_ours("readability"), "readability"),
    "readability-lxml": (_text_only(readability_raw), "readability"),
    "trafilatura-fast": (_text_only(_trafilatura(True)), "trafilatura"),
    "trafilatura": (_text_only(_trafilatura(False)), "trafilatura"),
}


def available(module: str | None) -> bool:
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------- figures
def _norm_title(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def title_share(pages: Sequence[Page], results: Sequence[Result]) -> tuple[int, int]:
    """(right, pages with a true title): equal with case and spacing aside."""
    pairs = [(p, r) for p, r in zip(pages, results, strict=True) if p.title]
    return sum(_norm_title(r.title) == _norm_title(p.title) for p, r in pairs), len(pairs)


def date_share(pages: Sequence[Page], results: Sequence[Result]) -> tuple[int, int]:
    """(right, pages with a true date): ours is ISO 8601 and names the same calendar day."""
    pairs = [(p, r) for p, r in zip(pages, results, strict=True) if p.published]
    right = sum(bool(r.published and _ISO_DATE.match(r.published)
                     and r.published[:10] == (p.published or "")[:10]) for p, r in pairs)
    return right, len(pairs)


def errors_on_content(pages: Sequence[Page], results: Sequence[Result]) -> dict[str, int]:
    """Error records on pages whose truth has content, by kind."""
    counts: dict[str, int] = {}
    for page, result in zip(pages, results, strict=True):
        if result.error and page.truth.strip():
            counts[result.error] = counts.get(result.error, 0) + 1
    return counts


def by_type(pages: Sequence[Page], results: Sequence[Result]) -> dict[str, list[PageScore]]:
    groups: dict[str, list[PageScore]] = {}
    for page, result in zip(pages, results, strict=True):
        if page.page_type:
            groups.setdefault(page.page_type, []).append(result.score)
    return dict(sorted(groups.items(), key=lambda item: -len(item[1])))


def overall_table(rows: dict[str, list[Result]], pages: Sequence[Page]) -> str:
    lines = ["| extractor | F1 | precision | recall | accuracy | median ms | mean ms | errors |",
             "|---|---|---|---|---|---|---|---|"]
    for name, results in rows.items():
        scores = [r.score for r in results]
        times = [r.ms for r in results]
        score, std = corpus_score(scores), bootstrap_std(scores)
        errors = sum(errors_on_content(pages, results).values())
        lines.append(
            f"| {name} | {score.f1:.3f} ± {std.f1:.3f} | {score.precision:.3f} | "
            f"{score.recall:.3f} | {score.accuracy:.3f} | {statistics.median(times):.1f} | "
            f"{statistics.mean(times):.1f} | {errors} |")
    return "\n".join(lines)


def type_table(rows: dict[str, list[Result]], pages: Sequence[Page]) -> str:
    names = list(rows)
    grouped = {name: by_type(pages, results) for name, results in rows.items()}
    types = list(grouped[names[0]])
    lines = ["| page type | pages | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]
    for kind in types:
        cells = [f"{corpus_score(grouped[n][kind]).f1:.3f}" for n in names]
        lines.append(f"| {kind} | {len(grouped[names[0]][kind])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def shows_prose(body: bytes) -> bool:
    """The page shows ``PROSE_FLOOR`` characters of paragraph text, hidden elements aside."""
    from handlers.decode import decode_html
    from handlers.html import PROSE_FLOOR
    from handlers.html_clean import clean_tree
    from handlers.html_dom import parse
    from handlers.html_extract import paragraph_chars

    tree = parse(decode_html(body)[1])
    clean_tree(tree)
    return paragraph_chars(tree) >= PROSE_FLOOR


def false_claims(pages: Sequence[Page], results: Sequence[Result]) -> int:
    """`empty` or `challenge` records on pages showing prose (issue 24's invariant)."""
    return sum(1 for page, result in zip(pages, results, strict=True)
               if result.error in ("empty", "challenge") and shows_prose(page.body))


def goals(results: dict[str, dict[str, list[Result]]],
          pages: dict[str, list[Page]]) -> str:
    """The issue's goals table, for the sets that were run."""
    lines = ["| goal | target | measured | met |", "|---|---|---|---|"]

    def row(goal: str, target: str, value: str, met: bool) -> None:
        lines.append(f"| {goal} | {target} | {value} | {'yes' if met else '**no**'} |")

    for set_name, rows in results.items():
        if "ours" not in rows:
            continue
        ours_rows, set_pages = rows["ours"], pages[set_name]
        f1 = corpus_score([r.score for r in ours_rows]).f1
        if set_name == "news":
            row("news F1 (held)", "≥ 0.985", f"{f1:.3f}", round(f1, 3) >= 0.985)
        else:
            row(f"{set_name} F1 overall (held)", "≥ 0.80", f"{f1:.3f}", round(f1, 3) >= 0.80)
            row(f"{set_name} F1 overall (if the work gets there)", "≥ 0.82", f"{f1:.3f}",
                round(f1, 3) >= 0.82)
            ours_types = by_type(set_pages, ours_rows)
            peer = by_type(set_pages, rows["trafilatura"]) if "trafilatura" in rows else {}
            floors = {"forum": 0.70, "product": 0.65, "collection": 0.55}
            for kind, scores in ours_types.items():
                value = corpus_score(scores).f1
                target = corpus_score(peer[kind]).f1 if kind in peer else 0.0
                floor = floors.get(kind, 0.0)
                wanted = f"≥ trafilatura {target:.3f}" + (f", ≥ {floor}" if floor else "")
                row(f"{set_name} {kind}", wanted, f"{value:.3f}",
                    round(value, 3) >= round(target, 3) and round(value, 3) >= floor)
            right, total = title_share(set_pages, ours_rows)
            row("title exact match", "≥ 0.80", f"{right}/{total} = {right / total:.3f}",
                right >= 0.80 * total)
            right, total = date_share(set_pages, ours_rows)
            row("`published` ISO date = truth", "≥ 0.85", f"{right}/{total} = "
                f"{right / total:.3f}", right >= 0.85 * total)
        errors = errors_on_content(set_pages, ours_rows)
        detail = ", ".join(f"{k} {v}" for k, v in sorted(errors.items()))
        row(f"{set_name} error records on pages with content", "0",
            f"{sum(errors.values())}" + (f" ({detail})" if detail else ""), not errors)
        claims = false_claims(set_pages, ours_rows)
        row(f"{set_name} pages showing ≥ 2,000 characters of paragraph text reported "
            "`empty` or `challenge`", "0", str(claims), not claims)
        median = statistics.median(r.ms for r in ours_rows)
        budget = 5 if set_name == "news" else 8
        row(f"{set_name} median CPU ms per page", f"≤ {budget}", f"{median:.1f}",
            median <= budget)
    return "\n".join(lines)


# --------------------------------------------------------------------------- saving, comparing
def save(path: Path, results: dict[str, dict[str, list[Result]]],
         pages: dict[str, list[Page]]) -> None:
    data = {set_name: {name: [{"id": p.id, **asdict(r)}
                              for p, r in zip(pages[set_name], rs, strict=True)]
                       for name, rs in rows.items()}
            for set_name, rows in results.items()}
    path.write_text(json.dumps(data), encoding="utf-8")


def host_half(url: str) -> str:
    """``A`` or ``B``: a fixed split of sites (a hash of the host, ``www.`` aside), so that a
    rule designed while reading one half can be checked on the other."""
    host = (urlsplit(url).hostname or "").removeprefix("www.")
    return "AB"[hashlib.sha1(host.encode()).digest()[0] % 2]


def compare(path: Path, results: dict[str, dict[str, list[Result]]],
            pages: dict[str, list[Page]], split_hosts: bool = False) -> str:
    """This run against a saved one: paired bootstrap of the F1 difference (after − before);
    with ``split_hosts`` also per host half (:func:`host_half`) of each typed set."""
    saved = json.loads(path.read_text(encoding="utf-8"))
    lines = ["| set | extractor | pages | before | after | Δ F1 | 95% interval | P(worse) | "
             "verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for set_name, rows in results.items():
        for name, after in rows.items():
            old = {item["id"]: item for item in saved.get(set_name, {}).get(name, [])}
            if not old:
                continue
            set_pages = pages[set_name]
            before = [Result(**{k: v for k, v in old[p.id].items() if k != "id"})
                      for p in set_pages]
            groups: dict[str, list[int]] = {"all": list(range(len(set_pages)))}
            for index, page in enumerate(set_pages):
                if page.page_type:
                    groups.setdefault(page.page_type, []).append(index)
            if split_hosts and any(p.page_type for p in set_pages):
                for half in "AB":
                    for group, indices in list(groups.items()):
                        if ":" not in group:
                            groups[f"{half}:{group}"] = [
                                i for i in indices if host_half(set_pages[i].url) == half]
            for group, indices in groups.items():
                if not indices:
                    continue
                a = [before[i].score for i in indices]
                b = [after[i].score for i in indices]
                diff = paired_bootstrap(a, b)
                lines.append(
                    f"| {set_name} | {name} | {group} ({len(indices)}) | "
                    f"{corpus_score(a).f1:.3f} | {corpus_score(b).f1:.3f} | "
                    f"{diff.delta:+.4f} | [{diff.low:+.4f}, {diff.high:+.4f}] | "
                    f"{diff.worse:.2f} | {diff.verdict} |")
            if name.startswith("ours"):
                sub = [p for p in set_pages if p.title or p.published]
                if sub:
                    index = {p.id: i for i, p in enumerate(set_pages)}
                    old_rows = [before[index[p.id]] for p in sub]
                    new_rows = [after[index[p.id]] for p in sub]
                    t0, t1 = title_share(sub, old_rows), title_share(sub, new_rows)
                    d0, d1 = date_share(sub, old_rows), date_share(sub, new_rows)
                    lines.append(f"\n{set_name} {name}: titles {t0[0]}→{t1[0]} of {t0[1]}, "
                                 f"dates {d0[0]}→{d1[0]} of {d0[1]}\n")
    return "\n".join(lines)


def write_readme(text: str, path: Path = ROOT / "benchmarks" / "README.md") -> None:
    write_block(text, "quality", "## Extraction quality", path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=list(SETS),
                        help="repeatable; default: both")
    parser.add_argument("--dataset", type=Path, help="one dataset folder instead of the sets")
    parser.add_argument("--only", help="comma-separated extractor names: " + ", ".join(RUNNERS))
    parser.add_argument("--save", type=Path, help="write every page's scores to this file")
    parser.add_argument("--compare", type=Path, help="a file written by --save to compare with")
    parser.add_argument("--split-hosts", action="store_true",
                        help="--compare also per half of the sites (split by a hash of the host)")
    parser.add_argument("--no-write", action="store_true",
                        help="do not update benchmarks/README.md")
    args = parser.parse_args(argv)

    sets = ({args.dataset.name: args.dataset} if args.dataset
            else {name: SETS[name] for name in (args.set or list(SETS))})
    names = args.only.split(",") if args.only else list(RUNNERS)
    pages = {name: load_set(path) for name, path in sets.items()}
    load_before = os.getloadavg()[0]
    results: dict[str, dict[str, list[Result]]] = {name: {} for name in sets}
    notes = []
    for name in names:
        run, module = RUNNERS[name]
        if not available(module):
            notes.append(f"{name}: skipped ({module} is not installed)")
            continue
        for set_name in sets:
            results[set_name][name] = run(pages[set_name])
    parts = []
    for set_name, rows in results.items():
        if not rows:
            continue
        parts.append(f"### {set_name}: {sets[set_name].name}, {len(pages[set_name])} pages\n\n"
                     + overall_table(rows, pages[set_name]))
        if any(p.page_type for p in pages[set_name]):
            parts.append(f"F1 by page type ({set_name}):\n\n" + type_table(rows, pages[set_name]))
    parts.append("### Goals (issue 24)\n\n" + goals(results, pages))
    options = "".join(f" --set {s}" for s in args.set or []) + (
        f" --only {args.only}" if args.only else "")
    report = (
        "Content scored as the command line's `--format text` output (error record = empty); "
        "CPU time per page (time.process_time, one process; machine load average "
        f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end); ± is the std "
        "of 1000 bootstrap resamples; errors = error records on pages whose truth has "
        "content.\n\n"
        + "\n\n".join(parts) + "\n" + "".join(f"\n- {note}" for note in notes)
        + f"\n\nCommand: `python benchmarks/quality.py{options}`")
    print(report)
    if args.compare:
        print("\n### Against " + args.compare.name + "\n\n" + compare(args.compare, results, pages,
                                                                args.split_hosts))
    if args.save:
        save(args.save, results, pages)
    if not args.no_write and not args.dataset:
        write_readme(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

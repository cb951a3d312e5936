"""Duplicates: ``--dedup exact|near`` on planted near-duplicates of the dev-set pages.

    python benchmarks/dedup.py [--set news|modern ...] [--memory N] [--no-write]

Every page of both dev sets gets a planted copy: the same HTML with its navigation and
footer replaced by others, :data:`CHANGED_WORDS` words of its paragraphs changed, served
under another host and path (so its relative links resolve elsewhere). Originals and copies
go through the command line's per-URL path (:class:`pipeline.extract.native.NativeExtractor`
with a fetcher serving the stored page; markdown, the default format), then through
:class:`pipeline.batch.dedup.Deduplicator` in a shuffled order, as records are written.

Scored: the share of copies marked (the later of a page and its copy points at the other),
and the share of distinct pages marked a duplicate of another page. Pages with the same URL
(the modern set holds a few pages twice, one with and one without a trailing slash) are one
page: marking them is right, and counted apart. The CPU per record of marking, and the
memory per distinct record (the index alone: ``--memory N`` synthetic texts, RSS grown over
them), for ours and, when installed, datasketch doing the same (MinHash + LSH with the same
parameters, candidates checked against the threshold). The report goes to stdout and into
``benchmarks/README.md`` between the ``dedup`` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.quality import SETS, Page, _StoredPage, available, load_set  # noqa: E402
from benchmarks.readme_block import write_block  # noqa: E402
from pipeline.batch import dedup  # noqa: E402
from pipeline.core.models import Record  # noqa: E402

CHANGED_WORDS = 3
SEED = 26
VOCABULARY = (
    "harbour", "lantern", "orchard", "pebble", "meadow", "violin", "copper", "saddle",
    "thistle", "quarry", "walnut", "beacon", "ribbon", "falcon", "glacier", "marble", "nectar",
    "parcel", "rocket", "tundra", "velvet", "willow", "yonder", "zephyr", "amber", "basin",
    "cinder", "dune", "ember", "fjord",
)


@dataclass(frozen=True)
class Item:
    """One page or its planted copy, as the dedup stage sees it."""

    group: str  # the page's URL, without a trailing slash: copies and repeats share it
    planted: bool
    url: str
    body: bytes


def plant(body: bytes, rng: random.Random) -> bytes:
    """The same page with another navigation and footer and a few words changed."""
    import lxml.html
    from lxml.html import builder as E

    doc = lxml.html.document_fromstring(body.decode("utf-8", "replace"))  # the sets' encoding
    for element in doc.xpath("//nav | //footer | //meta[@charset or @http-equiv]"):
        element.drop_tree()
    doc.head.insert(0, E.META(charset="utf-8"))
    links = [E.A(word.title(), href=f"/{word}/") for word in rng.sample(VOCABULARY, 8)]
    doc.body.insert(0, E.NAV(E.UL(*(E.LI(link) for link in links))))
    doc.body.append(E.FOOTER(E.P(" ".join(rng.sample(VOCABULARY, 12)).capitalize() + "."),
                             E.A("Contact us", href="/contact")))
    paragraphs = [p for p in doc.iter("p") if len((p.text or "").split()) >= 8]
    for paragraph in rng.sample(paragraphs, min(CHANGED_WORDS, len(paragraphs))):
        words = (paragraph.text or "").split()
        words[rng.randrange(len(words))] = rng.choice(VOCABULARY)
        paragraph.text = " ".join(words)
    return lxml.html.tostring(doc, encoding="unicode").encode()


def items_of(pages: Sequence[Page], rng: random.Random) -> list[Item]:
    """Each page and its planted copy, shuffled."""
    items = []
    for number, page in enumerate(pages):
        group = page.url.rstrip("/")
        items.append(Item(group, False, page.url, page.body))
        copy_url = f"https://mirror{number}.example.org/copy/{page.id[:12]}"
        items.append(Item(group, True, copy_url, plant(page.body, rng)))
    rng.shuffle(items)
    return items


def extract(items: Sequence[Item]) -> list[Record]:
    """Each item through the command line's per-URL path, as records indexed in order."""
    from pipeline.core.settings import Settings
    from pipeline.extract.native import NativeExtractor

    async def run() -> list[Record]:
        stored = _StoredPage()
        records = []
        async with NativeExtractor(Settings(detect_lang=False), fetcher=stored) as native:
            for index, item in enumerate(items):
                stored.body = item.body
                records.append(await native.extract_one(item.url, index=index))
        return records

    return asyncio.run(run())


# --------------------------------------------------------------------------- the indexes
class DatasketchIndex:
    """datasketch's MinHash and LSH with our parameters, candidates checked as ours are."""

    def __init__(self) -> None:
        from datasketch import MinHash, MinHashLSH

        self._minhash = MinHash
        self._lsh = MinHashLSH(threshold=dedup.NEAR_THRESHOLD, num_perm=dedup.NUM_PERM,
                               params=(dedup.BANDS, dedup.NUM_PERM // dedup.BANDS))
        self._kept: dict[int, Any] = {}

    def first_or_add(self, index: int, text: str) -> int | None:
        signature = self._minhash(num_perm=dedup.NUM_PERM, seed=dedup.SEED)
        signature.update_batch([shingle.encode() for shingle in dedup.shingles(text)])
        found = [key for key in self._lsh.query(signature)
                 if signature.jaccard(self._kept[key]) >= dedup.NEAR_THRESHOLD]
        if found:
            return min(found)
        self._lsh.insert(index, signature)
        self._kept[index] = signature
        return None


def _with_index(mode: str, index: Callable[[], dedup.TextIndex] | None) -> dedup.Deduplicator:
    deduplicator = dedup.Deduplicator("exact" if mode == "exact" else "near")
    if index is not None:
        deduplicator.index = index()
    return deduplicator


INDEXES: dict[str, tuple[str, Callable[[], dedup.TextIndex] | None, str | None]] = {
    "exact": ("exact", None, None),
    "near (rensa)": ("near", None, "rensa"),
    "near (datasketch)": ("near", DatasketchIndex, "datasketch"),
}


@dataclass
class Score:
    planted: int = 0
    planted_marked: int = 0
    distinct: int = 0
    distinct_marked: int = 0
    repeats: int = 0
    repeats_marked: int = 0
    ms: float = 0.0  # median CPU per record
    mean_ms: float = 0.0


def score(items: Sequence[Item], records: Sequence[Record], mode: str,
          index: Callable[[], dedup.TextIndex] | None) -> Score:
    deduplicator = _with_index(mode, index)
    result = Score()
    first_of_group: dict[str, int] = {}
    costs = []
    for item, record in zip(items, records, strict=True):
        started = time.process_time()
        marked = deduplicator.mark(record)
        costs.append((time.process_time() - started) * 1000)
        if not record.ok:
            continue
        earlier = first_of_group.setdefault(item.group, record.index or 0) != record.index
        right = (marked.duplicate_of is not None
                 and items[marked.duplicate_of].group == item.group)
        if not earlier:  # the first of its page: a distinct page
            result.distinct += 1
            result.distinct_marked += marked.duplicate_of is not None
        elif item.planted or items[first_of_group[item.group]].planted:
            result.planted += 1
            result.planted_marked += right
        else:  # the dataset's own repeat of a page
            result.repeats += 1
            result.repeats_marked += right
    result.ms, result.mean_ms = statistics.median(costs), statistics.fmean(costs)
    return result


def memory_per_record(mode: str, index: Callable[[], dedup.TextIndex] | None,
                      count: int) -> float:
    """Bytes of RSS the index grows by per distinct text, over ``count`` synthetic texts."""
    import psutil

    rng = random.Random(SEED)
    words = [f"w{number}" for number in range(5_000)]
    texts = [" ".join(rng.choices(words, k=60)) for _ in range(count)]
    deduplicator = _with_index(mode, index)
    gc.collect()
    before = psutil.Process().memory_info().rss
    for number, text in enumerate(texts):
        deduplicator.index.first_or_add(number, text)
    gc.collect()
    return (psutil.Process().memory_info().rss - before) / count


def report(scores: dict[str, Score], memory: dict[str, float], pages: int,
           notes: list[str], command: str) -> str:
    def share(part: int, whole: int) -> str:
        return f"{part}/{whole} = {part / whole:.3f}" if whole else "—"

    lines = ["| mode | planted copies marked | distinct pages marked | the sets' own repeats "
             "marked | CPU ms/record, median (mean) | memory per distinct record |",
             "|---|---|---|---|---|---|"]
    for name, s in scores.items():
        held = f"{memory[name]:.0f} B" if name in memory else "—"
        lines.append(f"| {name} | {share(s.planted_marked, s.planted)} | "
                     f"{share(s.distinct_marked, s.distinct)} | "
                     f"{share(s.repeats_marked, s.repeats)} | {s.ms:.3f} ({s.mean_ms:.3f}) | "
                     f"{held} |")
    return (f"{pages} dev-set pages and a planted copy of each ({CHANGED_WORDS} words "
            "changed, other navigation and footer, another host), shuffled; machine load "
            f"average {os.getloadavg()[0]:.1f}.\n\n" + "\n".join(lines) + "\n"
            + "".join(f"\n- {note}" for note in notes) + f"\n\nCommand: `{command}`")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=list(SETS),
                        help="repeatable; default: both")
    parser.add_argument("--dataset", type=Path, help="one dataset folder instead of the sets")
    parser.add_argument("--memory", type=int, default=50_000, metavar="N",
                        help="synthetic texts for the memory figure (0: none)")
    parser.add_argument("--no-write", action="store_true",
                        help="do not update benchmarks/README.md")
    args = parser.parse_args(argv)
    folders = [args.dataset] if args.dataset else [SETS[name] for name in args.set or SETS]
    pages = [page for folder in folders for page in load_set(folder)]
    items = items_of(pages, random.Random(SEED))
    records = extract(items)
    scores, memory, notes = {}, {}, []
    for name, (mode, index, module) in INDEXES.items():
        if not available(module):
            notes.append(f"{name}: skipped ({module} is not installed)")
            continue
        scores[name] = score(items, records, mode, index)
        if args.memory:
            memory[name] = memory_per_record(mode, index, args.memory)
    failed = sum(not record.ok for record in records)
    notes.append(f"{failed} of {len(records)} records are errors (no content to compare)")
    options = "".join(f" --set {name}" for name in args.set or [])
    text = report(scores, memory, len(pages), notes, f"python benchmarks/dedup.py{options}")
    print(text)
    if not args.no_write and not args.dataset:
        write_block(text, "dedup", "## Duplicates (`dedup.py`)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

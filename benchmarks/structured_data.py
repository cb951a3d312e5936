"""Structured data (JSON-LD, microdata, OpenGraph): our reader against extruct, on both dev sets.

    python benchmarks/structured_data.py [--set news|modern ...] [--passes 3] [--against DIR]

Per page, CPU time (``time.process_time``, the best of ``--passes`` passes, so a busy
machine inflates both alike):

* **ours**: :func:`handlers.structured.read_declared` + :func:`structured_objects` on the
  tree the handler has already parsed, given the ``itemtype``/``itemprop`` elements that the
  handler's walk for its byline rules collects (untimed here): what the handler pays,
  decoding the JSON-LD included (which it decoded before this reader too);
* **extruct**: ``extruct.extract(html, syntaxes=["json-ld", "microdata", "opengraph"],
  errors="ignore")`` — raw blocks only, no normalisation; its microdata and OpenGraph
  readers need an ``lxml.html`` tree, so it parses the page again: that parse is shown
  apart (``extruct − parse`` is its cost on a tree of its own kind).

``--against DIR`` (another checkout, e.g. main's from ``git archive``) also times the whole
metadata step, :func:`handlers.html_metadata.extract_metadata`, of DIR's
``html_metadata.py`` against this tree's, alternating page by page in one process (DIR's
module is loaded with this tree's other modules): the handler's added cost per page.

Also: pages with JSON-LD, blocks that strict JSON refuses, pages on which extruct returns no
JSON-LD although the page has some (one bad block loses the page's JSON-LD), objects per
group in ``metadata.structured``, and each library's import time in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.quality import SETS, available, load_set  # noqa: E402
from handlers.decode import decode_html  # noqa: E402
from handlers.html_dom import parse  # noqa: E402
from handlers.structured import read_declared, structured_objects  # noqa: E402
from handlers.structured.jsonld import is_json_ld  # noqa: E402


def marked(root: Any, url: str) -> tuple[Any, str, list[Any], list[Any]]:
    """(tree, URL, elements with an itemtype, with an itemprop), as the handler's walk has
    them."""
    typed, props = [], []
    for element in root.iter():
        if isinstance(element.tag, str):
            if element.get("itemtype") is not None:
                typed.append(element)
            if element.get("itemprop") is not None:
                props.append(element)
    return root, url, typed, props


def ours(root: Any, url: str, typed: list[Any], props: list[Any]
         ) -> dict[str, list[dict[str, Any]]]:
    return structured_objects(read_declared(root, url, typed=typed, props=props))


def extruct_page(source: bytes, url: str) -> dict[str, Any]:
    import extruct

    return dict(extruct.extract(source, base_url=url, syntaxes=["json-ld", "microdata",
                                                                 "opengraph"],
                                errors="ignore"))


def extruct_parse(source: bytes, url: str) -> Any:
    from extruct.utils import parse_html

    return parse_html(source, encoding="UTF-8")


def best_of(passes: int, run: Any, items: list[Any]) -> list[float]:
    """Per item, the least CPU ms of ``passes`` runs."""
    best = [float("inf")] * len(items)
    for _ in range(passes):
        for index, item in enumerate(items):
            start = time.process_time()
            run(*item)
            best[index] = min(best[index], (time.process_time() - start) * 1000)
    return best


def figures(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered):.2f} | {p95:.2f} | {statistics.fmean(ordered):.2f}"


def import_ms(statement: str, before: str) -> float:
    """Least CPU ms of ``statement`` over 5 fresh interpreters, after ``before``."""
    code = (f"import time\n{before}\nt = time.process_time()\n{statement}\n"
            "print((time.process_time() - t) * 1000)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return min(float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                    capture_output=True, text=True).stdout)
               for _ in range(5))


def metadata_step(directory: Path) -> tuple[Any, Any]:
    """(this tree's ``extract_metadata``, ``directory``'s)."""
    import importlib.util

    from handlers.html_metadata import extract_metadata

    path = directory / "handlers" / "html_metadata.py"
    spec = importlib.util.spec_from_file_location("before_html_metadata", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return extract_metadata, module.extract_metadata


def metadata_rows(set_name: str, sources: list[tuple[bytes, str]], passes: int,
                  directory: Path) -> list[str]:
    """The metadata step's CPU per page, this tree's and ``directory``'s, each page's best of
    ``passes`` alternating runs on a fresh parse."""
    after, before = metadata_step(directory)
    best = {"before": [float("inf")] * len(sources), "after": [float("inf")] * len(sources)}
    for number in range(passes):
        for index, (source, url) in enumerate(sources):
            order = [("before", before), ("after", after)]
            for name, step in order if (number + index) % 2 else order[::-1]:
                root = parse(source)
                start = time.process_time()
                step(root, url)
                best[name][index] = min(best[name][index],
                                        (time.process_time() - start) * 1000)
    added = [a - b for a, b in zip(best["after"], best["before"], strict=True)]
    return [f"| {set_name} | metadata step, {directory.name} | {figures(best['before'])} |",
            f"| {set_name} | metadata step, this tree | {figures(best['after'])} |",
            f"| {set_name} | added per page | {figures(added)} |"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=list(SETS))
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout's tree")
    args = parser.parse_args(argv)
    have_extruct = available("extruct")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    lines = ["| set | reader | median ms | p95 ms | mean ms |", "|---|---|---|---|---|"]
    notes = []
    for set_name in args.set or list(SETS):
        pages = load_set(SETS[set_name])
        sources = [(decode_html(p.body, None)[1], p.url) for p in pages]
        trees = [marked(parse(source), url) for source, url in sources]
        lines.append(f"| {set_name} | ours | {figures(best_of(args.passes, ours, trees))} |")
        if args.against:
            lines.extend(metadata_rows(set_name, sources, args.passes, args.against.resolve()))
        groups: Counter[str] = Counter()
        blocks = refused = 0
        for root, url, typed, props in trees:
            for script in root.iter("script"):
                if is_json_ld(script) and (script.text or "").strip():
                    blocks += 1
                    try:
                        json.loads(script.text or "", strict=False)
                    except ValueError:
                        refused += 1
            groups.update({g: len(o) for g, o in ours(root, url, typed, props).items()})
        with_ld = sum(any(is_json_ld(s) and (s.text or "").strip() for s in tree[0].iter(
            "script")) for tree in trees)
        line = (f"{set_name}: {len(pages)} pages, {with_ld} with JSON-LD ({blocks} blocks, "
                f"{refused} refused by strict JSON); objects: "
                + ", ".join(f"{g} {n}" for g, n in groups.most_common()))
        if have_extruct:
            lines.append(f"| {set_name} | extruct | "
                         f"{figures(best_of(args.passes, extruct_page, sources))} |")
            lines.append(f"| {set_name} | extruct's parse alone | "
                         f"{figures(best_of(args.passes, extruct_parse, sources))} |")
            lost = sum(1 for (source, url), tree in zip(sources, trees, strict=True)
                       if any(is_json_ld(s) and (s.text or "").strip() for s in tree[0].iter(
                           "script")) and not extruct_page(source, url).get("json-ld"))
            line += f"; extruct returns no JSON-LD on {lost} of the {with_ld} pages with some"
        notes.append(line)
    print("\n".join(lines))
    print()
    for note in notes:
        print(f"- {note}")
    before = "import lxml.etree, handlers.html_dom, handlers.html_dates"
    print(f"- import: handlers.structured {import_ms('import handlers.structured', before):.0f}"
          f" ms; json_repair (first broken block) {import_ms('import json_repair', before):.0f}"
          " ms" + (f"; extruct {import_ms('import extruct', before):.0f} ms" if have_extruct
                   else " (extruct not installed)"))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

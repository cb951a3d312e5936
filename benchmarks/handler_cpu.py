"""CPU per page of the HTML handler alone on a dev set; optionally A/B against another checkout.

    python benchmarks/handler_cpu.py [--set modern|news] [--passes 5] [--against DIR]
    python benchmarks/handler_cpu.py --stages [--set modern|news]

Each pass runs in a fresh process: every page through ``HTML_HANDLER.handle`` (text format)
after one warm-up pass, ``time.process_time`` around each call; a pass reports the median and
mean ms per page. ``--against DIR`` (another version's source tree, e.g. from ``git archive``)
alternates its passes with this tree's, so both meet the same machine load; the load average
is printed at the start and the end. ``--stages`` times each stage the handler calls (the
outermost one when stages nest) and prints its share of the handler's CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def one_pass(set_name: str) -> dict[str, float | str]:
    """Median and mean CPU ms per page of the handler on ``sys.path``, and its tree."""
    import handlers
    from benchmarks.quality import SETS, load_set
    from handlers.html import HTML_HANDLER
    from handlers.registry import HandlerContext
    from pipeline.core.errors import PipelineError

    pages = load_set(SETS[set_name])
    contexts = [HandlerContext(url=page.url, format="text") for page in pages]
    times: list[float] = []
    for warm_up in (True, False):
        for page, ctx in zip(pages, contexts, strict=True):
            start = time.process_time()
            with contextlib.suppress(PipelineError):  # an error record costs its time too
                HTML_HANDLER.handle(page.body, ctx)
            if not warm_up:
                times.append((time.process_time() - start) * 1000)
    return {"median": statistics.median(times), "mean": statistics.fmean(times),
            "tree": str(Path(handlers.__file__).resolve().parent.parent)}


_STAGES = ("decode_html", "parse", "extract_metadata", "clean_tree", "dateline", "text_of",
           "challenge_reason", "holds_prose", "remove_unlikely", "is_discussion",
           "drop_threads", "best_candidate", "trim_content", "render")


def stage_shares(set_name: str) -> None:
    """Print each stage's CPU ms per page and share of the handler's CPU (second pass)."""
    sys.path.insert(0, str(ROOT))
    import handlers.html as html
    from benchmarks.quality import SETS, load_set
    from pipeline.core.errors import PipelineError

    spent: dict[str, float] = dict.fromkeys((*_STAGES, "fallbacks"), 0.0)
    inside = [False]

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            if inside[0]:
                return function(*args, **kwargs)
            inside[0] = True
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - start
                inside[0] = False
        return run

    for name in _STAGES:
        setattr(html, name, timed(name, getattr(html, name)))
    html.HTMLHandler._fallback = timed(  # type: ignore[method-assign]
        "fallbacks", html.HTMLHandler._fallback)
    pages = load_set(SETS[set_name])
    contexts = [html.HandlerContext(url=page.url, format="text") for page in pages]
    for _ in ("warm-up", "timed"):
        spent.update(dict.fromkeys(spent, 0.0))
        start = time.process_time()
        for page, ctx in zip(pages, contexts, strict=True):
            with contextlib.suppress(PipelineError):
                html.HTML_HANDLER.handle(page.body, ctx)
        total = time.process_time() - start
    spent["other"] = total - sum(spent.values())
    print(f"handler: {total * 1000 / len(pages):.2f} ms per page (mean), load average "
          f"{os.getloadavg()[0]:.1f}")
    for name, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"{name:18} {seconds * 1000 / len(pages):6.2f} ms  {100 * seconds / total:5.1f}%")


def _spawn(tree: Path, set_name: str) -> tuple[float, float]:
    """(median, mean) ms per page of one pass over ``tree``'s handler in a fresh process."""
    # PYTHONPATH goes before the installed (editable) copy: the tree's packages are timed.
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, __file__, "--one-pass", "--set", set_name],
                         env=env, check=True, capture_output=True, text=True).stdout
    figures = json.loads(out)
    if Path(figures["tree"]) != tree:
        raise SystemExit(f"timed {figures['tree']} instead of {tree}")
    return figures["median"], figures["mean"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="modern", choices=("modern", "news"))
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another version's source tree")
    parser.add_argument("--stages", action="store_true", help="CPU share of each stage")
    parser.add_argument("--one-pass", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stages:
        stage_shares(args.set)
        return
    if args.one_pass:
        print(json.dumps(one_pass(args.set)))
        return
    trees = {"this": ROOT}
    if args.against:
        trees["against"] = args.against.resolve()
    print(f"load average at start: {os.getloadavg()}")
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for number in range(args.passes):
        order = list(trees) if number % 2 == 0 else list(reversed(trees))
        for name in order:
            median, mean = _spawn(trees[name], args.set)
            results[name].append((median, mean))
            print(f"pass {number + 1} {name}: median {median:.2f} ms, mean {mean:.2f} ms",
                  flush=True)
    print(f"load average at end: {os.getloadavg()}")
    for name, passes in results.items():
        medians = sorted(median for median, _ in passes)
        means = sorted(mean for _, mean in passes)
        print(f"{name}: median ms per page {medians[0]:.2f}–{medians[-1]:.2f}, "
              f"mean {means[0]:.2f}–{means[-1]:.2f}")


if __name__ == "__main__":
    main()

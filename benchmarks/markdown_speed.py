"""Markdown conversion cost: our renderer vs markdownify vs html2text, same main-content nodes.

    python benchmarks/markdown_speed.py [--dataset PATH]

For every benchmark page, the handler's main-content node is found once; then each converter
turns that node into markdown (libraries get it serialised as HTML, which is how they take
input). Prints median/mean CPU ms per page. Libraries missing are skipped with a note.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lxml import etree  # noqa: E402

from benchmarks.quality import DEFAULT_DATASET, load_pages  # noqa: E402
from handlers.decode import decode_body  # noqa: E402
from handlers.html_boilerplate import trim_content  # noqa: E402
from handlers.html_clean import clean_tree  # noqa: E402
from handlers.html_dom import parse  # noqa: E402
from handlers.html_extract import best_candidate, remove_unlikely  # noqa: E402
from handlers.html_render import render  # noqa: E402


def main_nodes(dataset: Path) -> list[tuple[etree._Element, str]]:
    nodes = []
    for _page_id, url, body, _truth in load_pages(dataset):
        root = parse(decode_body(body, None, html=True))
        clean_tree(root)
        remove_unlikely(root)
        main = best_candidate(root.find("body") if root.find("body") is not None else root)
        if main is not None:
            trim_content(main, None, None)
            nodes.append((main, url))
    return nodes


def converters() -> dict[str, object]:
    found: dict[str, object] = {"ours": lambda node, url: render(node, markdown=True,
                                                                 base_url=url)}
    try:
        from markdownify import markdownify

        found["markdownify"] = lambda node, url: markdownify(
            etree.tostring(node, encoding="unicode", method="html"))
    except ImportError:
        print("markdownify: not installed, skipped")
    try:
        import html2text

        def run_html2text(node: etree._Element, url: str) -> str:
            converter = html2text.HTML2Text(baseurl=url)
            converter.body_width = 0
            return converter.handle(etree.tostring(node, encoding="unicode", method="html"))

        found["html2text"] = run_html2text
    except ImportError:
        print("html2text: not installed, skipped")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args(argv)
    nodes = main_nodes(args.dataset)
    print(f"{len(nodes)} main-content nodes\n")
    print("| converter | median ms | mean ms |\n|---|---|---|")
    for name, convert in converters().items():
        times = []
        for node, url in nodes:
            start = time.process_time()
            convert(node, url)  # type: ignore[operator]
            times.append((time.process_time() - start) * 1000)
        print(f"| {name} | {statistics.median(times):.2f} | {statistics.mean(times):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

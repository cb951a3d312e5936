"""What the kernel adds on top of a provider: validation, re-validation, failover plumbing.

Runs ``web_search`` / ``web_extract`` against in-memory fake providers (no network) and
against a DuckDuckGo stand-in on 127.0.0.1 (real HTTP, HTML parsing), and times
``import pipeline``. Prints a Markdown table; ``--write`` also stores it in
``benchmarks/README.md`` between the ``kernel_overhead`` markers.

    python benchmarks/kernel_overhead.py [--calls 2000] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiohttp import web
from aiohttp.test_utils import TestServer

from pipeline.agent.kernel import web_extract, web_search
from pipeline.core.settings import Settings
from pipeline.providers.fake import FakeExtractProvider, FakeSearchProvider

ROWS = [{"title": f"Result {i}", "url": f"https://site{i}.example/page?q={i}",
         "snippet": "A snippet of about a hundred characters, like real engines return. " * 2,
         "score": i / 10} for i in range(100)]
DDG_BLOCK = ('<div class="result results_links web-result"><h2 class="result__title">'
             '<a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fs{i}.example%2F'
             '&amp;rut=x">Title {i}</a></h2><a class="result__snippet">Snippet {i}.</a></div>')


async def per_call_us(make, calls: int) -> float:
    for _ in range(20):
        await make()
    start = time.perf_counter()
    for _ in range(calls):
        await make()
    return (time.perf_counter() - start) / calls * 1e6


async def measure(calls: int) -> list[tuple[str, str]]:
    settings = Settings()
    search10 = FakeSearchProvider(ROWS[:10])
    search100 = FakeSearchProvider(ROWS)
    pages = {f"https://p{i}.example/": "Paragraph text. " * 500 for i in range(10)}
    extract = FakeExtractProvider(pages)
    results = [
        ("web_search, fake provider, 10 rows",
         await per_call_us(lambda: web_search("q", backend=search10, settings=settings), calls)),
        ("web_search, fake provider, 100 rows",
         await per_call_us(lambda: web_search("q", backend=search100, settings=settings),
                           calls // 4)),
        ("web_extract, fake provider, 10 URLs × 8 kB",
         await per_call_us(lambda: web_extract(list(pages), backend=extract,
                                               settings=settings), calls // 4)),
    ]
    app = web.Application()
    page = "<html><body>" + "".join(DDG_BLOCK.format(i=i) for i in range(10)) + "</body></html>"
    app.router.add_post("/html/", lambda request: web.Response(text=page,
                                                               content_type="text/html"))
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    os.environ["DUCKDUCKGO_BASE_URL"] = str(server.make_url("")).rstrip("/")
    try:
        results.append(("web_search, duckduckgo over loopback HTTP, 10 rows",
                        await per_call_us(lambda: web_search("q", settings=settings),
                                          calls // 10)))
    finally:
        await server.close()
    return [(name, f"{value:,.0f} µs") for name, value in results]


def import_ms() -> str:
    best = min(
        float(subprocess.run(
            [sys.executable, "-c", "import time; t=time.perf_counter(); import pipeline; "
             "print((time.perf_counter()-t)*1000)"],
            capture_output=True, text=True, check=True, cwd=Path(__file__).parents[1],
        ).stdout)
        for _ in range(5))
    return f"{best:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = asyncio.run(measure(args.calls))
    rows.append(("import pipeline (best of 5, fresh interpreter)", import_ms()))
    command = "python benchmarks/kernel_overhead.py" + (f" --calls {args.calls}"
                                                         if args.calls != 2000 else "")
    table = "\n".join([f"`{command}`", "", "| what | per call |", "|---|---|",
                       *(f"| {name} | {value} |" for name, value in rows)])
    print(table)
    if args.write:
        readme = Path(__file__).with_name("README.md")
        text = readme.read_text()
        block = f"<!-- kernel_overhead:begin -->\n{table}\n<!-- kernel_overhead:end -->"
        pattern = re.compile(r"<!-- kernel_overhead:begin -->.*<!-- kernel_overhead:end -->",
                             re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _: block, text)
        else:
            text += ("\n## Kernel overhead\n\n`benchmarks/kernel_overhead.py`: what "
                     "`web_search`/`web_extract` add around a provider (validation, row "
                     "re-validation, chain plumbing), with in-memory fakes and with the "
                     "DuckDuckGo provider against a loopback stand-in.\n\n" + block + "\n")
        readme.write_text(text)


if __name__ == "__main__":
    main()

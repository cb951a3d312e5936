"""Rendering (``--render``): issue 23's goals, measured in one run beside a peer.

    python benchmarks/render.py [--pages N] [--renders N] [--skip PART,...] [--no-write]

Parts (``--skip`` names them):

* ``auto``: the share of both dev sets' static pages that ``--render auto`` renders (the
  HTML handler on each stored page, then :func:`pipeline.browser.shells.render_reason`).
* ``quality``: JS-app versions of ``--pages`` pages per dev set (every k-th page; scripts,
  styles and embedded media stripped from every version, since nothing outside 127.0.0.1 is
  reachable here): ``/a/ID`` moves the body behind a 100 ms timer and a ``fetch()`` of its
  HTML, ``/i/ID`` into a JSON data island a script renders; ``/s/ID`` is the page served
  static. Served on 127.0.0.1 by this script in a process of its own. Ours is the command line
  with ``--render auto`` at the default ``--render-concurrency`` (politeness opened: one host
  serves everything), F1 against the static pages through ``--render never``; wall time, the
  CPU of the whole process tree (command, Playwright driver, Chromium) per rendered page.
  The peers, in the same run: a plain Playwright script that renders every JS-app page in the
  same Chromium with ``wait_until="networkidle"`` at the same concurrency, and with
  ``--crawl4ai-python`` crawl4ai (its defaults, ``arun_many`` at the same concurrency, over
  CDP on the same Chromium); their HTML goes through our HTML handler, so the F1 compares
  what was rendered.
* ``memory``: ``--renders`` renders in one browser (no replacement), the proportional set
  size of the browser's processes every 100.
* ``orphans``: the command line killed mid-render by Ctrl-C (SIGINT to its group), SIGTERM,
  ``kill -9`` and a crash of the browser; Chromium processes left after 10 s.
* ``policy``: a page whose redirect, WebSocket, worker, preconnect, image, fetch and form
  post aim at a blocked port; connections that port accepted.

Every figure is printed with the load average read when it was measured (the machine is
shared), and the report replaces the ``render`` section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.readme_block import write_block  # noqa: E402
from benchmarks.shingle_metric import corpus_score, score_page  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
SETS = ("article-extraction-benchmark", "modern-web-dev")
READY = "LISTENING "
_STRIP = re.compile(rb"<(script|style|iframe|video|audio|object)\b.*?</\1\s*>|"
                    rb"<(?:script|link|img|source|embed|iframe|meta\s+http-equiv)\b[^>]*>",
                    re.IGNORECASE | re.DOTALL)
_BODY = re.compile(rb"<body\b[^>]*>(.*)</body\s*>", re.IGNORECASE | re.DOTALL)
APP = (b"<div id=\"root\"></div><script>setTimeout(() => fetch('/d/%s').then(r => r.json())"
       b".then(d => { document.getElementById('root').outerHTML = d.html; }), 100);</script>")
ISLAND = (b"<div id=\"root\"></div><script id=\"__DATA__\" type=\"application/json\">%s"
          b"</script><script>document.getElementById('root').outerHTML = JSON.parse("
          b"document.getElementById('__DATA__').textContent).html;</script>")


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


# --------------------------------------------------------------------------- pages
def sample(per_set: int) -> list[tuple[str, str, bytes]]:
    """(id, true text, html) of ``per_set`` pages of each dev set, every k-th by id."""
    chosen = []
    for name in SETS:
        folder = DATASETS / name
        truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
        ids = sorted(truth)
        step = max(1, len(ids) // per_set)
        for page_id in ids[::step][:per_set]:
            html = gzip.decompress((folder / "html" / f"{page_id}.html.gz").read_bytes())
            chosen.append((page_id[:16], truth[page_id]["articleBody"], html))
    return chosen


def variants(html: bytes, page_id: str) -> dict[str, bytes] | None:
    """The static, app and island versions of a page (None: it has no body)."""
    clean = _STRIP.sub(b"", html)
    found = _BODY.search(clean)
    if found is None:
        return None
    inner = found.group(1)
    before, after = clean[:found.start(1)], clean[found.end(1):]
    data = json.dumps({"html": inner.decode("utf-8", "replace")}).encode()
    island = data.replace(b"</", b"<\\/")
    return {"s": clean, "a": before + APP % page_id.encode() + after,
            "i": before + ISLAND % island + after, "d": data}


def serve(per_set: int) -> None:
    """The page server (its own process): prints its port, serves until killed."""
    from aiohttp import web

    pages: dict[tuple[str, str], bytes] = {}
    for page_id, _, html in sample(per_set):
        for kind, body in (variants(html, page_id) or {}).items():
            pages[(kind, page_id)] = body

    async def answer(request: web.Request) -> web.Response:
        body = pages.get((request.match_info["kind"], request.match_info["id"]))
        if body is None:
            raise web.HTTPNotFound()
        kind = "application/json" if request.match_info["kind"] == "d" else "text/html"
        return web.Response(body=body, content_type=kind, charset="utf-8")

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/{kind}/{id}", answer)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(READY + str(site._server.sockets[0].getsockname()[1]), flush=True)  # type: ignore[union-attr]
        await asyncio.Event().wait()

    asyncio.run(main())


class Server:
    def __init__(self, per_set: int) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", str(per_set)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(READY):
            raise RuntimeError("the page server did not start")
        self.base = f"http://127.0.0.1:{line[len(READY):].strip()}"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


# --------------------------------------------------------------------------- parts
def auto_rate() -> list[str]:
    from handlers import HandlerContext, HandlerOptions, registry_for
    from pipeline.browser.shells import render_reason
    from pipeline.core.errors import PipelineError

    handler = registry_for(()).select("text/html", b"<html>")
    lines = []
    for name in SETS:
        folder = DATASETS / name
        truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
        fired = 0
        for page_id in sorted(truth):
            body = gzip.decompress((folder / "html" / f"{page_id}.html.gz").read_bytes())
            ctx = HandlerContext(url=truth[page_id]["url"], media_type="text/html",
                                 options=HandlerOptions(max_chars=100_000))
            try:
                reason = render_reason(body, content_chars=len(handler.handle(body, ctx).content))
            except PipelineError as exc:
                reason = render_reason(body, error=exc)
            fired += reason is not None
        lines.append(f"| {name} | {len(truth)} | {fired} | {100 * fired / len(truth):.1f}% |")
    return ["| dev set | static pages | rendered by `auto` | share (goal ≤ 2%) |",
            "|---|---|---|---|", *lines]


def run_cli(urls: list[str], work: Path, mode: str) -> tuple[list[dict], object, str]:
    from benchmarks.measure import run_measured  # psutil: the bench extra

    (work / "urls.txt").write_text("\n".join(urls) + "\n")
    out = work / f"out-{mode}.jsonl"
    before = load()
    measured = run_measured(
        [sys.executable, "-m", "pipeline", str(work / "urls.txt"), "-o", str(out),
         "--overwrite", "--ordered", "--quiet", "--format", "text", "--render", mode,
         "--allow-net", "127.0.0.1/32", "--per-host", "16", "--rate", "1000",
         "--timeout", "60"], cwd=ROOT, timeout=3600)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return records, measured, f"{before} → {load()}"


PEER = """
import asyncio, json, sys, time
from playwright.async_api import async_playwright
urls, executable, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[4]
concurrency = int(sys.argv[3])
async def main():
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=executable)
        gate = asyncio.Semaphore(concurrency)
        async def one(url):
            async with gate:
                page = await browser.new_page()
                try:
                    await page.goto(url, wait_until="networkidle", timeout=60000)
                    return await page.content()
                except Exception:
                    return ""
                finally:
                    await page.close()
        html = await asyncio.gather(*(one(u) for u in urls))
        await browser.close()
    json.dump(html, open(out, "w"))
asyncio.run(main())
"""


# crawl4ai has no executable path: it is pointed over CDP at the same Chromium, started here
# as Playwright would (headless, no sandbox as root, its own profile). Its defaults otherwise.
CRAWL4AI = """
import asyncio, json, os, re, subprocess, sys, tempfile
urls, executable, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[4]
concurrency = int(sys.argv[3])
os.environ["CRAWL4AI_NO_CLOUD_NOTICE"] = "1"
chrome = subprocess.Popen([executable, "--headless", "--no-sandbox", "--remote-debugging-port=0",
                           "--user-data-dir=" + tempfile.mkdtemp(),
                           "--disable-background-networking", "about:blank"],
                          stderr=subprocess.PIPE, text=True)
for line in chrome.stderr:
    found = re.search(r"DevTools listening on (ws://[^ ]+)", line)
    if found:
        break
async def main():
    from crawl4ai import AsyncWebCrawler, BrowserConfig, CrawlerRunConfig
    from crawl4ai.async_dispatcher import SemaphoreDispatcher
    config = BrowserConfig(browser_mode="cdp", cdp_url=found.group(1).strip(), verbose=False)
    async with AsyncWebCrawler(config=config) as crawler:
        results = await crawler.arun_many(urls, config=CrawlerRunConfig(verbose=False),
                                          dispatcher=SemaphoreDispatcher(concurrency))
    by_url = {r.url: (r.html or "") for r in results}
    json.dump([by_url.get(u, "") for u in urls], open(out, "w"))
try:
    asyncio.run(main())
finally:
    chrome.kill()
    chrome.wait()
"""


def peer(urls: list[str], work: Path, concurrency: int, python: str = sys.executable,
         script: str = PEER) -> tuple[list[str], object, str]:
    from benchmarks.measure import run_measured
    from pipeline.browser.locate import find_browser

    out = work / "peer.json"
    out.unlink(missing_ok=True)
    before = load()
    measured = run_measured([python, "-c", script, json.dumps(urls), find_browser(None),
                             str(concurrency), str(out)], timeout=3600)
    html = json.loads(out.read_text()) if out.exists() else [""] * len(urls)
    return html, measured, f"{before} → {load()}"


def our_text(html: str, url: str) -> str:
    from handlers import HandlerContext, HandlerOptions, registry_for
    from pipeline.core.errors import PipelineError

    handler = registry_for(()).select("text/html", b"<html>")
    try:
        return handler.handle(html.encode(), HandlerContext(
            url=url, media_type="text/html", charset="utf-8", format="text",
            options=HandlerOptions(max_chars=100_000))).content
    except PipelineError:
        return ""


def quality(per_set: int, work: Path, crawl4ai: str | None) -> list[str]:
    from pipeline.core.settings import Settings

    pages = [(pid, truth) for pid, truth, html in sample(per_set) if variants(html, pid)]
    server = Server(per_set)
    try:
        base = server.base
        static, m_static, l_static = run_cli([f"{base}/s/{p}" for p, _ in pages], work, "never")
        js_urls = [f"{base}/{kind}/{p}" for kind in "ai" for p, _ in pages]
        ours, m_ours, l_ours = run_cli(js_urls, work, "auto")
        concurrency = Settings().render_concurrency
        theirs, m_peer, l_peer = peer(js_urls, work, concurrency)
        c4ai = (peer(js_urls, work, concurrency, crawl4ai, CRAWL4AI)
                if crawl4ai else None)
    finally:
        server.close()
    truths = [truth for _, truth in pages] * 2

    def f1(texts: list[str], wanted: list[str]) -> float:
        return corpus_score([score_page(t, w) for t, w in zip(texts, wanted, strict=True)]).f1

    f1_static = f1([r.get("content") or "" for r in static], [t for _, t in pages])
    f1_ours = f1([r.get("content") or "" for r in ours], truths)
    f1_peer = f1([our_text(h, u) for h, u in zip(theirs, js_urls, strict=True)], truths)
    rendered = sum(bool(r.get("rendered")) for r in ours)
    n = len(js_urls)
    rows = [
        "| run | pages | F1 | wall s | pages/s | CPU s (tree) | CPU s/page | "
        "load (before → after) |",
        "|---|---|---|---|---|---|---|---|",
        f"| static pages, `--render never` | {len(pages)} | {f1_static:.3f} | "
        f"{m_static.wall_s:.1f} | {len(pages) / m_static.wall_s:.2f} | {m_static.cpu_s:.1f} | "
        f"{m_static.cpu_s / len(pages):.3f} | {l_static} |",
        f"| JS-app pages, ours `--render auto` ({rendered} rendered) | {n} | {f1_ours:.3f} | "
        f"{m_ours.wall_s:.1f} | {n / m_ours.wall_s:.2f} | {m_ours.cpu_s:.1f} | "
        f"{m_ours.cpu_s / n:.3f} | {l_ours} |",
        f"| JS-app pages, Playwright `networkidle` (peer) | {n} | {f1_peer:.3f} | "
        f"{m_peer.wall_s:.1f} | {n / m_peer.wall_s:.2f} | {m_peer.cpu_s:.1f} | "
        f"{m_peer.cpu_s / n:.3f} | {l_peer} |",
    ]
    ratios = f"{m_peer.wall_s / m_ours.wall_s:.2f}× the Playwright script's"
    if c4ai is not None:
        html, m_c4, l_c4 = c4ai
        f1_c4 = f1([our_text(h, u) for h, u in zip(html, js_urls, strict=True)], truths)
        rows.append(f"| JS-app pages, crawl4ai (its defaults, same Chromium over CDP) | {n} | "
                    f"{f1_c4:.3f} | {m_c4.wall_s:.1f} | {n / m_c4.wall_s:.2f} | "
                    f"{m_c4.cpu_s:.1f} | {m_c4.cpu_s / n:.3f} | {l_c4} |")
        ratios += f", {m_c4.wall_s / m_ours.wall_s:.2f}× crawl4ai's"
    rows += ["", f"F1 of ours minus static: {f1_ours - f1_static:+.3f} (goal: within 0.03); "
             f"our pages per second: {ratios} (goal ≥ 1.5×), {concurrency} pages at once for "
             "all. Each row's wall and CPU include its start (interpreter, driver, browser)."]
    return rows


async def memory(per_set: int, renders: int) -> list[str]:
    from pipeline.browser.processes import memory_kib
    from pipeline.browser.renderer import Renderer, Source
    from pipeline.core.settings import Settings

    pages = [(pid, v) for pid, _, html in sample(per_set) if (v := variants(html, pid))]
    server = Server(per_set)
    settings = Settings(allow_net=["127.0.0.1/32"], render="always", per_host=16, rate=1000,
                        render_restart_pages=renders + 1)
    rows = ["| renders | browser PSS (MiB) | load |", "|---|---|---|"]
    try:
        async with Renderer(settings) as renderer:
            done = 0
            gate = asyncio.Semaphore(settings.render_concurrency)

            async def one(i: int) -> None:
                nonlocal done
                page_id, versions = pages[i % len(pages)]
                url = f"{server.base}/a/{page_id}"
                async with gate:
                    await renderer.render(Source(url, url, versions["a"], "text/html",
                                                 "utf-8"), 60)
                done += 1

            for start in range(0, renders, 100):
                await asyncio.gather(*(one(i) for i in range(start, min(renders, start + 100))),
                                     return_exceptions=True)
                rows.append(f"| {done} | {memory_kib(renderer.processes()) / 1024:.0f} | "
                            f"{load()} |")
    finally:
        server.close()
    return rows


def orphans(work: Path) -> list[str]:
    """The command line killed mid-render four ways; the browser's processes left after."""
    from pipeline.browser.processes import browser_processes

    page = (b"<!doctype html><body><div id=root></div><script>fetch('/started');"
            b"setInterval(() => document.body.append(document.createElement('b')), 30);"
            b"</script></body>")
    started = work / "started"
    server_code = f"""
import asyncio, sys
from aiohttp import web
async def main():
    app = web.Application()
    async def page(r): return web.Response(body={page!r}, content_type="text/html")
    async def begun(r):
        open({str(started)!r}, "w").close(); return web.Response(text="ok")
    app.router.add_get("/p", page); app.router.add_get("/started", begun)
    runner = web.AppRunner(app); await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0); await site.start()
    print(site._server.sockets[0].getsockname()[1], flush=True); await asyncio.Event().wait()
asyncio.run(main())
"""
    server = subprocess.Popen([sys.executable, "-c", server_code], stdout=subprocess.PIPE,
                              text=True)
    assert server.stdout is not None
    port = server.stdout.readline().strip()
    rows = ["| how the run ends | Chromium processes 10 s later | load |", "|---|---|---|"]
    try:
        for how in ("Ctrl-C (SIGINT to the group)", "SIGTERM", "kill -9", "browser crash"):
            started.unlink(missing_ok=True)
            marker = tempfile.mkdtemp(dir=work)
            (work / "one.txt").write_text(f"http://127.0.0.1:{port}/p\n")
            proc = subprocess.Popen(
                [sys.executable, "-m", "pipeline", str(work / "one.txt"), "--render", "always",
                 "--allow-net", "127.0.0.1/32", "--render-wait", "60", "--timeout", "90",
                 "--quiet"], cwd=ROOT, env={**os.environ, "TMPDIR": marker},
                start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while not started.exists():
                time.sleep(0.1)
            leaders = [pid for pid in browser_processes(None, marker)
                       if _group(pid) == pid and "chrom" in _exe(pid)]
            if how.startswith("Ctrl-C"):
                os.killpg(proc.pid, signal.SIGINT)
            elif how == "SIGTERM":
                proc.terminate()
            elif how == "kill -9":
                proc.kill()
            else:
                for leader in leaders:
                    os.kill(leader, signal.SIGKILL)
                time.sleep(2)
                proc.terminate()
            proc.wait(60)
            time.sleep(10)
            left = [pid for pid in browser_processes(leaders[0] if leaders else None, marker)
                    if any(name in _exe(pid) for name in ("chrom", "node", "headless"))]
            rows.append(f"| {how} | {len(left)} | {load()} |")
    finally:
        server.kill()
        server.wait()
    return rows


def _group(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except OSError:
        return -1


def _exe(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return ""


async def policy() -> list[str]:
    from aiohttp import web

    from pipeline.browser.renderer import Renderer, Source
    from pipeline.core.settings import Settings

    accepted = 0

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        writer.close()

    blocked = await asyncio.start_server(count, "127.0.0.2", 0)
    target = f"127.0.0.2:{blocked.sockets[0].getsockname()[1]}"
    page = (f"<!doctype html><head><link rel=preconnect href='http://{target}'></head><body>"
            f"<p>Policy page with enough words to be read as a page.</p>"
            f"<img src='http://{target}/i.png'><script src='/hop'></script>"
            f"<form id=f method=post action='http://{target}/post'></form><script>"
            f"fetch('http://{target}/f').catch(() => 0);"
            f"try {{ new WebSocket('ws://{target}/ws'); }} catch (e) {{}}"
            f"new Worker(URL.createObjectURL(new Blob(['fetch(\"http://{target}/w\")"
            f".catch(() => 0)'])));"
            f"setTimeout(() => document.getElementById('f').submit(), 300);</script></body>")
    app = web.Application()

    async def hop(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://{target}/redirected")

    app.router.add_get("/hop", hop)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/"  # type: ignore[union-attr]
    try:
        async with Renderer(Settings(allow_net=["127.0.0.1/32"], render="always",
                                     render_wait=3)) as renderer:
            rendered = await renderer.render(Source(url, url, page.encode(), "text/html",
                                                    "utf-8"), 30)
    finally:
        await runner.cleanup()
        blocked.close()
    return ["| policy page | requests refused at the proxy | connections the blocked port "
            "accepted (goal 0) | load |", "|---|---|---|---|",
            f"| redirect, WebSocket, worker fetch, preconnect, image, fetch, form post | "
            f"{rendered.refused} | {accepted} | {load()} |"]


# --------------------------------------------------------------------------- report
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=40, help="pages per dev set (default 40)")
    parser.add_argument("--renders", type=int, default=1000, help="renders for the memory part")
    parser.add_argument("--skip", default="", help="parts to leave out, comma-separated")
    parser.add_argument("--no-write", action="store_true", help="do not update README.md")
    parser.add_argument("--crawl4ai-python", metavar="PYTHON",
                        help="an interpreter with crawl4ai installed (its own venv: it pins "
                        "its own dependencies): adds it as a second peer")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve)
        return 0
    if not DATASETS.is_dir():
        print(f"no datasets at {DATASETS}", file=sys.stderr)
        return 2
    skip = set(filter(None, args.skip.split(",")))
    sections = [f"`python benchmarks/render.py --pages {args.pages} --renders {args.renders}`"
                f" on {os.cpu_count()} cores; load averages beside each figure."]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        parts = (("auto", "Static pages `auto` renders", lambda: auto_rate()),
                 ("quality", "JS-app pages: F1, speed and CPU beside the peer",
                  lambda: quality(args.pages, work, args.crawl4ai_python)),
                 ("memory", f"Memory over {args.renders} renders (one browser)",
                  lambda: asyncio.run(memory(args.pages, args.renders))),
                 ("orphans", "Orphans", lambda: orphans(work)),
                 ("policy", "The policy page", lambda: asyncio.run(policy())))
        for name, title, part in parts:
            if name in skip:
                continue
            rows = part()
            section = f"**{title}**\n\n" + "\n".join(rows)
            print(section + "\n", flush=True)
            sections.append(section)
    if not args.no_write:
        write_block("\n\n".join(sections), "render", "## Rendering")
    return 0


if __name__ == "__main__":
    sys.exit(main())

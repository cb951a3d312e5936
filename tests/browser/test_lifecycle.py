"""No process of the browser outlives the run: after success, Ctrl-C, SIGTERM, an exception,
a ``kill -9`` of our process (or of its whole process group) and a browser crash. Each test
starts its own browser: these are about its life."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from aiohttp import web

from pipeline.browser import processes
from pipeline.browser import renderer as renderer_module
from pipeline.browser.renderer import Renderer, Source
from pipeline.core.errors import PipelineError
from tests.browser.conftest import ALLOWED, render_settings, serve

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
STORY = "".join(f"<p>Paragraph {i} of a story long enough to be worth reading, about ships "
                "and the sea and the people who wait for them.</p>" for i in range(6))
# Tells the server it is being rendered, then never settles: the kill comes mid-render.
SLOW = ("<!doctype html><html><body><article>" + STORY + "</article><script>"
        "fetch('/started'); setInterval(() => document.body.append(document.createElement('i'))"
        ", 30);</script></body></html>")
QUICK = "<!doctype html><html><body><article>" + STORY + "</article></body></html>"
BROWSER_SIDE = ("chromium", "chrome", "chrome_crashpad_handler", "headless_shell", "node")


def browser_side(leader: int | None, marker: str) -> list[str]:
    """The live processes of the browser side of a run: the browser's process group, and
    the browser, crash handler and Playwright driver processes that name ``marker``."""
    found = []
    for pid in processes.browser_processes(leader, marker):
        try:
            name = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            continue
        stat = processes._stat(pid)
        if name in BROWSER_SIDE or (leader is not None and stat is not None
                                    and stat[1] == leader):
            found.append(f"{pid}:{name}")
    return found


def browser_leader(tmp_path: str) -> int | None:
    """The browser a run under ``TMPDIR=tmp_path`` started (its private directory is there)."""
    prefix = f"{renderer_module.MARKER_VARIABLE}={tmp_path}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or processes._stat(int(name)) is None:
            continue
        try:
            entries = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(entry.startswith(prefix) for entry in entries):
            return int(name)
    return None


async def gone(leader: int | None, marker: str, within: float = 30.0) -> list[str]:
    """What is still alive of the browser side once it has had ``within`` seconds to go."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while (left := browser_side(leader, marker)) and loop.time() < end:
        await asyncio.sleep(0.2)
    return left


def site() -> tuple[web.Application, asyncio.Event]:
    started = asyncio.Event()
    app = web.Application()

    async def slow(request: web.Request) -> web.Response:
        return web.Response(text=SLOW, content_type="text/html")

    async def quick(request: web.Request) -> web.Response:
        return web.Response(text=QUICK, content_type="text/html")

    async def begun(request: web.Request) -> web.Response:
        started.set()
        return web.Response(text="ok")

    app.router.add_get("/slow", slow)
    app.router.add_get("/quick/{n}", quick)
    app.router.add_get("/started", begun)
    return app, started


async def run_cli(tmp_path: Path, urls: list[str]) -> asyncio.subprocess.Process:
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pipeline", str(tmp_path / "urls.txt"),
        "-o", str(tmp_path / "out.jsonl"), "--render", "always", "--allow-net",
        f"{ALLOWED}/32", "--render-wait", "60", "--timeout", "90", "--quiet", "--ordered",
        "--workers", "1", cwd=str(tmp_path), env=env, start_new_session=True,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)


async def browser_of(marker: str, started: asyncio.Event, done: Path | None = None) -> int:
    """The browser's process (group leader) once it is rendering the slow page (and, with
    ``done``, once that output holds a record)."""
    await asyncio.wait_for(started.wait(), 90)
    while done is not None and not (done.exists() and done.read_text().strip()):
        await asyncio.sleep(0.1)
    leader = browser_leader(marker)
    assert leader is not None, "the rendering browser was not found"
    return leader


def records(tmp_path: Path) -> list[dict]:
    out = tmp_path / "out.jsonl"
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


async def test_a_finished_run_leaves_no_browser(chromium, tmp_path):
    app, _ = site()
    async with serve(app) as port:
        proc = await run_cli(tmp_path, [f"http://{ALLOWED}:{port}/quick/{n}" for n in range(3)])
        leader = None
        while proc.returncode is None and leader is None:
            leader = browser_leader(str(tmp_path))
            await asyncio.sleep(0.05)
        _, stderr = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, stderr.decode()
    assert [r["rendered"] for r in records(tmp_path)] == [True, True, True]
    assert await gone(leader, str(tmp_path), within=5) == []


@pytest.mark.parametrize("how", ["ctrl-c to the group", "sigterm"])
async def test_an_interrupted_run_closes_the_browser_after_its_grace(chromium, tmp_path, how):
    app, started = site()
    async with serve(app) as port:
        urls = [f"http://{ALLOWED}:{port}/quick/1", f"http://{ALLOWED}:{port}/slow"]
        proc = await run_cli(tmp_path, urls)
        leader = await browser_of(str(tmp_path), started, tmp_path / "out.jsonl")
        if how == "sigterm":
            os.kill(proc.pid, signal.SIGTERM)
        else:  # what a terminal does: the whole foreground process group gets SIGINT
            os.killpg(proc.pid, signal.SIGINT)
        _, stderr = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 130, stderr.decode()
    done = records(tmp_path)
    # the page in flight is left for --resume: the signal never reached the browser's side,
    # so it did not fail as a browser crash
    assert [r["url"].rsplit("/", 1)[-1] for r in done] == ["1"]
    assert all(r["ok"] for r in done)
    assert await gone(leader, str(tmp_path), within=10) == []


@pytest.mark.parametrize("group", [False, True], ids=["our process", "our process group"])
async def test_kill_9_leaves_no_browser(chromium, tmp_path, group):
    app, started = site()
    async with serve(app) as port:
        proc = await run_cli(tmp_path, [f"http://{ALLOWED}:{port}/slow"])
        leader = await browser_of(str(tmp_path), started)
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), 30)
        assert await gone(leader, str(tmp_path)) == []


async def test_an_exception_in_the_caller_closes_the_browser(chromium):
    app, _ = site()
    async with serve(app) as port:
        url = f"http://{ALLOWED}:{port}/quick/1"
        with pytest.raises(RuntimeError, match="caller's own"):
            async with Renderer(render_settings()) as renderer:
                rendered = await renderer.render(Source(url, url, QUICK.encode(), "text/html",
                                                        "utf-8"), 30)
                assert rendered.html
                browser = renderer._browser
                assert browser is not None and browser.leader is not None
                raise RuntimeError("the caller's own failure")
    assert await gone(browser.leader, browser.directory, within=5) == []


async def test_a_crash_costs_the_page_in_flight_and_the_next_page_gets_a_new_browser(chromium):
    app, started = site()
    async with serve(app) as port, Renderer(render_settings(render_wait=60)) as renderer:
        base = f"http://{ALLOWED}:{port}"
        slow = asyncio.ensure_future(renderer.render(
            Source(f"{base}/slow", f"{base}/slow", SLOW.encode(), "text/html", "utf-8"), 90))
        await asyncio.wait_for(started.wait(), 90)
        first = renderer._browser
        assert first is not None and first.leader is not None
        os.kill(first.leader, signal.SIGKILL)
        with pytest.raises(PipelineError) as failure:
            await slow
        assert failure.value.kind == "render"
        url = f"{base}/quick/2"
        after = await renderer.render(Source(url, url, QUICK.encode(), "text/html", "utf-8"), 60)
        assert b"Paragraph 5" in after.html
        assert renderer.launches == 2
        assert await gone(first.leader, first.directory, within=10) == []
        second = renderer._browser
    assert second is not None and second is not first
    assert await gone(second.leader, second.directory, within=5) == []


async def test_the_browser_is_replaced_after_k_pages(chromium):
    settings = render_settings(render_restart_pages=2)
    app, _ = site()
    async with serve(app) as port, Renderer(settings) as renderer:
        browsers = []
        for n in range(3):
            url = f"http://{ALLOWED}:{port}/quick/{n}"
            await renderer.render(Source(url, url, QUICK.encode(), "text/html", "utf-8"), 60)
            browsers.append(renderer._browser)
        first = browsers[0]
    assert renderer.launches == 2
    assert await gone(first.leader, first.directory, within=5) == []


# Holds 32 MiB more every 100 ms, up to 3 GiB, and never settles (the DOM keeps changing).
HUNGRY = ("<!doctype html><html><body><article>" + STORY + "</article><script>"
          "const kept = []; setInterval(() => { if (kept.length < 96) "
          "kept.push(new Uint8Array(32 << 20).fill(1)); "
          "document.body.append(document.createElement('i')); }, 100);"
          "</script></body></html>")


async def test_a_page_over_the_memory_limit_is_a_render_error_and_the_browser_restarts(
        chromium):
    """The limit holds during a page (it was looked at only every 20 pages)."""
    app, _ = site()

    async def hungry(request: web.Request) -> web.Response:
        return web.Response(text=HUNGRY, content_type="text/html")

    app.router.add_get("/hungry", hungry)
    settings = render_settings(render_max_memory_mb=1024, render_wait=60)
    async with serve(app) as port, Renderer(settings) as renderer:
        url = f"http://{ALLOWED}:{port}/hungry"
        with pytest.raises(PipelineError) as failure:
            await renderer.render(Source(url, url, HUNGRY.encode(), "text/html", "utf-8"), 90)
        assert failure.value.kind == "render"
        assert "render_max_memory_mb" in failure.value.message
        first = renderer._browser
        url = f"http://{ALLOWED}:{port}/quick/1"
        after = await renderer.render(Source(url, url, QUICK.encode(), "text/html", "utf-8"), 60)
        assert b"Paragraph 5" in after.html
        assert renderer.launches == 2
        second = renderer._browser
    assert first is not None and second is not None and second is not first
    for browser in (first, second):
        assert await gone(browser.leader, browser.directory, within=10) == []


# Floods the driver's connection: 300,000 pushState calls queue a backlog of events the
# Python side drains for minutes, and a close waits behind it.
FLOOD = ("<!doctype html><html><body><article>" + STORY + "</article><script>"
         "fetch('/started').then(() => { for (let i = 0; i < 300000; i++) "
         "history.pushState({}, '', '?state=' + i); });</script></body></html>")
BUSY = ("<!doctype html><html><body><article>" + STORY + "</article><script>"
        "fetch('/started').then(() => { for (;;) {} });</script></body></html>")


def flooding_site() -> tuple[web.Application, asyncio.Event]:
    app, started = site()
    for path, page in (("/flood", FLOOD), ("/busy", BUSY)):
        async def serve_page(request: web.Request, page: str = page) -> web.Response:
            return web.Response(text=page, content_type="text/html")

        app.router.add_get(path, serve_page)
    return app, started


@pytest.mark.parametrize("page", ["flood", "busy"])
async def test_the_deadline_holds_while_a_page_runs_script(chromium, page):
    """history.pushState 300,000 times (a flood of driver events a close waits behind),
    or a script that never yields: the page ends as a timeout by its deadline plus the
    close's bound, and the next page renders in a working browser."""
    app, _ = flooding_site()
    budget = 3.0
    async with serve(app) as port, Renderer(render_settings(render_wait=60)) as renderer:
        url = f"http://{ALLOWED}:{port}/{page}"
        body = (FLOOD if page == "flood" else BUSY).encode()
        with pytest.raises(PipelineError) as failure:
            # generous: the bound is the deadline plus CLOSE_GRACE; before, minutes of backlog
            await asyncio.wait_for(renderer.render(Source(url, url, body, "text/html", "utf-8"),
                                                   budget),
                                   budget + renderer_module.CLOSE_GRACE + 20)
        assert failure.value.kind == "timeout"
        first = renderer._browser
        url = f"http://{ALLOWED}:{port}/quick/1"
        after = await renderer.render(Source(url, url, QUICK.encode(), "text/html", "utf-8"), 60)
        assert b"Paragraph 5" in after.html
        second = renderer._browser
    for browser in (first, second):
        assert browser is not None and await gone(browser.leader, browser.directory,
                                                  within=10) == []


async def test_sigterm_ends_a_run_whose_page_floods_the_driver(chromium, tmp_path):
    app, started = flooding_site()
    async with serve(app) as port:
        proc = await run_cli(tmp_path, [f"http://{ALLOWED}:{port}/flood"])
        leader = await browser_of(str(tmp_path), started)
        await asyncio.sleep(1)  # let the flood build up behind the page
        os.kill(proc.pid, signal.SIGTERM)
        # generous: grace (3 s) + CLOSE_GRACE; before, the close waited behind the backlog
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 130, stderr.decode()
    assert await gone(leader, str(tmp_path), within=10) == []

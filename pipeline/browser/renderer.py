"""The renderer: a fetched HTML page, shown in headless Chromium, read back as HTML.

One browser per :class:`Renderer` (so per process, per shard, per Ray task), started on the
first page that needs it. Pages are isolated by site: each browser context serves one site
(``host:port``, and whether the user's cookies go with it) and one page at a time, in its one
tab, with its own :class:`~pipeline.browser.proxy.PolicyProxy`, so the bytes a page downloads
are counted for that page; idle contexts are kept for their site's next page (its scripts come
from the context's cache, its renderer process is still up) up to a bound, and replaced after
``SITE_PAGES`` pages (a tab used for ever grows). The page's own document is the one the
fetcher already fetched (policy, caps, HEAD guard, credentials and politeness applied), handed
to the browser as the answer to its first navigation; everything after goes through the proxy.
Images, fonts and media are refused; further main-frame navigations wait for their host's
politeness slot; popups are closed; dialogs are dismissed (Playwright's default).

The browser is replaced after ``render_restart_pages`` pages, and killed as soon as its
processes use more than ``render_max_memory_mb`` (watched every second, during pages); a
browser that crashes or is killed costs the pages in flight a ``render`` error and the next
page starts a new one. No process of it outlives :meth:`Renderer.close`:
the Playwright driver runs in its own session (a Ctrl-C or a SIGTERM to our process group
reaches only us, and we close the browser after the run's grace period); when our process is
killed outright the driver sees its pipe close and closes the browser; whatever of the browser
is still alive after a close or a crash is killed by its process group
(:mod:`pipeline.browser.processes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
from collections import OrderedDict
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp.abc import AbstractResolver
from yarl import URL

from pipeline.browser.locate import check_rendering
from pipeline.browser.processes import (
    alive,
    browser_processes,
    find_leader,
    kill_browser,
    memory_kib,
)
from pipeline.browser.proxy import REFUSED_HEADER, PageBudget, PolicyProxy, Refused
from pipeline.browser.settle import HOOKS, SETTLE
from pipeline.core.errors import PipelineError
from pipeline.core.slices import RenderSettings
from pipeline.fetch.base import FetchError
from pipeline.fetch.cookies import Cookie
from pipeline.fetch.credentials import Credentials, CredentialScope, same_host
from pipeline.fetch.hosts import HostGate, HostThrottled
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.resolver import PolicyResolver
from pipeline.fetch.urls import parse_url

if TYPE_CHECKING:
    from playwright.async_api import (
        Browser,
        BrowserContext,
        Page,
        Playwright,
        Request,
        Response,
        Route,
    )

log = logging.getLogger("pipeline.browser")

BLOCKED_TYPES = frozenset({"image", "font", "media"})
# Chromium's own traffic off (it still meets the deny-all proxy if it tries), WebRTC only
# through the proxy, nothing stored for a later run.
CHROMIUM_ARGS = (
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
    "--disable-client-side-phishing-detection", "--safebrowsing-disable-auto-update",
    "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,"
    "NetworkTimeServiceQuerying,PreconnectToSearch",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disk-cache-size=33554432",
    # a cookie goes back only to the scheme and port it was set for, as the fetcher's do
    "--enable-features=EnablePortBoundCookies,EnableSchemeBoundCookies",
)
MARKER_PREFIX = "pipeline-browser-"
MARKER_VARIABLE = "PIPELINE_BROWSER"  # set to the browser's private directory
MEMORY_POLL = 1.0  # seconds between two looks at the browser's memory
SITE_PAGES = 50  # pages one context (and its tab's renderer) serves before a fresh one
IDLE_CONTEXTS_PER_SLOT = 2  # idle contexts kept: this many per page rendered at once
READ_MARGIN = 1.0  # seconds of the deadline kept for reading the page after the wait
LAUNCH_TIMEOUT = 30.0
# Seconds a context or the browser gets to close. A page can flood the driver's connection
# (history.pushState 100,000 times: one event each) so that a close waits behind minutes of
# backlog; past this the browser and its driver are killed instead, and the deadline holds.
CLOSE_GRACE = 5.0


@dataclass
class Source:
    """A fetched page to render: where it ended (``final_url``), its body and the type and
    headers to answer the browser's first navigation with. ``url`` is the URL as asked
    (credentials go to a browser only while ``final_url`` is on its host)."""

    url: str
    final_url: str
    body: bytes
    media_type: str | None
    charset: str | None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Rendered:
    """The DOM after rendering, as UTF-8 HTML; ``final_url`` where the page ended up;
    ``bytes`` everything the page downloaded (its own document included); ``settled``
    whether it settled before the cap; ``refused`` how many of its requests the proxy
    refused; ``status`` the HTTP status of the document shown (the fetched one's 200, or
    that of the page the page navigated to)."""

    html: bytes
    final_url: str
    bytes: int
    settled: bool
    refused: int = 0
    status: int = 200


@dataclass
class _Job:
    """The page a context is rendering now: its document (served once, to its first
    navigation), its budget and the navigations it made."""

    source: Source
    budget: PageBudget
    deadline: float
    served: bool = False
    navigations: int = 0
    status: int = 200  # of the main frame's last document
    blocked: FetchError | None = None  # a main-frame navigation the policy refused


class _Site:
    """A browser context for one site, its proxy and its tab: one page at a time, each
    loaded into the same tab (a same-site navigation keeps its renderer process, where a new
    tab would start one: ~0.25 instead of ~0.8 CPU-seconds a page, benchmarks/README.md)."""

    def __init__(self, context: BrowserContext, proxy: PolicyProxy, renderer: Renderer) -> None:
        self.context = context
        self.proxy = proxy
        self.renderer = renderer
        self.job: _Job | None = None
        self.tab: Page | None = None
        self.pages = 0  # a tab reused for ever grows: after SITE_PAGES the site starts anew

    async def page(self) -> Page:
        if self.tab is None or self.tab.is_closed():
            self.tab = await self.context.new_page()
            self.tab.on("popup", self.renderer._close_later)  # a popup: nobody reads it
            self.tab.on("response", self._main_response)
            self.tab.on("requestfailed", self._main_failure)
        return self.tab

    def _main_response(self, response: Response) -> None:
        """Keep the status of the main frame's document, or that the proxy refused it (a
        redirect the page's navigation followed to a refused address)."""
        job, request = self.job, response.request
        if job is None or not _main_navigation(request):
            return
        reason = response.headers.get(REFUSED_HEADER.lower())
        if reason is not None:
            job.blocked = _blocked(response.url, reason)
        elif response.status not in (204, 205) and not (  # 204: the page stays as it is
                300 <= response.status < 400 and "location" in response.headers):
            job.status = response.status

    def _main_failure(self, request: Request) -> None:
        """A main-frame navigation that failed because the proxy refused its tunnel."""
        job = self.job
        if job is None or not _main_navigation(request):
            return
        target = URL(request.url)
        if f"{target.raw_host}:{target.port}".lower() in job.budget.refused_hosts:
            job.blocked = _blocked(request.url, "the safety policy refused its address")

    async def route(self, route: Route, request: Request) -> None:
        try:
            await self._route(route, request)
        except Exception:  # a request left unanswered would hang: refuse it
            with contextlib.suppress(Exception):  # the page may be gone meanwhile
                await route.abort("failed")

    async def _route(self, route: Route, request: Request) -> None:
        job = self.job
        if job is None:
            await route.abort("blockedbyclient")
            return
        if request.is_navigation_request() and request.frame.parent_frame is None:
            if not job.served and _same_document(request.url, job.source.final_url):
                job.served = True
                await route.fulfill(status=200, headers=_document_headers(job.source),
                                    body=job.source.body)
                return
            # A navigation not taken is answered 204 No Content: the browser then stays on
            # the page it has (an aborted one would show its error page instead).
            job.navigations += 1
            if job.navigations > self.renderer.settings.max_redirects:
                await route.fulfill(status=204)
                return
            target = URL(request.url)
            try:
                await self.proxy.judge(parse_url(request.url))
            except (Refused, PipelineError) as exc:
                job.budget.refused += 1
                job.blocked = _blocked(request.url, exc.message if isinstance(
                    exc, PipelineError) else str(exc))
                await route.fulfill(status=204)
                return
            try:
                async with self.renderer.gate.slot(f"{target.raw_host}:{target.port}",
                                                   job.deadline):
                    pass
            except HostThrottled:  # its host asked for a pause beyond this URL's deadline
                await route.fulfill(status=204)
                return
            await route.continue_()
            return
        if request.resource_type in BLOCKED_TYPES:
            await route.abort("blockedbyclient")
            return
        await route.continue_()

    async def close(self) -> bool:
        """Close the context (within :data:`CLOSE_GRACE`) and the proxy; False when the
        context did not close in time (its browser is then to be abandoned)."""
        closed = True
        try:
            async with asyncio.timeout(CLOSE_GRACE):
                await self.context.close()
        except TimeoutError:
            closed = False
        except Exception:  # a context already gone with its browser
            pass
        await self.proxy.close()
        return closed


class _Browser:
    """One launched Chromium, its driver and its private directory."""

    def __init__(self, playwright: Playwright, browser: Browser, directory: str,
                 deny: PolicyProxy) -> None:
        self.playwright = playwright
        self.browser = browser
        self.directory = directory
        self.deny = deny
        self.leader = find_leader(MARKER_VARIABLE, directory)
        self.sites: OrderedDict[tuple[str, bool], list[_Site]] = OrderedDict()
        self.pages = 0
        self.crashed = False
        self.over_memory: int | None = None  # MiB it used when it was killed for it
        self._watch: asyncio.Task[None] | None = None
        browser.on("disconnected", self._disconnected)

    def watch_memory(self, limit_mb: int) -> None:
        """Kill the browser once its processes use more than ``limit_mb`` MiB together,
        looked at every :data:`MEMORY_POLL` seconds (during pages, not only between them:
        one page can take gigabytes): the pages in it fail, the next page starts anew."""
        async def watch() -> None:
            while not self.crashed:
                await asyncio.sleep(MEMORY_POLL)
                used = await asyncio.to_thread(lambda: memory_kib(self.processes()) // 1024)
                if used > limit_mb and not self.crashed:
                    log.warning("the browser uses %d MiB, over --render-max-memory %d: "
                                "killing it", used, limit_mb)
                    self.over_memory = used
                    self.crashed = True
                    kill_browser(self.leader, self.directory)

        self._watch = asyncio.ensure_future(watch())

    def _disconnected(self, _: object) -> None:
        self.crashed = True

    def alive(self) -> bool:
        """Still usable: connected, and its process still there (the disconnection may not
        have been reported yet when a page fails with it)."""
        if not self.crashed and not (self.browser.is_connected() and (
                self.leader is None or alive(self.leader))):
            self.crashed = True
        return not self.crashed

    def processes(self) -> list[int]:
        return browser_processes(self.leader, self.directory)

    def idle(self) -> Iterator[_Site]:
        for sites in self.sites.values():
            yield from sites

    def abandon(self) -> None:
        """Kill the browser and its driver now (a close would wait behind a flooded
        connection): the pages still in it fail as after a crash, the next page starts a
        new browser, and the connection ends instead of draining its backlog."""
        if not self.crashed:
            log.warning("the browser did not close in %g s: killing it", CLOSE_GRACE)
        self.crashed = True
        kill_browser(self.leader, self.directory)

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        sites = list(self.idle())
        self.sites.clear()
        for site in sites:
            if not self.crashed and not await site.close():
                self.abandon()
            elif self.crashed:
                await site.proxy.close()  # its context went with the browser
        for step in (self.browser.close, self.playwright.stop):
            try:
                async with asyncio.timeout(CLOSE_GRACE):
                    with contextlib.suppress(Exception):  # a browser or driver already gone
                        await step()
            except TimeoutError:
                self.abandon()
        await self.deny.close()
        kill_browser(self.leader, self.directory)  # what a crash or a hang left behind
        shutil.rmtree(self.directory, ignore_errors=True)


class Renderer:
    """Render fetched HTML pages in headless Chromium under the settings' limits.

    Use as an async context manager; :meth:`render` may be called concurrently (at most
    ``render_concurrency`` pages at once). ``gate`` is the fetcher's per-host politeness
    (shared, so the browser's navigations count with the fetcher's requests); ``resolver``
    answers the proxy's lookups (tests), judged by the policy like the fetcher's;
    ``credential_scope`` is the fetcher's (the user's cookies go to a page only when it allows
    the page's URL, and only while the page is on that URL's host).
    """

    def __init__(self, settings: RenderSettings, *, gate: HostGate | None = None,
                 resolver: AbstractResolver | None = None,
                 credential_scope: CredentialScope | None = None) -> None:
        self.settings = settings
        self.gate = gate or HostGate(settings.per_host, settings.rate)
        self.policy = NetworkPolicy.from_settings(settings)
        self.executable = check_rendering(settings)
        self._inner_resolver = resolver
        self._resolver: PolicyResolver | None = None
        self._credentials: tuple[RenderSettings, Credentials | None] | None = None
        self.credential_scope = credential_scope
        self._slots = asyncio.Semaphore(settings.render_concurrency)
        self._browser: _Browser | None = None
        self._starting = asyncio.Lock()  # taken after a slot, never before
        self._replacing = asyncio.Lock()  # taken before the slots, never after
        self._restart = False
        self._closed = False
        self._background: set[asyncio.Task[None]] = set()
        self.launches = 0

    async def __aenter__(self) -> Renderer:
        self._resolver = PolicyResolver(self.policy, self._inner_resolver,
                                        timeout=self.settings.connect_timeout)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closed = True
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        browser, self._browser = self._browser, None
        if browser is not None:
            await asyncio.shield(browser.close())
        if self._resolver is not None:
            await self._resolver.close()
            self._resolver = None

    def processes(self) -> list[int]:
        """The live processes of the current browser (none before the first page)."""
        return self._browser.processes() if self._browser is not None else []

    async def render(self, source: Source, budget_seconds: float) -> Rendered:
        """Render ``source`` within ``budget_seconds`` (what the URL's deadline has left once
        a page is free); raises ``PipelineError``: ``timeout``, ``too_large`` (the page
        downloaded more than ``render_max_bytes``), ``render`` (the browser failed or
        crashed), ``config`` (no browser can start)."""
        if self._closed or self._resolver is None:
            raise PipelineError("render", "the renderer is closed")
        if self._restart:
            await self._replace()
        async with self._slots:
            target = URL(source.final_url)
            async with self.gate.admit(f"{target.raw_host}:{target.port}"):
                loop = asyncio.get_running_loop()
                deadline = loop.time() + budget_seconds
                browser = await self._started()
                try:
                    async with asyncio.timeout_at(deadline):
                        return await self._render(browser, source, deadline)
                except TimeoutError:
                    raise PipelineError("timeout", f"fetch and render took longer than "
                                        f"{self.settings.timeout:g} s", retryable=True) from None
                except PipelineError:
                    raise
                except Exception as exc:
                    if browser.over_memory is not None:
                        raise PipelineError("render", f"the browser used {browser.over_memory}"
                                            f" MiB, more than render_max_memory_mb "
                                            f"({self.settings.render_max_memory_mb}), while "
                                            f"rendering: it was restarted") from None
                    if not browser.alive():
                        raise PipelineError("render", "the browser crashed while rendering "
                                                      "this page", retryable=True) from None
                    raise PipelineError("render", f"rendering failed: "
                                        f"{_first_line(exc)}") from None
                finally:
                    browser.pages += 1
                    self._check_health(browser)

    def credentials(self) -> Credentials | None:
        """The user's credentials (read again when the settings are replaced)."""
        if self._credentials is None or self._credentials[0] is not self.settings:
            self._credentials = (self.settings, Credentials.from_settings(self.settings))
        return self._credentials[1]

    async def _render(self, browser: _Browser, source: Source, deadline: float) -> Rendered:
        asked = URL(source.url)
        credentialed = (self.credentials() is not None
                        and (self.credential_scope is None or self.credential_scope.allows(asked))
                        and same_host(URL(source.final_url), asked))
        site = await self._site(browser, URL(source.final_url), credentialed)
        budget = PageBudget(self.settings.render_max_bytes, used=len(source.body))
        job = _Job(source, budget, deadline)
        site.job, site.proxy.budget = job, budget
        site.pages += 1
        keep = False
        try:
            page = await site.page()
            load = asyncio.ensure_future(self._load(page, job))
            over = asyncio.ensure_future(budget.exceeded.wait())
            try:
                await asyncio.wait([load, over], return_when=asyncio.FIRST_COMPLETED)
            finally:
                over.cancel()
                if not load.done():
                    load.cancel()
                    await asyncio.gather(load, return_exceptions=True)
            if budget.exceeded.is_set():
                raise PipelineError("too_large", f"the page downloaded more than "
                                    f"{self.settings.render_max_bytes} bytes while rendering")
            rendered = load.result()
            if job.blocked is not None:
                raise job.blocked
            if not 200 <= rendered.status < 300:  # the fetcher's rule for the page it fetches
                raise FetchError("http_status", f"HTTP {rendered.status} (after the page "
                                 f"navigated)", status=rendered.status,
                                 final_url=rendered.final_url)
            keep = True
            return rendered
        finally:
            site.job, site.proxy.budget = None, None
            if keep and not browser.crashed and site.pages < SITE_PAGES:
                self._shelve(browser, site, URL(source.final_url), credentialed)
            elif browser.crashed:
                await site.proxy.close()
            elif not await site.close():
                browser.abandon()

    async def _load(self, page: Page, job: _Job) -> Rendered:
        """Navigate, wait for the page to settle (within the cap), read it."""
        loop = asyncio.get_running_loop()
        remaining = job.deadline - loop.time()
        await page.goto(job.source.final_url, wait_until="commit",
                        timeout=max(1.0, remaining) * 1000)
        settled = False
        while True:  # a page that navigates on its own is waited for again, in its new document
            cap = min(self.settings.render_wait, job.deadline - loop.time() - READ_MARGIN)
            if cap <= 0:
                break
            try:
                settled = bool(await page.evaluate(SETTLE, cap * 1000))
                break
            except Exception as exc:
                if "context was destroyed" not in str(exc) and "navigat" not in str(exc):
                    raise
                await asyncio.sleep(0.05)
        html = (await _content(page, job.deadline)).encode("utf-8", "surrogatepass")
        if len(html) > self.settings.max_bytes:
            raise PipelineError("too_large", f"the rendered page is more than "
                                f"{self.settings.max_bytes} bytes (max_bytes)")
        return Rendered(html, page.url, job.budget.used, settled, job.budget.refused,
                        job.status)

    async def _site(self, browser: _Browser, url: URL, credentialed: bool) -> _Site:
        """An idle context of ``url``'s site, or a new one."""
        key = (f"{url.raw_host}:{url.port}", credentialed)
        idle = browser.sites.get(key)
        if idle:
            site = idle.pop()
            if not idle:
                del browser.sites[key]
            return site
        assert self._resolver is not None
        proxy = PolicyProxy(self.policy, self._resolver,
                            connect_timeout=self.settings.connect_timeout)
        port = await proxy.start()
        try:
            context = await browser.browser.new_context(
                proxy={"server": f"http://127.0.0.1:{port}"}, service_workers="block",
                accept_downloads=False, user_agent=self.settings.user_agent)
            site = _Site(context, proxy, self)
            await context.add_init_script(HOOKS)
            await context.route("**/*", site.route)
            credentials = self.credentials()
            if credentialed and credentials is not None:
                cookies = credentials.browser_cookies(url)
                if cookies:
                    await _set_cookies(context, await site.page(), url, cookies)
        except BaseException:
            await proxy.close()
            raise
        return site

    def _shelve(self, browser: _Browser, site: _Site, url: URL, credentialed: bool) -> None:
        """Keep ``site``'s context for its next page; close the least recently used idle
        ones past the bound."""
        key = (f"{url.raw_host}:{url.port}", credentialed)
        browser.sites.setdefault(key, []).append(site)
        browser.sites.move_to_end(key)
        limit = IDLE_CONTEXTS_PER_SLOT * self.settings.render_concurrency
        while sum(len(sites) for sites in browser.sites.values()) > limit:
            oldest_key, oldest = next(iter(browser.sites.items()))
            victim = oldest.pop(0)
            if not oldest:
                del browser.sites[oldest_key]
            self._later(self._close_site(browser, victim))

    async def _close_site(self, browser: _Browser, site: _Site) -> None:
        if not await site.close():
            browser.abandon()

    def _close_later(self, page: Page) -> None:
        self._later(_close_quietly(page))

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _check_health(self, browser: _Browser) -> None:
        """Ask for a new browser after a crash (a kill for its memory too) or after K pages."""
        if browser.crashed or browser.pages >= self.settings.render_restart_pages:
            self._restart = True

    async def _replace(self) -> None:
        """Close the browser once no page is rendering in it; the next page starts another."""
        async with self._replacing:
            if not self._restart:
                return
            held = 0
            try:
                for _ in range(self.settings.render_concurrency):
                    await self._slots.acquire()
                    held += 1
                async with self._starting:
                    browser, self._browser = self._browser, None
                    self._restart = False
                    if browser is not None:
                        await browser.close()
            finally:
                for _ in range(held):
                    self._slots.release()

    async def _started(self) -> _Browser:
        async with self._starting:
            if self._browser is not None and not self._browser.alive():
                old, self._browser = self._browser, None
                await old.close()
            if self._browser is None:
                self._browser = await self._launch()
            return self._browser

    async def _launch(self) -> _Browser:
        from playwright.async_api import Error as PlaywrightError

        assert self._resolver is not None
        directory = tempfile.mkdtemp(prefix=MARKER_PREFIX)
        deny = PolicyProxy(self.policy, self._resolver, deny_all=True)
        playwright = None
        try:
            port = await deny.start()
            playwright = await _start_driver(directory)
            env: dict[str, str | float | bool] = {
                **os.environ, "HOME": directory, "XDG_CONFIG_HOME": directory,
                "XDG_CACHE_HOME": directory, MARKER_VARIABLE: directory}
            browser = await playwright.chromium.launch(
                executable_path=self.executable, env=env, timeout=LAUNCH_TIMEOUT * 1000,
                chromium_sandbox=hasattr(os, "geteuid") and os.geteuid() != 0,
                args=[*CHROMIUM_ARGS, f"--proxy-server=http://127.0.0.1:{port}",
                      "--proxy-bypass-list=<-loopback>"])
        except BaseException as exc:
            if playwright is not None:
                with contextlib.suppress(Exception):
                    await playwright.stop()
            await deny.close()
            kill_browser(find_leader(MARKER_VARIABLE, directory), directory)
            shutil.rmtree(directory, ignore_errors=True)
            if isinstance(exc, PlaywrightError):
                raise PipelineError("render", f"cannot start the browser {self.executable}: "
                                    f"{_first_line(exc)}") from None
            raise
        self.launches += 1
        started = _Browser(playwright, browser, directory, deny)
        started.watch_memory(self.settings.render_max_memory_mb)
        return started


async def _start_driver(directory: str) -> Playwright:
    """Start Playwright's driver in a session of its own: the terminal's Ctrl-C and a
    SIGTERM to our process group then reach us alone, and the browser stays up until we
    have finished the pages in flight and close it."""
    from playwright.async_api import async_playwright

    wrapper = Path(directory) / "driver"
    try:
        from playwright._impl._driver import compute_driver_executable

        node = os.environ.get("PLAYWRIGHT_NODEJS_PATH") or compute_driver_executable()[0]
    except Exception:  # a Playwright without it: the driver stays in our session
        return await async_playwright().start()
    wrapper.write_text(f"#!{sys.executable} -S\nimport os, sys\nos.setsid()\n"
                       f"os.execv({node!r}, [{node!r}, *sys.argv[1:]])\n")
    wrapper.chmod(0o700)
    before = os.environ.get("PLAYWRIGHT_NODEJS_PATH")
    os.environ["PLAYWRIGHT_NODEJS_PATH"] = str(wrapper)
    try:
        return await async_playwright().start()
    finally:
        if before is None:
            os.environ.pop("PLAYWRIGHT_NODEJS_PATH", None)
        else:
            os.environ["PLAYWRIGHT_NODEJS_PATH"] = before


async def _set_cookies(context: BrowserContext, page: Page, url: URL,
                       cookies: list[Cookie]) -> None:
    """Give the context ``cookies`` where the fetcher would send them: host-only, bound to
    ``url``'s scheme and port (the browser runs with scheme- and port-bound cookies, so
    another port of the host gets none), HttpOnly kept. Set through the DevTools protocol:
    Playwright's ``add_cookies`` cannot name the source port."""
    session = await context.new_cdp_session(page)
    try:
        for cookie in cookies:
            await session.send("Network.setCookie", {
                "name": cookie.name, "value": cookie.value,
                "url": str(url.with_path(cookie.path or "/").with_query(None)
                           .with_fragment(None)),
                "path": cookie.path or "/", "secure": cookie.secure,
                "httpOnly": cookie.http_only, "sourcePort": url.port or -1,
                "sourceScheme": "Secure" if url.scheme == "https" else "NonSecure"})
    finally:
        with contextlib.suppress(Exception):
            await session.detach()


def _main_navigation(request: Request) -> bool:
    try:
        return request.is_navigation_request() and request.frame.parent_frame is None
    except Exception:  # a request of no frame (a worker's)
        return False


def _blocked(url: str, reason: str) -> FetchError:
    return FetchError("blocked", f"the page navigated to {url[:200]}, which is refused: "
                      f"{reason}", final_url=url)


def _same_document(requested: str, expected: str) -> bool:
    """Whether the browser's navigation is to the page we fetched (a navigation the previous
    page of the tab left behind is not)."""
    try:
        return URL(requested).with_fragment(None) == URL(expected).with_fragment(None)
    except ValueError:
        return False


def _document_headers(source: Source) -> dict[str, str]:
    media_type = source.media_type or "text/html"
    headers = {"content-type": media_type + (f"; charset={source.charset}"
                                             if source.charset else "")}
    for name in ("content-security-policy", "content-language"):
        if name in source.headers:
            headers[name] = source.headers[name]
    return headers


async def _content(page: Page, deadline: float) -> str:
    """The page's DOM as HTML; a navigation under way is waited for (a form the page
    submits at the last moment), within the deadline."""
    loop = asyncio.get_running_loop()
    for _ in range(3):
        try:
            return await page.content()
        except Exception as exc:
            if "navigating" not in str(exc):
                raise
            with contextlib.suppress(Exception):
                await page.wait_for_load_state(
                    "domcontentloaded", timeout=max(0.1, deadline - loop.time()) * 1000)
    return await page.content()


async def _close_quietly(page: Page) -> None:
    with contextlib.suppress(Exception):
        await page.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


"""Firecrawl: ``POST {FIRECRAWL_API_URL}/v2/search`` and ``/v2/scrape`` with a Bearer key
(optional for a self-hosted instance; ``FIRECRAWL_API_VERSION=v1`` for older ones).

Search takes ``query``, ``limit`` and ``tbs`` (``qdr:d``/``w``/``m``/``y``) and answers
``data.web`` (v2; v1: ``data``) rows with ``url``, ``title``, ``description``. Scrape takes
one ``url`` with ``formats: ["markdown"]`` and answers ``data.markdown`` and
``data.metadata`` (``title``, ``sourceURL``, ``url``, ``statusCode``, ``contentType``,
``error``...; ``title``, ``description`` and ``language`` may be strings or lists of them).
A 200 answer with ``success: false`` is a failure like an error status.

Crawl is an async job: ``POST /v2/crawl`` (``url``, ``limit``, ``maxDiscoveryDepth`` — v1:
``maxDepth`` —, ``includePaths`` / ``excludePaths`` as path regular expressions,
``scrapeOptions``) answers ``id``; ``GET /v2/crawl/{id}`` answers ``status`` (``scraping``,
``completed``, ``failed``, ``cancelled``), ``total``, ``completed`` and ``data`` (scrape
results, as above), with ``next`` when the data continues on another page; ``DELETE
/v2/crawl/{id}`` stops a job. Map is one call: ``POST /v2/map`` (``url``, ``limit``,
``sitemap``, ``includeSubdomains``) answers ``links``: objects with ``url``, ``title``,
``description`` (v1: bare URLs).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from pipeline.core.models import ExtractOptions, Record
from pipeline.core.slices import VendorSettings
from pipeline.providers.base import CrawlOptions, CrawlPage, MapOptions, SearchOptions, SearchPage
from pipeline.providers.common import (
    capped_count,
    dig,
    first_text,
    glob_regex,
    path_filter,
    per_url,
    rename_rows,
    results_list,
    site_query,
    unsupported,
    vendor_record,
)
from pipeline.providers.http import (
    HttpProvider,
    VendorError,
    env_value,
    join_url,
    vendor_reason,
)

DEFAULT_BASE_URL = "https://api.firecrawl.dev"
MAX_LIMIT = 100
SCRAPE_CONCURRENCY = 4
_TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
POLL_INTERVAL = 2.0  # seconds between two looks at a crawl job
MAP_LIMIT = 5_000
_RUNNING = frozenset({"scraping", "pending", "queued", "running"})


class FirecrawlProvider(HttpProvider):
    name = "firecrawl"
    base_url_env = "FIRECRAWL_API_URL"
    default_base_url = DEFAULT_BASE_URL
    key_env = ("FIRECRAWL_API_KEY",)

    def __init__(self, settings: VendorSettings, env: Mapping[str, str], *,
                 poll_interval: float = POLL_INTERVAL, **client_options: Any):
        super().__init__(settings, env, **client_options)
        self.self_hosted = bool(env_value(env, self.base_url_env))
        self.version = env_value(env, "FIRECRAWL_API_VERSION") or "v2"
        self.poll_interval = poll_interval
        self._sleep: Callable[[float], Awaitable[None]] = \
            client_options.get("sleep") or asyncio.sleep

    def is_configured(self) -> bool:
        return bool(self.key or self.self_hosted)  # a self-hosted instance may need no key

    def _url(self, endpoint: str) -> str:
        return join_url(self.base_url, f"/{self.version}/{endpoint}")

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        body: dict[str, Any] = {
            "query": site_query(query, options.include_domains, options.exclude_domains)}
        warnings: list[str] = []
        if count := capped_count(options.max_results, MAX_LIMIT, warnings):
            body["limit"] = count
        if options.time_range:
            body["tbs"] = _TBS[options.time_range]
        if options.region:
            body["country"] = options.region[:2].upper()
        warnings += unsupported(options, "language")
        data = await self.http.request_json("POST", self._url("search"), json_body=body,
                                            headers=self.bearer())
        if dig(data, "success") is False:
            raise VendorError(self.name, vendor_reason(dig(data, "error"), "search failed"),
                              fatal=True)
        found = dig(data, "data")
        rows = results_list(self.name, data, "data") if isinstance(found, list) or found is None \
            else results_list(self.name, data, "data", "web")
        return SearchPage(rows=rename_rows(rows, title="title", url="url",
                                           snippet=("description", "snippet")),
                          warnings=warnings)

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        return await per_url(urls, lambda url: self._scrape(url, options), self.name,
                             limit=SCRAPE_CONCURRENCY)

    async def _scrape(self, url: str, options: ExtractOptions) -> Record:
        data = await self.http.request_json(
            "POST", self._url("scrape"), headers=self.bearer(),
            json_body={"url": url, "formats": ["markdown"], "onlyMainContent": True})
        if dig(data, "success") is False:
            raise VendorError(self.name, vendor_reason(dig(data, "error"), "scrape failed"))
        page = dig(data, "data")
        meta = dig(page, "metadata") or {}
        if not isinstance(meta, dict):
            meta = {}
        status = meta.get("statusCode")
        if isinstance(status, int) and status >= 400:
            reason = vendor_reason(meta.get("error"))
            raise VendorError(self.name, f"the page answered HTTP {status}"
                              + (f" ({reason})" if reason else ""))
        return vendor_record(
            url, self.name, options, self.policy, content=dig(page, "markdown"), fmt="markdown",
            final_url=first_text(meta.get("url")) or first_text(meta.get("sourceURL")),
            title=first_text(meta.get("title")), status=status,
            content_type=first_text(meta.get("contentType")),
            metadata={"description": first_text(meta.get("description")),
                      "lang": first_text(meta.get("language")),
                      "published": first_text(meta.get("publishedTime"))})

    async def crawl(self, url: str, options: CrawlOptions) -> CrawlPage:
        """Start a crawl job and poll it until it ends or the deadline comes (then the job
        is stopped and the pages it had are the answer)."""
        depth_key = "maxDiscoveryDepth" if self.version == "v2" else "maxDepth"
        body: dict[str, Any] = {
            "url": url, "limit": options.max_pages, depth_key: options.max_depth,
            "scrapeOptions": {"formats": ["markdown"], "onlyMainContent": True}}
        if options.include:
            body["includePaths"] = [glob_regex(p) for p in options.include]
        if options.exclude:
            body["excludePaths"] = [glob_regex(p) for p in options.exclude]
        started = await self.http.request_json("POST", self._url("crawl"), json_body=body,
                                               headers=self.bearer())
        job = dig(started, "id")
        if dig(started, "success") is False or not isinstance(job, str) or not job.strip():
            raise VendorError(self.name, vendor_reason(dig(started, "error"),
                                                       "the crawl did not start"), fatal=True)
        status_url = self._url(f"crawl/{quote(job, safe='')}")
        warnings: list[str] = []
        # the deadline in polls, not in wall time: the kernel cuts the call itself past it
        for polls_left in range(max(1, math.floor(options.deadline / self.poll_interval)), 0, -1):
            data = await self.http.request_json("GET", status_url, headers=self.bearer())
            status = dig(data, "status")
            if status == "failed":
                raise VendorError(self.name, vendor_reason(dig(data, "error"), "the crawl failed"))
            if status not in _RUNNING:
                if status == "cancelled":
                    warnings.append("the crawl job was cancelled; the pages it had")
                break
            if polls_left == 1:
                warnings.append(f"deadline of {options.deadline:.0f} s reached: the crawl was "
                                f"stopped with {dig(data, 'completed') or 0} page(s) read")
                await self._cancel(status_url)
                break
            await self._sleep(self.poll_interval)
        rows = await self._all_data(data)
        return CrawlPage(pages=[self._crawl_row(item) for item in rows], warnings=warnings)

    async def _cancel(self, status_url: str) -> None:
        with contextlib.suppress(VendorError):  # best effort: we answer with what we have
            await self.http.request("DELETE", status_url, headers=self.bearer())

    async def _all_data(self, data: Any) -> list[Any]:
        """``data`` of a job status and of every ``next`` page after it — on the same API
        host only: the key never goes to a URL an answer names elsewhere."""
        rows = list(results_list(self.name, data, "data"))
        seen: set[str] = set()
        while isinstance(follow := dig(data, "next"), str) and follow not in seen \
                and follow.startswith(self.base_url.rstrip("/") + "/"):
            seen.add(follow)
            data = await self.http.request_json("GET", follow, headers=self.bearer())
            rows.extend(results_list(self.name, data, "data"))
        return rows

    @staticmethod
    def _crawl_row(item: Any) -> Any:
        if not isinstance(item, dict):
            return item  # the kernel refuses it
        found = item.get("metadata")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        status = meta.get("statusCode")
        failed = isinstance(status, int) and status >= 400
        return {"url": first_text(meta.get("sourceURL")) or first_text(meta.get("url")),
                "final_url": first_text(meta.get("url")), "title": first_text(meta.get("title")),
                "content": None if failed else item.get("markdown"),
                "error": (f"the page answered HTTP {status}" if failed
                          else first_text(meta.get("error")))}

    async def map(self, url: str, options: MapOptions) -> CrawlPage:
        """The site's URLs from Firecrawl's map (sitemap and links); the globs are applied
        to its answer, and it knows no depth."""
        data = await self.http.request_json(
            "POST", self._url("map"), headers=self.bearer(),
            json_body={"url": url, "limit": min(options.limit, MAP_LIMIT),
                       "includeSubdomains": False})
        if dig(data, "success") is False:
            raise VendorError(self.name, vendor_reason(dig(data, "error"), "map failed"),
                              fatal=True)
        keep = path_filter(options.include, options.exclude)
        rows = []
        for item in results_list(self.name, data, "links"):
            row = {"url": item} if isinstance(item, str) else item
            found = dig(row, "url")
            if isinstance(found, str) and keep(found):
                rows.append({"url": found, "title": first_text(dig(row, "title"))})
        warnings = [] if options.max_depth >= 2 else ["max_depth is not supported; ignored"]
        return CrawlPage(pages=rows[: options.limit], warnings=warnings)

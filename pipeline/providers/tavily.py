"""Tavily: ``POST {TAVILY_BASE_URL}/search`` and ``/extract`` with a Bearer key.

Search takes ``max_results`` (at most 20), ``time_range``, ``include_domains`` and
``exclude_domains``; rows carry ``title``, ``url``, ``content`` (the snippet) and ``score``.
Extract takes up to 20 ``urls`` per call and answers ``results`` (``url``, ``raw_content``)
and ``failed_results`` (``url``, ``error``; some renderings of the docs list bare URLs, so
both are read). Errors come as ``{"detail": {"error": ...}}``; besides 401/429/5xx Tavily
uses 432 (plan limit) and 433 (pay-as-you-go limit): the key is unusable until then.

Crawl and map are one call each: ``POST /crawl`` and ``/map`` take ``url``, ``max_depth``
(1 to 5), ``limit``, ``select_paths`` / ``exclude_paths`` (path regular expressions) and
``timeout`` (seconds; crawl also ``format`` and ``extract_depth``); crawl answers
``results`` of ``url`` and ``raw_content``, map ``results`` of bare URLs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.core.models import ExtractOptions, Record
from pipeline.core.slices import VendorSettings
from pipeline.providers.base import CrawlOptions, CrawlPage, MapOptions, SearchOptions, SearchPage
from pipeline.providers.common import (
    capped_count,
    failed_record,
    glob_regex,
    in_input_order,
    present,
    rename_rows,
    results_list,
    unsupported,
    url_matcher,
    vendor_record,
)
from pipeline.providers.http import HttpProvider, join_url, vendor_reason

DEFAULT_BASE_URL = "https://api.tavily.com"
MAX_RESULTS = 20
EXTRACT_BATCH = 20
MAX_CRAWL_DEPTH = 5
MAX_CRAWL_TIMEOUT = 150  # seconds Tavily lets one crawl or map run
LIMIT_CAUSES = {432: "plan usage limit exceeded", 433: "pay-as-you-go limit exceeded"}


class TavilyProvider(HttpProvider):
    name = "tavily"
    base_url_env = "TAVILY_BASE_URL"
    default_base_url = DEFAULT_BASE_URL
    key_env = ("TAVILY_API_KEY",)

    def __init__(self, settings: VendorSettings, env: Mapping[str, str], **client_options: Any):
        client_options.setdefault("status_causes", LIMIT_CAUSES)
        super().__init__(settings, env, **client_options)

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        warnings: list[str] = []
        body = {"query": query, **present(
            max_results=capped_count(options.max_results, MAX_RESULTS, warnings),
            time_range=options.time_range, include_domains=options.include_domains,
            exclude_domains=options.exclude_domains)}
        warnings += unsupported(options, "language", "region")
        data = await self.http.request_json("POST", join_url(self.base_url, "/search"),
                                            json_body=body, headers=self.bearer())
        rows = rename_rows(results_list(self.name, data, "results"), title="title", url="url",
                           snippet="content", score="score", published="published_date")
        return SearchPage(rows=rows, warnings=warnings)

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        by_url: dict[str, Record] = {}
        for start in range(0, len(urls), EXTRACT_BATCH):
            batch = list(urls[start:start + EXTRACT_BATCH])
            data = await self.http.request_json(
                "POST", join_url(self.base_url, "/extract"), headers=self.bearer(),
                json_body={"urls": batch, "format": options.format, "extract_depth": "basic"})
            # Tavily echoes the URL it read, possibly spelled a little differently
            match = url_matcher(batch)
            for item in results_list(self.name, data, "results"):
                url = match(item.get("url") if isinstance(item, dict) else None)
                if url is not None and url not in by_url:
                    by_url[url] = vendor_record(url, self.name, options, self.policy,
                                                content=item.get("raw_content"))
            for item in results_list(self.name, data, "failed_results"):
                failed = item.get("url") if isinstance(item, dict) else item
                url = match(failed)
                if url is not None and url not in by_url:
                    error = item.get("error") if isinstance(item, dict) else None
                    cause = vendor_reason(error, "extraction failed")
                    by_url[url] = failed_record(url, self.name, cause)
        return in_input_order(urls, by_url, self.name)

    def _walk_body(self, url: str, limit: int, options: CrawlOptions | MapOptions,
                   warnings: list[str]) -> dict[str, Any]:
        """The request of a crawl or a map: Tavily counts depth from 1 (the start page's
        links), so depth 0 is the start page alone (limit 1)."""
        if options.max_depth > MAX_CRAWL_DEPTH:
            warnings.append(f"max_depth is at most {MAX_CRAWL_DEPTH}; asked for "
                            f"{options.max_depth}")
        return {"url": url, "max_depth": min(max(options.max_depth, 1), MAX_CRAWL_DEPTH),
                "limit": 1 if options.max_depth == 0 else limit,
                "timeout": min(max(int(options.deadline), 10), MAX_CRAWL_TIMEOUT),
                **present(select_paths=[glob_regex(p) for p in options.include],
                          exclude_paths=[glob_regex(p) for p in options.exclude])}

    async def crawl(self, url: str, options: CrawlOptions) -> CrawlPage:
        warnings: list[str] = []
        body = {**self._walk_body(url, options.max_pages, options, warnings),
                "format": "markdown", "extract_depth": "basic"}
        data = await self.http.request_json("POST", join_url(self.base_url, "/crawl"),
                                            json_body=body, headers=self.bearer())
        rows = [{"url": item.get("url"), "content": item.get("raw_content"),
                 "title": item.get("title")} if isinstance(item, dict) else item
                for item in results_list(self.name, data, "results")]
        return CrawlPage(pages=rows, warnings=warnings)

    async def map(self, url: str, options: MapOptions) -> CrawlPage:
        warnings: list[str] = []
        data = await self.http.request_json(
            "POST", join_url(self.base_url, "/map"), headers=self.bearer(),
            json_body=self._walk_body(url, options.limit, options, warnings))
        rows = [{"url": item} if isinstance(item, str) else item
                for item in results_list(self.name, data, "results")]
        return CrawlPage(pages=rows, warnings=warnings)

"""Tavily: ``POST {TAVILY_BASE_URL}/search`` and ``/extract`` with a Bearer key.

Search takes ``max_results`` (at most 20), ``time_range``, ``include_domains`` and
``exclude_domains``; rows carry ``title``, ``url``, ``content`` (the snippet) and ``score``.
Extract takes up to 20 ``urls`` per call and answers ``results`` (``url``, ``raw_content``)
and ``failed_results`` (``url``, ``error``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.models import Record
from pipeline.providers.base import ExtractOptions, SearchOptions, SearchPage
from pipeline.providers.common import (
    capped_count,
    failed_record,
    in_input_order,
    present,
    rename_rows,
    results_list,
    unsupported,
    vendor_record,
)
from pipeline.providers.http import HttpProvider, join_url, vendor_reason

DEFAULT_BASE_URL = "https://api.tavily.com"
MAX_RESULTS = 20
EXTRACT_BATCH = 20


class TavilyProvider(HttpProvider):
    name = "tavily"
    base_url_env = "TAVILY_BASE_URL"
    default_base_url = DEFAULT_BASE_URL
    key_env = ("TAVILY_API_KEY",)

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
            wanted = set(batch)
            for item in results_list(self.name, data, "results"):
                url = item.get("url") if isinstance(item, dict) else None
                if url in wanted and url not in by_url:
                    by_url[url] = vendor_record(url, self.name, options, self.policy,
                                                content=item.get("raw_content"))
            for item in results_list(self.name, data, "failed_results"):
                url = item.get("url") if isinstance(item, dict) else None
                if url in wanted and url not in by_url:
                    cause = vendor_reason(item.get("error"), "extraction failed")
                    by_url[url] = failed_record(url, self.name, cause)
        return in_input_order(urls, by_url, self.name)

"""Tavily: ``POST {TAVILY_BASE_URL}/search`` and ``/extract`` with a Bearer key.

Search takes ``max_results`` (at most 20), ``time_range``, ``include_domains`` and
``exclude_domains``; rows carry ``title``, ``url``, ``content`` (the snippet) and ``score``.
Extract takes up to 20 ``urls`` per call and answers ``results`` (``url``, ``raw_content``)
and ``failed_results`` (``url``, ``error``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.models import Record
from pipeline.providers.base import ExtractOptions, SearchOptions, SearchPage
from pipeline.providers.common import (
    failed_record,
    in_input_order,
    rename_rows,
    results_list,
    vendor_record,
)
from pipeline.providers.http import HttpProvider, env_value, join_url
from pipeline.settings import Settings

DEFAULT_BASE_URL = "https://api.tavily.com"
MAX_RESULTS = 20
EXTRACT_BATCH = 20


class TavilyProvider(HttpProvider):
    name = "tavily"

    def __init__(self, settings: Settings, env: Mapping[str, str], **client_options: Any):
        super().__init__(settings, env, **client_options)
        self.base_url = env_value(env, "TAVILY_BASE_URL") or DEFAULT_BASE_URL
        self.key = env_value(env, "TAVILY_API_KEY")

    def is_configured(self) -> bool:
        return bool(self.key)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key or ''}"}

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        warnings = []
        body: dict[str, Any] = {"query": query}
        if options.max_results:
            body["max_results"] = min(options.max_results, MAX_RESULTS)
            if options.max_results > MAX_RESULTS:
                warnings.append(f"at most {MAX_RESULTS} results per query; "
                                f"asked for {options.max_results}")
        if options.time_range:
            body["time_range"] = options.time_range
        if options.include_domains:
            body["include_domains"] = options.include_domains
        if options.exclude_domains:
            body["exclude_domains"] = options.exclude_domains
        warnings.extend(f"{option} is not supported; ignored"
                        for option in ("language", "region") if getattr(options, option))
        data = await self.http.request_json("POST", join_url(self.base_url, "/search"),
                                            json_body=body, headers=self._headers())
        rows = rename_rows(results_list(self.name, data, "results"), title="title", url="url",
                           snippet="content", score="score", published="published_date")
        return SearchPage(rows=rows, warnings=warnings)

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        by_url: dict[str, Record] = {}
        for start in range(0, len(urls), EXTRACT_BATCH):
            batch = list(urls[start:start + EXTRACT_BATCH])
            data = await self.http.request_json(
                "POST", join_url(self.base_url, "/extract"), headers=self._headers(),
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
                    cause = item.get("error") if isinstance(item.get("error"), str) else None
                    by_url[url] = failed_record(url, self.name, cause or "extraction failed")
        return in_input_order(urls, by_url, self.name)

"""Brave Search API: ``GET {BRAVE_BASE_URL}/res/v1/web/search`` with the
``X-Subscription-Token`` header; results under ``web.results``; ``count`` at most 20;
``freshness`` ``pd``/``pw``/``pm``/``py``; ``country`` and ``search_lang``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.providers.base import SearchOptions, SearchPage
from pipeline.providers.common import rename_rows, results_list, site_query, strip_tags
from pipeline.providers.http import HttpProvider, env_value, join_url
from pipeline.settings import Settings

DEFAULT_BASE_URL = "https://api.search.brave.com"
MAX_COUNT = 20
_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


class BraveProvider(HttpProvider):
    name = "brave"

    def __init__(self, settings: Settings, env: Mapping[str, str], **client_options: Any):
        super().__init__(settings, env, **client_options)
        self.base_url = env_value(env, "BRAVE_BASE_URL") or DEFAULT_BASE_URL
        self.key = env_value(env, "BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY")

    def is_configured(self) -> bool:
        return bool(self.key)

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        warnings = []
        params: dict[str, str] = {
            "q": site_query(query, options.include_domains, options.exclude_domains)}
        if options.max_results:
            params["count"] = str(min(options.max_results, MAX_COUNT))
            if options.max_results > MAX_COUNT:
                warnings.append(f"at most {MAX_COUNT} results per query; "
                                f"asked for {options.max_results}")
        if options.time_range:
            params["freshness"] = _FRESHNESS[options.time_range]
        if options.region:
            params["country"] = options.region[:2].upper()
        if options.language:
            params["search_lang"] = options.language.split("-")[0].split("_")[0].lower()
        headers = {"Accept": "application/json", "X-Subscription-Token": self.key or ""}
        data = await self.http.request_json(
            "GET", join_url(self.base_url, "/res/v1/web/search"), params=params,
            headers=headers)
        results = results_list(self.name, data, "web", "results")
        rows = rename_rows(results, title="title", url="url", snippet="description",
                           published=("page_age", "age"))
        for row in rows:
            if isinstance(row, dict):
                row["snippet"] = strip_tags(row["snippet"])  # Brave marks matches with <strong>
        return SearchPage(rows=rows, warnings=warnings)

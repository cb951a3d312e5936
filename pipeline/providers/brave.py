"""Brave Search API: ``GET {BRAVE_BASE_URL}/res/v1/web/search`` with the
``X-Subscription-Token`` header; results under ``web.results``; ``count`` at most 20;
``freshness`` ``pd``/``pw``/``pm``/``py``; ``country`` and ``search_lang``.
"""

from __future__ import annotations

from pipeline.providers.base import SearchOptions, SearchPage
from pipeline.providers.common import (
    capped_count,
    rename_rows,
    results_list,
    site_query,
    strip_tags,
)
from pipeline.providers.http import HttpProvider, join_url

DEFAULT_BASE_URL = "https://api.search.brave.com"
MAX_COUNT = 20
_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


class BraveProvider(HttpProvider):
    name = "brave"
    base_url_env = "BRAVE_BASE_URL"
    default_base_url = DEFAULT_BASE_URL
    key_env = ("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY")

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        warnings: list[str] = []
        params: dict[str, str] = {
            "q": site_query(query, options.include_domains, options.exclude_domains)}
        if count := capped_count(options.max_results, MAX_COUNT, warnings):
            params["count"] = str(count)
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

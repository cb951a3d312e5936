"""SearXNG (self-hosted): ``GET {SEARXNG_URL}/search?format=json``; the snippet is in
``content``; a 403 means the instance has the JSON format disabled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.core.slices import VendorSettings
from pipeline.providers.base import SearchOptions, SearchPage
from pipeline.providers.common import rename_rows, results_list, site_query
from pipeline.providers.http import HttpProvider, join_url

JSON_DISABLED = ("JSON output is disabled on this instance: add 'json' to search.formats "
                 "in its settings.yml and restart it")


class SearxngProvider(HttpProvider):
    name = "searxng"
    base_url_env = "SEARXNG_URL"

    def __init__(self, settings: VendorSettings, env: Mapping[str, str], **client_options: Any):
        client_options.setdefault("status_causes", {403: JSON_DISABLED})
        super().__init__(settings, env, **client_options)

    def is_configured(self) -> bool:
        return bool(self.base_url)

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        warnings: list[str] = []
        params = {"q": site_query(query, options.include_domains, options.exclude_domains),
                  "format": "json"}
        if options.time_range:
            # The API page lists day/month/year, but the web adapter also accepts "week";
            # engines without time-range support ignore it either way.
            params["time_range"] = options.time_range
        if options.language:
            language = options.language.replace("_", "-")
            if options.region and "-" not in language:
                language = f"{language}-{options.region[:2].upper()}"
            params["language"] = language
        elif options.region:
            warnings.append("region alone is not supported (give a language too); ignored")
        data = await self.http.request_json(
            "GET", join_url(self.base_url or "", "/search"), params=params,
            headers={"Accept": "application/json"})
        results = results_list(self.name, data, "results")
        rows = rename_rows(results, title="title", url="url", snippet="content", score="score",
                           published="publishedDate")
        return SearchPage(rows=rows, warnings=warnings)

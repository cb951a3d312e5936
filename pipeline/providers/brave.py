"""Brave Search API: ``GET {BRAVE_BASE_URL}/res/v1/web/search`` with the
``X-Subscription-Token`` header; results under ``web.results``; ``count`` at most 20;
``freshness`` ``pd``/``pw``/``pm``/``py``; ``country`` and ``search_lang``.

``search_lang`` takes Brave's own codes, mostly ISO 639-1 but not all: Japanese is ``jp``,
Portuguese and Chinese need a variant (``pt-br``/``pt-pt``, ``zh-hans``/``zh-hant``) and
British English may be ``en-gb``; :func:`search_lang` maps the usual tags onto them.
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
# Tags whose region or script Brave keeps; any other tag is reduced to its language.
_REGIONAL_LANG = {"en-gb": "en-gb", "pt-br": "pt-br", "pt-pt": "pt-pt", "zh-hans": "zh-hans",
                  "zh-cn": "zh-hans", "zh-sg": "zh-hans", "zh-hant": "zh-hant",
                  "zh-tw": "zh-hant", "zh-hk": "zh-hant"}
# Languages Brave spells its own way (or only knows in one variant).
_BRAVE_LANG = {"ja": "jp", "pt": "pt-pt", "zh": "zh-hans", "no": "nb"}


def search_lang(language: str) -> str:
    """Brave's ``search_lang`` for a language tag such as ``en``, ``pt-BR`` or ``ja``."""
    tag = language.lower().replace("_", "-")
    if tag in _REGIONAL_LANG:
        return _REGIONAL_LANG[tag]
    primary = tag.split("-")[0]
    return _BRAVE_LANG.get(primary, primary)


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
            params["search_lang"] = search_lang(options.language)
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

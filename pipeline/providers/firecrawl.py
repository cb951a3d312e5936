"""Firecrawl: ``POST {FIRECRAWL_API_URL}/v2/search`` and ``/v2/scrape`` with a Bearer key
(optional for a self-hosted instance; ``FIRECRAWL_API_VERSION=v1`` for older ones).

Search takes ``query``, ``limit`` and ``tbs`` (``qdr:d``/``w``/``m``/``y``) and answers
``data.web`` (v2; v1: ``data``) rows with ``url``, ``title``, ``description``. Scrape takes
one ``url`` with ``formats: ["markdown"]`` and answers ``data.markdown`` and
``data.metadata`` (``title``, ``sourceURL``, ``url``, ``statusCode``, ``contentType``,
``error``...; ``title``, ``description`` and ``language`` may be strings or lists of them).
A 200 answer with ``success: false`` is a failure like an error status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.core.models import ExtractOptions, Record
from pipeline.core.slices import VendorSettings
from pipeline.providers.base import SearchOptions, SearchPage
from pipeline.providers.common import (
    capped_count,
    dig,
    first_text,
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


class FirecrawlProvider(HttpProvider):
    name = "firecrawl"
    base_url_env = "FIRECRAWL_API_URL"
    default_base_url = DEFAULT_BASE_URL
    key_env = ("FIRECRAWL_API_KEY",)

    def __init__(self, settings: VendorSettings, env: Mapping[str, str], **client_options: Any):
        super().__init__(settings, env, **client_options)
        self.self_hosted = bool(env_value(env, self.base_url_env))
        self.version = env_value(env, "FIRECRAWL_API_VERSION") or "v2"

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

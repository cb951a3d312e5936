"""Jina: search (``GET {JINA_SEARCH_URL}/?q=``, key required) and the reader
(``POST {JINA_READER_URL}/`` with ``{"url": ...}``, key optional but rate-limited without).

Both answer JSON when asked with ``Accept: application/json``: ``{"code", "status",
"data"}`` where search's ``data`` is a list of ``title``/``url``/``description`` rows and the
reader's is one page (``title``, ``url``, ``content``, ``description``, ``publishedTime``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.models import Record
from pipeline.providers.base import ExtractOptions, SearchOptions, SearchPage
from pipeline.providers.common import (
    dig,
    per_url,
    rename_rows,
    results_list,
    site_query,
    unsupported,
    vendor_record,
)
from pipeline.providers.http import HttpProvider, VendorError, env_value, join_url
from pipeline.settings import Settings

DEFAULT_READER_URL = "https://r.jina.ai"
DEFAULT_SEARCH_URL = "https://s.jina.ai"
READ_CONCURRENCY = 4


class JinaProvider(HttpProvider):
    name = "jina"
    key_env = ("JINA_API_KEY",)

    def __init__(self, settings: Settings, env: Mapping[str, str], **client_options: Any):
        super().__init__(settings, env, **client_options)
        self.reader_url = env_value(env, "JINA_READER_URL") or DEFAULT_READER_URL
        self.search_url = env_value(env, "JINA_SEARCH_URL") or DEFAULT_SEARCH_URL

    def configured_for(self, capability: str) -> bool:
        """The reader works without a key (rate-limited); search needs one."""
        return capability == "extract" or bool(self.key)

    def _headers(self, **extra: str) -> dict[str, str]:
        return {"Accept": "application/json", **extra, **self.bearer()}

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        if not self.key:
            raise VendorError(self.name, "search needs JINA_API_KEY", fatal=True)
        headers = self._headers(**{"X-Respond-With": "no-content"})
        include = list(options.include_domains)
        if len(include) == 1:
            headers["X-Site"] = include.pop()
        warnings = unsupported(options, "time_range", "language", "region")
        data = await self.http.request_json(
            "GET", join_url(self.search_url, "/"), headers=headers,
            params={"q": site_query(query, include, options.exclude_domains)})
        rows = rename_rows(results_list(self.name, data, "data"), title="title", url="url",
                           snippet="description", published="date")
        return SearchPage(rows=rows, warnings=warnings)

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        return await per_url(urls, lambda url: self._read(url, options), self.name,
                             limit=READ_CONCURRENCY)

    async def _read(self, url: str, options: ExtractOptions) -> Record:
        headers = self._headers(**{"X-Return-Format": options.format})
        data = await self.http.request_json("POST", join_url(self.reader_url, "/"),
                                            json_body={"url": url}, headers=headers)
        page = dig(data, "data")
        if not isinstance(page, dict):
            raise VendorError(self.name, "unexpected answer shape (no data object)")
        return vendor_record(
            url, self.name, options, self.policy, content=page.get("content"),
            final_url=page.get("url"), title=page.get("title"),
            metadata={"description": page.get("description"),
                      "published": page.get("publishedTime")})

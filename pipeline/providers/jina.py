"""Jina: search (``POST {JINA_SEARCH_URL}/`` with ``{"q", "num", "gl", "hl"}``, the same as
``GET /?q=`` where POST is not routed; key required) and the reader
(``POST {JINA_READER_URL}/`` with ``{"url": ...}``, key optional but rate-limited without),
both with a Bearer key.

Both answer JSON when asked with ``Accept: application/json``: ``{"code", "status",
"data"}`` where search's ``data`` is a list of ``title``/``url``/``description`` rows and the
reader's is one page (``title``, ``url``, ``content`` — ``text`` with ``X-Return-Format:
text`` —, ``description``, ``publishedTime``).
Errors answer ``{"code", "name", "message", "readableMessage"}`` with the HTTP status; a
search that finds nothing answers 422 "No search results available for query ...".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.core.models import ExtractOptions, Record
from pipeline.core.slices import VendorSettings
from pipeline.providers.base import SearchOptions, SearchPage
from pipeline.providers.common import (
    dig,
    per_url,
    present,
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
    error_detail,
    join_url,
)

DEFAULT_READER_URL = "https://r.jina.ai"
DEFAULT_SEARCH_URL = "https://s.jina.ai"
READ_CONCURRENCY = 4
NO_RESULTS = "No search results available"  # the 422 an empty search answers


class JinaProvider(HttpProvider):
    name = "jina"
    key_env = ("JINA_API_KEY",)

    def __init__(self, settings: VendorSettings, env: Mapping[str, str], **client_options: Any):
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
        warnings = unsupported(options, "time_range")
        body = {"q": site_query(query, include, options.exclude_domains), **present(
            num=options.max_results, gl=(options.region or "")[:2].lower(),
            hl=(options.language or "").replace("_", "-").split("-")[0].lower())}
        try:
            data = await self._search(body, headers)
        except VendorError as exc:
            if exc.status == 422 and NO_RESULTS in exc.message:
                return SearchPage(warnings=warnings)  # Jina's way of saying "nothing found"
            raise
        rows = rename_rows(results_list(self.name, data, "data"), title="title", url="url",
                           snippet="description", published=("date", "publishedTime"))
        return SearchPage(rows=rows, warnings=warnings)

    async def _search(self, body: dict[str, Any], headers: dict[str, str]) -> Any:
        """POST as the API reference documents; an endpoint that does not route POST (an
        older self-hosted reader, a proxy) gets the ``GET /?q=`` form the README shows."""
        url = join_url(self.search_url, "/")
        try:
            return await self.http.request_json("POST", url, headers=headers, json_body=body)
        except VendorError as exc:
            if exc.status not in (404, 405):
                raise
        return await self.http.request_json("GET", url, headers=headers, params=body)

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        return await per_url(urls, lambda url: self._read(url, options), self.name,
                             limit=READ_CONCURRENCY)

    async def _read(self, url: str, options: ExtractOptions) -> Record:
        headers = self._headers(**{"X-Return-Format": options.format})
        data = await self.http.request_json("POST", join_url(self.reader_url, "/"),
                                            json_body={"url": url}, headers=headers)
        page = dig(data, "data")
        if not isinstance(page, dict):
            reason = error_detail(data)
            raise VendorError(self.name, f"error answer: {reason}" if reason
                              else "unexpected answer shape (no data object)")
        # the reader puts markdown in "content" and plain text in "text"
        fields = ("text", "content") if options.format == "text" else ("content", "text")
        content = next((page[f] for f in fields if isinstance(page.get(f), str)), None)
        return vendor_record(
            url, self.name, options, self.policy, content=content,
            final_url=page.get("url"), title=page.get("title"),
            metadata={"description": page.get("description"),
                      "published": page.get("publishedTime")})

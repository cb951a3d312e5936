"""Exa: ``POST {EXA_BASE_URL}/search`` and ``/contents`` with the ``x-api-key`` header.

Search takes ``numResults``, ``includeDomains``, ``excludeDomains`` and
``startPublishedDate``; rows carry ``title``, ``url``, ``publishedDate``, ``score`` and, as
asked, a short ``text`` used as the snippet. Contents takes ``urls`` and ``text: true`` and
answers ``results`` plus per-URL ``statuses`` (``id`` = the URL, ``status``, ``error.tag``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from pipeline.models import Record
from pipeline.providers.base import ExtractOptions, SearchOptions, SearchPage
from pipeline.providers.common import (
    dig,
    failed_record,
    in_input_order,
    rename_rows,
    results_list,
    vendor_record,
)
from pipeline.providers.http import HttpProvider, env_value, join_url
from pipeline.settings import Settings

DEFAULT_BASE_URL = "https://api.exa.ai"
SNIPPET_CHARS = 300
_SPAN = {"day": timedelta(days=1), "week": timedelta(weeks=1), "month": timedelta(days=31),
         "year": timedelta(days=365)}


class ExaProvider(HttpProvider):
    name = "exa"

    def __init__(self, settings: Settings, env: Mapping[str, str], **client_options: Any):
        super().__init__(settings, env, **client_options)
        self.base_url = env_value(env, "EXA_BASE_URL") or DEFAULT_BASE_URL
        self.key = env_value(env, "EXA_API_KEY")

    def is_configured(self) -> bool:
        return bool(self.key)

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self.key or ""}

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        body: dict[str, Any] = {"query": query, "type": "auto",
                                "contents": {"text": {"maxCharacters": SNIPPET_CHARS}}}
        if options.max_results:
            body["numResults"] = options.max_results
        if options.include_domains:
            body["includeDomains"] = options.include_domains
        if options.exclude_domains:
            body["excludeDomains"] = options.exclude_domains
        if options.time_range:
            since = datetime.now(timezone.utc) - _SPAN[options.time_range]
            body["startPublishedDate"] = since.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        warnings = [f"{option} is not supported; ignored"
                    for option in ("language", "region") if getattr(options, option)]
        data = await self.http.request_json("POST", join_url(self.base_url, "/search"),
                                            json_body=body, headers=self._headers())
        rows = rename_rows(results_list(self.name, data, "results"), title="title", url="url",
                           snippet="text", score="score", published="publishedDate")
        return SearchPage(rows=rows, warnings=warnings)

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        data = await self.http.request_json(
            "POST", join_url(self.base_url, "/contents"), headers=self._headers(),
            json_body={"urls": list(urls), "text": True})
        wanted = set(urls)
        by_url: dict[str, Record] = {}
        for status in results_list(self.name, data, "statuses"):
            url = dig(status, "id")
            if url in wanted and dig(status, "status") == "error":
                tag = dig(status, "error", "tag") or "error"
                code = dig(status, "error", "httpStatusCode")
                by_url[url] = failed_record(url, self.name, f"{tag}" + (
                    f" (HTTP {code})" if isinstance(code, int) else ""))
        for item in results_list(self.name, data, "results"):
            # Exa may answer with the page's canonical URL: match on ``id`` (the requested
            # URL) first, then on ``url``.
            requested = next((u for u in (dig(item, "id"), dig(item, "url")) if u in wanted),
                             None)
            if requested and requested not in by_url:
                by_url[requested] = vendor_record(
                    requested, self.name, options, self.policy, content=item.get("text"),
                    final_url=item.get("url"), title=item.get("title"), fmt="text",
                    metadata={"published": item.get("publishedDate"),
                              "byline": item.get("author")})
        return in_input_order(urls, by_url, self.name)

"""Exa: ``POST {EXA_BASE_URL}/search`` and ``/contents`` with the ``x-api-key`` header.

Search takes ``numResults``, ``includeDomains``, ``excludeDomains``,
``startPublishedDate`` and ``userLocation`` (a two-letter country code); rows carry
``title``, ``url``, ``publishedDate``, ``score`` and, as asked, a short ``text`` used as the
snippet. Contents takes ``urls`` and ``text: true`` and answers ``results`` plus per-URL
``statuses`` (``id`` = the URL, ``status``, ``error.tag``); errors answer
``{"requestId", "error", "tag"}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pipeline.core.models import ExtractOptions, Record
from pipeline.providers.base import SearchOptions, SearchPage, TimeRange
from pipeline.providers.common import (
    dig,
    failed_record,
    in_input_order,
    present,
    rename_rows,
    results_list,
    unsupported,
    url_matcher,
    vendor_record,
)
from pipeline.providers.http import HttpProvider, join_url, vendor_reason

DEFAULT_BASE_URL = "https://api.exa.ai"
SNIPPET_CHARS = 300
_SPAN = {"day": timedelta(days=1), "week": timedelta(weeks=1), "month": timedelta(days=31),
         "year": timedelta(days=365)}


def _since(time_range: TimeRange | None) -> str | None:
    """The start of ``time_range`` back from now, in the ISO form Exa's date filters take."""
    if time_range is None:
        return None
    since = datetime.now(UTC) - _SPAN[time_range]
    return since.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class ExaProvider(HttpProvider):
    name = "exa"
    base_url_env = "EXA_BASE_URL"
    default_base_url = DEFAULT_BASE_URL
    key_env = ("EXA_API_KEY",)

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self.key or ""}

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        body: dict[str, Any] = {"query": query, "type": "auto",
                                "contents": {"text": {"maxCharacters": SNIPPET_CHARS}}}
        body.update(present(numResults=options.max_results,
                            includeDomains=options.include_domains,
                            excludeDomains=options.exclude_domains,
                            startPublishedDate=_since(options.time_range),
                            userLocation=(options.region or "")[:2].upper()))
        warnings = unsupported(options, "language")
        data = await self.http.request_json("POST", join_url(self.base_url, "/search"),
                                            json_body=body, headers=self._headers())
        rows = rename_rows(results_list(self.name, data, "results"), title="title", url="url",
                           snippet=("text", "summary"), score="score",
                           published="publishedDate")
        return SearchPage(rows=rows, warnings=warnings)

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]:
        data = await self.http.request_json(
            "POST", join_url(self.base_url, "/contents"), headers=self._headers(),
            json_body={"urls": list(urls), "text": True})
        match = url_matcher(urls)
        by_url: dict[str, Record] = {}
        for status in results_list(self.name, data, "statuses"):
            url = match(dig(status, "id"))
            if url is not None and dig(status, "status") == "error":
                tag = vendor_reason(dig(status, "error", "tag"), "error")
                code = dig(status, "error", "httpStatusCode")
                by_url[url] = failed_record(url, self.name, f"{tag}" + (
                    f" (HTTP {code})" if isinstance(code, int) else ""))
        for item in results_list(self.name, data, "results"):
            # Exa may answer with the page's canonical URL: match on ``id`` (the requested
            # URL) first, then on ``url``.
            requested = match(dig(item, "id")) or match(dig(item, "url"))
            if requested and requested not in by_url:
                by_url[requested] = vendor_record(
                    requested, self.name, options, self.policy, content=item.get("text"),
                    final_url=item.get("url"), title=item.get("title"), fmt="text",
                    metadata={"published": item.get("publishedDate"),
                              "byline": item.get("author")})
        return in_input_order(urls, by_url, self.name)

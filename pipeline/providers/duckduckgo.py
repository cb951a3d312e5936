"""DuckDuckGo search through its HTML endpoint (no key): the zero-key default.

``POST {DUCKDUCKGO_BASE_URL}/html/`` with form fields ``q``, ``kl`` (region, e.g. ``us-en``)
and ``df`` (``d``/``w``/``m``/``y``). Result blocks are ``div.result``; ads carry
``result--ad`` and are skipped; links may be ``//duckduckgo.com/l/?uddg=<encoded>`` redirects,
unwrapped to the target.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from pipeline.core.slices import VendorSettings
from pipeline.providers.base import SearchOptions, SearchPage
from pipeline.providers.common import site_query
from pipeline.providers.http import HttpProvider, VendorError, join_url

DEFAULT_BASE_URL = "https://html.duckduckgo.com"
_TIME = {"day": "d", "week": "w", "month": "m", "year": "y"}
REFUSED = "refused the request (blocked or rate limited: try later, or configure another " \
    "search backend)"
_DDG_HOSTS = ("duckduckgo.com", "www.duckduckgo.com", "html.duckduckgo.com")


def unwrap_link(href: str, page_url: str) -> str | None:
    """The target of a result link: ``uddg`` redirects unwrapped, relative links resolved;
    None for links that stay on DuckDuckGo (ads, internal pages)."""
    absolute = urljoin(page_url, href.strip())
    parts = urlsplit(absolute)
    if (parts.hostname or "").lower() in _DDG_HOSTS:
        target = parse_qs(parts.query).get("uddg")
        if parts.path.startswith("/l/") and target:
            return target[0]
        return None
    return absolute


def _text(node: Any) -> str:
    return " ".join(node.text().split())


def parse_results(html: str, page_url: str) -> list[dict[str, Any]]:
    """Rows from a results page; raises VendorError when the page is no results page."""
    tree = LexborHTMLParser(html)
    blocks = tree.css("div.result")
    if not blocks:
        if tree.css_first(".no-results") is not None:
            return []
        if "anomaly" in html or tree.css_first("form#challenge-form") is not None:
            raise VendorError("duckduckgo", "bot challenge instead of results (try later, or "
                              "configure another search backend)", retryable=False)
        raise VendorError("duckduckgo", "unrecognised results page")
    rows = []
    for block in blocks:
        classes = (block.attributes.get("class") or "").split()
        if "result--ad" in classes:
            continue
        link = block.css_first("a.result__a")
        if link is None:
            continue
        url = unwrap_link(link.attributes.get("href") or "", page_url)
        if url is None:
            continue
        snippet = block.css_first(".result__snippet")
        rows.append({"title": _text(link), "url": url,
                     "snippet": _text(snippet) if snippet is not None else ""})
    return rows


class DuckDuckGoProvider(HttpProvider):
    name = "duckduckgo"
    base_url_env = "DUCKDUCKGO_BASE_URL"
    default_base_url = DEFAULT_BASE_URL

    def __init__(self, settings: VendorSettings, env: Mapping[str, str], **client_options: Any):
        client_options.setdefault("status_causes", {403: REFUSED, 418: REFUSED})
        super().__init__(settings, env, **client_options)

    def is_configured(self) -> bool:
        return True

    async def search(self, query: str, options: SearchOptions) -> SearchPage:
        warnings: list[str] = []
        form = {"q": site_query(query, options.include_domains, options.exclude_domains)}
        region = (options.region or "").lower().replace("_", "-")
        language = (options.language or "").lower().replace("_", "-").split("-")[0]
        if "-" in region:
            form["kl"] = region
        elif region and language:
            form["kl"] = f"{region}-{language}"  # DuckDuckGo's region codes: country-language
        elif region:
            warnings.append("region needs a language too (or a code like 'de-de'); ignored")
        if language and "kl" not in form:
            warnings.append("language is only honoured together with a region; ignored")
        if options.time_range:
            form["df"] = _TIME[options.time_range]
        url = join_url(self.base_url, "/html/")
        body = await self.http.request("POST", url, data=form)
        rows = parse_results(body.decode("utf-8", errors="replace"), url)
        return SearchPage(rows=rows, warnings=warnings)

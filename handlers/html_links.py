"""An HTML page's out-links, for a crawl (``HandlerOptions.links``).

Read from the parsed tree before cleaning (navigation and footers are where a site's links
are), resolved against ``<base href>`` or the page's URL, fragments dropped, each once in
page order, at most :data:`MAX_LINKS`. A link with ``rel=nofollow`` — or every link, when
the page's ``<meta name=robots>`` says ``nofollow`` — is listed apart.
"""

from __future__ import annotations

from urllib.parse import urldefrag, urljoin

from lxml import etree

MAX_LINKS = 10_000  # per page: a page of 100,000 links gives its first 10,000
_WEB = ("http://", "https://")


def _meta_nofollow(root: etree._Element) -> bool:
    return any((meta.get("name") or "").lower() == "robots"
               and "nofollow" in (meta.get("content") or "").lower()
               for meta in root.iter("meta"))


def page_links(root: etree._Element, page_url: str) -> tuple[list[str], list[str]]:
    """(followable links, nofollow links) of the page, absolute http(s) URLs."""
    base = page_url
    for element in root.iter("base"):
        if href := (element.get("href") or "").strip():
            base = urljoin(page_url, href)
        break
    everything_nofollow = _meta_nofollow(root)
    seen: set[str] = set()
    follow: list[str] = []
    nofollow: list[str] = []
    for element in root.iter("a", "area"):
        href = (element.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        try:
            url = urldefrag(urljoin(base, href)).url
        except ValueError:  # an unparsable href (a bad IPv6 literal, say) is no link
            continue
        if not url.lower().startswith(_WEB) or url in seen:
            continue
        seen.add(url)
        rel = (element.get("rel") or "").lower().split()
        (nofollow if everything_nofollow or "nofollow" in rel else follow).append(url)
        if len(seen) >= MAX_LINKS:
            break
    return follow, nofollow

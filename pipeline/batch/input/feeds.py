"""Feeds: the item links of an RSS (0.9x, 1.0, 2.0), Atom or JSON Feed document.

RSS and Atom are parsed by feedparser, given the bytes as a stream: handed a ``str`` or
``bytes`` it would take a URL or a file name for something to fetch or open. It expands no
external entity; the document is already within the fetcher's byte cap. JSON Feed (1.0, 1.1)
is plain JSON: each item's ``url``, else its ``external_url``.
"""

from __future__ import annotations

import io
import json
from typing import Any


def feed_links(body: bytes) -> list[str]:
    """The links of a feed's items, in document order (relative ones as they are); a
    ``ValueError`` when the body is no feed at all."""
    if body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        return _json_feed_links(body)
    import feedparser  # imported on first use: only runs with feeds pay for it

    parsed = feedparser.parse(io.BytesIO(body), sanitize_html=False,
                              resolve_relative_uris=False)
    if not parsed.entries and not parsed.version:  # feedparser reads anything: HTML too
        raise ValueError("not a well-formed feed" if parsed.bozo else "not a feed")
    links = []
    for entry in parsed.entries:
        link = entry.get("link") or _alternate(entry.get("links") or ())
        if isinstance(link, str) and link.strip():
            links.append(link.strip())
    return links


def _alternate(links: Any) -> str | None:
    for link in links:
        if link.get("rel", "alternate") == "alternate" and link.get("href"):
            return str(link["href"])
    return None


def _json_feed_links(body: bytes) -> list[str]:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise ValueError("not valid JSON") from None
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ValueError("a JSON document without an 'items' list is no JSON Feed")
    links = []
    for item in items:
        if isinstance(item, dict):
            link = item.get("url") or item.get("external_url")
            if isinstance(link, str) and link.strip():
                links.append(link.strip())
    return links

"""Page metadata from one parsed tree: title (cross-checked), byline, dates, site name, ….

Sources, strongest first: JSON-LD, OpenGraph/Twitter/Dublin Core ``<meta>``, microdata and
``rel=author``, then the visible page (``<h1>``, ``<time>``). Call it before cleaning: it
reads ``<script type="application/ld+json">`` and ``<meta>``, which cleaning removes.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin

from lxml import etree

from handlers.html_dom import text_of

_SPACE = re.compile(r"\s+")
_TITLE_SEPARATORS = re.compile(r"\s+(?:[|\-–—:·•»/]|::)\s+")
_ARTICLE_TYPES = re.compile(r"article|posting|report|blog|webpage|story", re.IGNORECASE)
_BY = re.compile(r"^\s*(?:by|por|par|von|di|de|oleh)\s*[:\-]?\s+", re.IGNORECASE)
_URLISH = re.compile(r"^(?:https?:)?//|^www\.", re.IGNORECASE)


def squash(text: str | None) -> str:
    return _SPACE.sub(" ", text or "").strip()


def _meta(root: etree._Element) -> dict[str, str]:
    found: dict[str, str] = {}
    for meta in root.iter("meta"):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        value = squash(meta.get("content"))
        if key and value and key not in found:
            found[key] = value
    return found


def _json_ld_objects(root: etree._Element) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for script in root.iter("script"):
        if (script.get("type") or "").lower() != "application/ld+json" or not script.text:
            continue
        try:
            data = json.loads(script.text)
        except ValueError:
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                objects.append(item)
                if "@graph" in item:
                    stack.append(item["@graph"])
    return objects


def _article_ld(objects: list[dict[str, Any]]) -> dict[str, Any]:
    for item in objects:
        kind = item.get("@type")
        kinds = " ".join(kind) if isinstance(kind, list) else str(kind or "")
        if _ARTICLE_TYPES.search(kinds) and ("headline" in item or "author" in item):
            return item
    return {}


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return _names(value.get("name"))
    if isinstance(value, list):
        return [name for item in value for name in _names(item)]
    return []


def clean_byline(text: str) -> str:
    text = _BY.sub("", squash(text))
    return text.strip(" ,;|-–—")


def _valid_byline(text: str) -> bool:
    return 1 < len(text) <= 120 and not _URLISH.search(text) and "@" not in text[:1]


def _byline(root: etree._Element, meta: dict[str, str], ld: dict[str, Any]) -> str | None:
    candidates = [*_names(ld.get("author"))]
    candidates += [meta.get(k, "") for k in ("author", "article:author", "dc.creator",
                                              "parsely-author", "sailthru.author", "byl")]
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        if element.get("rel") == "author" or element.get("itemprop") == "author":
            named = [e for e in element.iter() if e.get("itemprop") == "name"]
            candidates.append(text_of(named[0] if named else element))
    for candidate in candidates:
        cleaned = clean_byline(candidate)
        if _valid_byline(cleaned):
            return cleaned
    return None


def _strip_site(title: str, site: str | None, headings: list[str]) -> str:
    """Remove a site-name prefix/suffix: the parts are split on separators and the one that
    matches a visible heading, else the longest, is kept."""
    parts = [p for p in _TITLE_SEPARATORS.split(title) if p.strip()]
    if len(parts) < 2:
        return title
    norm_headings = {h.lower() for h in headings}
    for size in range(len(parts), 0, -1):
        for start in range(len(parts) - size + 1):
            joined = " - ".join(parts[start : start + size])
            if joined.lower() in norm_headings:
                return joined
    if site:
        kept = [p for p in parts if p.strip().lower() != site.lower()]
        if kept and len(kept) < len(parts):
            return squash(title[: title.find(kept[-1]) + len(kept[-1])]
                          [title.find(kept[0]):])
    return max(parts, key=len) if len(max(parts, key=len)) > 15 else title


def _headings(root: etree._Element) -> list[str]:
    return [squash(text_of(h)) for h in root.iter("h1", "h2") if squash(text_of(h))][
        :12
    ]


def _title(root: etree._Element, meta: dict[str, str], ld: dict[str, Any],
           site: str | None) -> str | None:
    headings = _headings(root)
    title_tag = next((squash(text_of(t)) for t in root.iter("title")), "")
    declared = [meta.get("og:title", ""), meta.get("twitter:title", ""),
                squash(str(ld.get("headline") or "")), title_tag]
    declared = [d for d in declared if d]
    lowered = [d.lower() for d in declared]
    # A visible heading that a declared title repeats is the headline itself.
    for heading in headings:
        low = heading.lower()
        if len(heading) > 3 and any(low == d or low in d for d in lowered):
            return heading
    for candidate in declared:
        return _strip_site(candidate, site, headings)
    return headings[0] if headings else None


def _date(root: etree._Element, meta: dict[str, str], ld: dict[str, Any],
          keys: tuple[str, ...], ld_key: str) -> str | None:
    if isinstance(ld.get(ld_key), str) and ld[ld_key].strip():
        return ld[ld_key].strip()
    for key in keys:
        if meta.get(key):
            return meta[key]
    return None


def extract_metadata(root: etree._Element, base_url: str) -> tuple[str | None, dict[str, Any]]:
    """(title, metadata dict without absent keys) for a parsed, not yet cleaned, page."""
    meta = _meta(root)
    ld = _article_ld(_json_ld_objects(root))
    publisher = ld.get("publisher")
    site = meta.get("og:site_name") or meta.get("application-name") or (
        _names(publisher)[0] if _names(publisher) else None
    )
    published = _date(root, meta, ld, ("article:published_time", "datepublished",
                                       "pubdate", "publishdate", "date", "dc.date",
                                       "dc.date.issued", "sailthru.date", "parsely-pub-date"),
                      "datePublished")
    if not published:
        times = [t.get("datetime") for t in root.iter("time") if t.get("datetime")]
        published = times[0] if times else None
    html = root if root.tag == "html" else root.getroottree().getroot()
    canonical = next((link.get("href") for link in root.iter("link")
                      if (link.get("rel") or "").lower() == "canonical" and link.get("href")),
                     None) or meta.get("og:url")
    image = meta.get("og:image") or meta.get("twitter:image")
    data: dict[str, Any] = {
        "byline": _byline(root, meta, ld),
        "site_name": site,
        "published": published,
        "modified": _date(root, meta, ld, ("article:modified_time", "datemodified",
                                           "og:updated_time", "lastmod"), "dateModified"),
        "lang": (html.get("lang") or html.get("xml:lang") or meta.get("content-language")
                 or None),
        "description": meta.get("description") or meta.get("og:description"),
        "canonical_url": urljoin(base_url, canonical) if canonical else None,
        "image": urljoin(base_url, image) if image else None,
    }
    return _title(root, meta, ld, site), {k: v for k, v in data.items() if v}

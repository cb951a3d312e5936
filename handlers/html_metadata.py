"""Page metadata from one parsed tree: title (cross-checked), byline, dates, site name, ….

Sources, strongest first: the article the page declares (JSON-LD, else microdata, read once
by :mod:`handlers.structured`, references followed), OpenGraph/Twitter/Dublin Core
``<meta>``, ``rel=author``, then the visible page (``<h1>``, ``<time>``). The same reading
gives ``metadata.structured`` and ``metadata.og``. Call it before cleaning: it reads
``<script type="application/ld+json">`` and ``<meta>``, which cleaning removes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urljoin

from lxml import etree

from handlers.html_dates import iso_date
from handlers.html_dom import heading_text, text_of
from handlers.html_page_type import page_type
from handlers.structured import Declared, raw_blocks, read_declared, structured_objects

_SPACE = re.compile(r"\s+")
_TITLE_SEPARATORS = re.compile(r"\s+(?:[|\-–—·•»]|::)\s+")
_ARTICLE_TYPES = re.compile(r"article|posting|report|blog|webpage|story", re.IGNORECASE)
_BY = re.compile(r"^\s*(?:by|por|par|von|di|de|oleh)\s*[:\-]?\s+", re.IGNORECASE)
# Where a visible byline ends and its dateline or role begins.
_BYLINE_END = re.compile(
    r"\s+(?:published|updated|posted|on)\s+|\s*[|•·]\s*|\s+\d{1,2}[:/.]\d{1,2}|"
    r"(?<=[a-z])(?=(?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
    r"(?<=[a-z])(?=(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d)|"
    r"\s*(?:view more|more articles)",
    re.IGNORECASE,
)
_URLISH = re.compile(r"^(?:https?:)?//|^www\.", re.IGNORECASE)


def squash(text: str | None) -> str:
    return _SPACE.sub(" ", text or "").strip()


def _meta(metas: list[etree._Element]) -> dict[str, str]:
    found: dict[str, str] = {}
    for meta in metas:
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        value = squash(meta.get("content"))
        if key and value and key not in found:
            found[key] = value
    return found


def _article_ld(declared: Declared) -> dict[str, Any]:
    """The page's first declared article (JSON-LD, else microdata; top-level, else inside
    another node), its author and publisher references (``{"@id": …}``) replaced by the
    nodes they name."""
    for item in declared.walk():
        kind = item.get("@type")
        kinds = " ".join(kind) if isinstance(kind, list) else str(kind or "")
        if _ARTICLE_TYPES.search(kinds) and ("headline" in item or "author" in item):
            resolve = declared.nodes.resolve
            found = {**item, "publisher": resolve(item.get("publisher"))}
            authors = item.get("author")
            found["author"] = ([resolve(a) for a in authors[:20]] if isinstance(authors, list)
                               else resolve(authors))
            return found
    return {}


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return _names(value.get("name"))
    if isinstance(value, list):
        return [name for item in value for name in _names(item)]
    return []


def _first_text(value: Any) -> str:
    """A JSON-LD value that should be text: a string, or the first string of a list."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str)), "")
    return value if isinstance(value, str) else ""


def clean_byline(text: str) -> str:
    """"By Jane Doe | Published Nov 3, 2019" → "Jane Doe"."""
    text = _BY.sub("", squash(text))
    text = _BYLINE_END.split(text, maxsplit=1)[0]
    return text.strip(" ,;|-–—·•")


def _valid_byline(text: str) -> bool:
    return (1 < len(text) <= 100 and not _URLISH.search(text) and "@" not in text[:1]
            and any(ch.isalpha() for ch in text))


_NOT_BYLINE = re.compile(r"bio|avatar|image|photo|img|comment|box|more|about|related",
                         re.IGNORECASE)
_NOT_BYLINE_TAGS = frozenset({"script", "style", "form", "input", "label", "img"})


@dataclass
class _Marked:
    """What one walk of the page finds for the metadata rules, each in document order."""

    authors: list[etree._Element]  # rel=author, itemprop=author
    bylines: list[etree._Element]  # visible elements the page names "byline" or "author"
    typed: list[etree._Element]  # microdata: elements with an itemtype
    props: list[etree._Element]  # ... and with an itemprop


@lru_cache(maxsize=4096)
def _byline_label(label: str) -> bool:
    label = label.lower()
    return ("byline" in label or "author" in label) and not _NOT_BYLINE.search(label)


def _marked(root: etree._Element) -> _Marked:
    """One walk instead of an XPath per question (libxml2's XPath walks slower than lxml's
    iteration)."""
    marked = _Marked([], [], [], [])
    for element in root.iter():
        # Names first: one call lists them, and most elements have only a class or none.
        names = element.keys()
        if not names or not isinstance(element.tag, str):
            continue
        if "rel" in names or "itemprop" in names:
            rel, itemprop = element.get("rel"), element.get("itemprop")
            if itemprop is not None:
                marked.props.append(element)
            if rel == "author" or itemprop == "author" or (rel is not None and " author" in rel):
                marked.authors.append(element)
        if "itemtype" in names:
            marked.typed.append(element)
        if "class" in names:
            label = element.get("class")
            if label and _byline_label(label) and element.tag not in _NOT_BYLINE_TAGS:
                marked.bylines.append(element)
    body = root.find("body")
    marked.bylines = [] if body is None else [
        e for e in marked.bylines if e is body or body in e.iterancestors()]
    return marked


def _byline_candidates(marked: _Marked, meta: dict[str, str],
                       ld: dict[str, Any]) -> Iterator[str]:
    """Byline sources, strongest first."""
    authors = ld.get("author")
    authors = authors if isinstance(authors, list) else [authors]
    organisations = [a for a in authors if isinstance(a, dict)
                     and "organization" in str(a.get("@type", "")).lower()]
    people = [name for name in (clean_byline(n) for n in _names(
        [a for a in authors if a not in organisations])) if _valid_byline(name)]
    if len(people) > 1:  # co-authors, as the page lists them
        yield ", ".join(dict.fromkeys(people[:4]))
    yield from people
    for key in ("author", "article:author", "dc.creator", "parsely-author",
                "sailthru.author", "byl"):
        yield meta.get(key, "")
    for element in marked.authors:
        named = [e for e in element.iter() if e.get("itemprop") == "name"]
        yield text_of(named[0] if named else element)
    # The visible byline: a short element the page names "byline" or "author".
    for element in marked.bylines:
        yield text_of(element)
    yield from _names(organisations)  # a publisher as author: better than nothing


def _byline(marked: _Marked, meta: dict[str, str], ld: dict[str, Any]) -> str | None:
    for candidate in _byline_candidates(marked, meta, ld):
        cleaned = clean_byline(candidate)
        if _valid_byline(cleaned):
            return cleaned
    return None


def _strip_site(title: str, site: str | None) -> str:
    """Remove a site-name prefix/suffix (``Headline | Site``, ``Site - Headline``)."""
    parts = [p.strip() for p in _TITLE_SEPARATORS.split(title) if p.strip()]
    if len(parts) < 2:
        return title
    site_low = (site or "").lower()
    kept = [p for p in parts if not site_low or (p.lower() != site_low
                                                 and p.lower() not in site_low)]
    if len(kept) == len(parts):
        # Unknown site name: a short last part ("| Site", "- Section") is page furniture.
        while len(kept) > 1 and len(kept[-1].split()) <= 4 and len(kept[-1]) < len(
            " ".join(kept[:-1])
        ):
            kept.pop()
    if not kept:
        return title
    start = title.find(kept[0])
    end = title.find(kept[-1], start) + len(kept[-1])
    return squash(title[start:end]) if start >= 0 and end > start else kept[0]


def _headings(root: etree._Element) -> list[str]:
    found = [heading_text(h) for h in root.iter("h1", "h2")]
    return [h for h in found if h][:12]


_WORD = re.compile(r"\w+")


def _restates(heading: str, declared: list[str]) -> bool:
    """At least half of the heading's words are in one of the declared titles."""
    words = set(_WORD.findall(heading.lower()))
    return bool(words) and any(
        len(words & set(_WORD.findall(d.lower()))) >= 0.5 * len(words) for d in declared if d)


def _title(root: etree._Element, meta: dict[str, str], ld: dict[str, Any],
           site: str | None) -> str | None:
    title_tag = next((squash(text_of(t)) for t in root.iter("title")), "")
    declared = [meta.get("og:title", ""), meta.get("twitter:title", ""),
                squash(_first_text(ld.get("headline"))), title_tag]
    cleaned = [_strip_site(d, site) for d in declared if d]
    lowered = [c.lower() for c in cleaned]
    parts = {p.strip().lower() for d in declared for p in _TITLE_SEPARATORS.split(d)}
    site_low = (site or "").lower()
    firsts = {_TITLE_SEPARATORS.split(d, maxsplit=1)[0].strip().lower() for d in declared if d}
    headings = [h for h in _headings(root) if len(h) >= 4 and h.lower() != site_low]
    # The page's one <h1>, when a declared title says the same thing in other words
    # ("Free SEO Checker" for "SEO Checker | Test your website"), is its headline.
    h1s = [h for h in (heading_text(e) for e in root.iter("h1"))
           if len(h) >= 4 and h.lower() != site_low]
    if len(h1s) == 1 and _restates(h1s[0], declared) and (
            h1s[0].lower() not in parts - firsts):  # not the logo's site or book name
        return h1s[0]
    # A visible heading that a declared title repeats is the headline itself; one that is
    # only a small part of it (the site name in the logo's <h1>) is not. Headlines come first
    # in titles ("Data Types - The Book"): a heading repeating the first part beats a menu's
    # or logo's heading repeating a later one, wherever each sits on the page.
    for heading in headings:
        low = heading.lower()
        if low in lowered or low in firsts:
            return heading
    for heading in headings:
        low = heading.lower()
        if low in parts or any(low in c and len(low) >= 0.6 * len(c) for c in lowered):
            return heading
    if cleaned:
        return cleaned[0]
    headings = _headings(root)
    return headings[0] if headings else None


def _date(root: etree._Element, meta: dict[str, str], ld: dict[str, Any],
          keys: tuple[str, ...], ld_key: str) -> str | None:
    """The first declared date that reads as one, in ISO 8601."""
    declared = [ld.get(ld_key)] + [meta.get(key) for key in keys]
    return next((day for day in (iso_date(v) for v in declared if isinstance(v, str)) if day),
                None)


def _in_local_time(stamp: str | None, root: etree._Element) -> str | None:
    """A declared UTC timestamp as the page's ``<time datetime>`` gives the same instant, in
    the page's own zone (its calendar day is the one the page shows)."""
    if not stamp or not stamp.endswith("+00:00"):
        return stamp
    instant = datetime.fromisoformat(stamp)
    for time_element in itertools.islice(root.iter("time"), 20):
        shown = iso_date(time_element.get("datetime"))
        if not shown or "T" not in shown or shown.endswith("+00:00"):
            continue
        local = datetime.fromisoformat(shown)
        if local.tzinfo is not None and local == instant:
            return shown
    return stamp


@dataclass
class PageMetadata:
    """What :func:`page_metadata` read: the title, the metadata, and what the field readers
    (:mod:`handlers.fields`) reuse: the declared data, the ``<meta>`` and ``itemprop``
    elements."""

    title: str | None
    metadata: dict[str, Any]
    declared: Declared
    metas: list[etree._Element]
    props: list[etree._Element]


def extract_metadata(root: etree._Element, base_url: str, *,
                     raw: bool = False) -> tuple[str | None, dict[str, Any]]:
    """(title, metadata dict without absent keys) for a parsed, not yet cleaned, page;
    ``raw``: with the structured data's blocks as declared (``structured_raw``)."""
    read = page_metadata(root, base_url, raw=raw)
    return read.title, read.metadata


def page_metadata(root: etree._Element, base_url: str, *, raw: bool = False) -> PageMetadata:
    """:func:`extract_metadata`, with what it read on the way."""
    metas = list(root.iter("meta"))
    meta = _meta(metas)
    marked = _marked(root)
    declared = read_declared(root, base_url, metas=metas, typed=marked.typed,
                             props=marked.props)
    objects = declared.objects
    ld = _article_ld(declared)
    publisher = ld.get("publisher")
    site = meta.get("og:site_name") or meta.get("application-name") or (
        _names(publisher)[0] if _names(publisher) else None
    )
    published = _date(root, meta, ld, ("article:published_time", "datepublished",
                                       "pubdate", "publishdate", "date", "dc.date",
                                       "dc.date.issued", "sailthru.date", "parsely-pub-date"),
                      "datePublished")
    if not published:
        published = next((day for day in (iso_date(t.get("datetime"))
                                          for t in root.iter("time")) if day), None)
    published = _in_local_time(published, root)
    html = root if root.tag == "html" else root.getroottree().getroot()
    canonical = next((link.get("href") for link in root.iter("link")
                      if (link.get("rel") or "").lower() == "canonical" and link.get("href")),
                     None) or meta.get("og:url")
    image = meta.get("og:image") or meta.get("twitter:image")
    data: dict[str, Any] = {
        "byline": _byline(marked, meta, ld),
        "site_name": site,
        "published": published,
        "modified": _date(root, meta, ld, ("article:modified_time", "datemodified",
                                           "og:updated_time", "lastmod"), "dateModified"),
        "lang": (html.get("lang") or html.get("xml:lang") or meta.get("content-language")
                 or None),
        "description": meta.get("description") or meta.get("og:description"),
        "canonical_url": urljoin(base_url, canonical) if canonical else None,
        "image": urljoin(base_url, image) if image else None,
        "page_type": page_type([str(e.get("itemtype")) for e in marked.typed], meta, objects),
        "structured": structured_objects(declared),
        "og": declared.og,
        "structured_raw": raw_blocks(declared) if raw else None,
    }
    return PageMetadata(_title(root, meta, ld, site), {k: v for k, v in data.items() if v},
                        declared, metas, marked.props)

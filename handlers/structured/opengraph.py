"""OpenGraph and its companions (``twitter:``, ``article:``, ``product:``, …) from ``<meta>``.

``metadata.og`` maps each property as the page names it (``og:title``, ``twitter:card``,
``article:published_time``) to its value; a property the page repeats (``og:image``,
``article:tag``) maps to the list of its values. Facebook's ``fb:`` ids and other
namespaces are left out. Bounded: properties, values per property and value length.
"""

from __future__ import annotations

from collections.abc import Iterable

from lxml import etree

from handlers.structured.values import plain

PREFIXES = ("og:", "twitter:", "article:", "product:", "book:", "profile:", "video:",
            "music:")
MAX_PROPERTIES = 40
MAX_VALUES = 10  # values kept for a repeated property
VALUE_CHARS = 1_000

OpenGraph = dict[str, str | list[str]]


def og_properties(metas: Iterable[etree._Element]) -> OpenGraph:
    """The OpenGraph-style properties of the page's ``<meta>`` elements (see the module's
    docstring)."""
    found: OpenGraph = {}
    for meta in metas:
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        if not key.startswith(PREFIXES) or len(key) > 100:
            continue
        value = plain(meta.get("content") or "", VALUE_CHARS)
        if not value:
            continue
        previous = found.get(key)
        if previous is None:
            if len(found) < MAX_PROPERTIES:
                found[key] = value
        elif isinstance(previous, list):
            if len(previous) < MAX_VALUES and value not in previous:
                previous.append(value)
        elif previous != value:
            found[key] = [previous, value]
    return found

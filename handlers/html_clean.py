"""Pre-extraction cleaning of a parsed page, in one pass over the tree.

Drops what is never content (scripts, styles, forms controls, embedded frames, comments), hidden
elements (``hidden``, ``aria-hidden="true"``, inline ``display:none``/``visibility:hidden``) —
counted, because a page that hides text is worth knowing about — and neutralises active
content: ``on*`` attributes and ``javascript:`` links go, their text stays.
"""

from __future__ import annotations

import re

from lxml import etree

from handlers.html_dom import drop, text_of
from handlers.html_tags import DROP_TAGS

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def _is_hidden(element: etree._Element) -> bool:
    if element.get("hidden") is not None:
        return True
    if (element.get("aria-hidden") or "").strip().lower() == "true":
        return True
    style = element.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def clean_tree(root: etree._Element) -> int:
    """Clean ``root`` in place; return how many hidden elements were removed."""
    doomed: list[etree._Element] = []
    hidden = 0
    for element in root.iter():
        tag = element.tag
        if not isinstance(tag, str):  # comments, processing instructions, entities
            doomed.append(element)
            continue
        if tag in DROP_TAGS:
            doomed.append(element)
            continue
        if tag not in ("html", "body") and _is_hidden(element):
            # The icon fonts and decorative glyphs marked aria-hidden are not "hidden text".
            if text_of(element).strip():
                hidden += 1
            doomed.append(element)
            continue
        for name in [n for n in element.attrib if n.lower().startswith("on")]:
            del element.attrib[name]
        href = element.get("href")
        if href is not None and href.strip().lower().startswith(("javascript:", "vbscript:")):
            del element.attrib["href"]
    for element in doomed:
        drop(element)
    return hidden

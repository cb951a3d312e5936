"""Pre-extraction cleaning of a parsed page.

Drops what is never content (scripts, styles, form controls, embedded frames, comments), hidden
elements (``hidden``, ``aria-hidden="true"``, inline ``display:none``/``visibility:hidden``,
the "not displayed" utility classes) — counted, because a page that hides text is worth
knowing about — and neutralises active content: ``on*`` attributes and ``javascript:`` links
go, their text stays.
"""

from __future__ import annotations

import re

from lxml import etree

from handlers.html_dom import drop, text_of
from handlers.html_tags import DROP_TAGS

# Utility classes that mean "not displayed" in the common CSS frameworks and CMSs.
HIDDEN_CLASSES = frozenset({"hidden", "hide", "is-hidden", "d-none", "element-hidden",
                            "visually-hidden", "visuallyhidden", "sr-only",
                            "screen-reader-text", "invisible", "display-none"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_SCRIPT_SCHEMES = ("javascript:", "vbscript:")


def _is_hidden(element: etree._Element, names: list[str]) -> bool:
    if "hidden" in names:
        return True
    if "aria-hidden" in names and element.get("aria-hidden", "").strip().lower() == "true":
        return True
    if "style" in names and _HIDDEN_STYLE.search(element.get("style", "")):
        return True
    return "class" in names and not HIDDEN_CLASSES.isdisjoint(
        element.get("class", "").lower().split()
    )


def clean_tree(root: etree._Element) -> int:
    """Clean ``root`` in place; return how many hidden elements holding text were removed."""
    # Filtered iteration runs inside libxml2; the attribute pass below is the Python part.
    for element in list(root.iter(*DROP_TAGS, etree.Comment, etree.ProcessingInstruction)):
        drop(element)
    doomed: list[etree._Element] = []
    hidden = 0
    body = root.find("body")
    for element in (body if body is not None else root).iter():
        names = element.keys()
        if not names:
            continue
        if element is not body and _is_hidden(element, names):
            # The icon fonts and decorative glyphs marked aria-hidden are not "hidden text".
            if text_of(element).strip():
                hidden += 1
            doomed.append(element)
            continue
        for name in names:
            if name[:2].lower() == "on":
                del element.attrib[name]
        if "href" in names and element.get("href", "").strip().lower().startswith(
            _SCRIPT_SCHEMES
        ):
            del element.attrib["href"]
    for element in doomed:
        drop(element)
    return hidden

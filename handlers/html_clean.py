"""Pre-extraction cleaning of a parsed page.

Drops what is never content (scripts, styles, form controls, embedded frames, comments), hidden
elements (``hidden``, ``aria-hidden="true"``, inline ``display:none``/``visibility:hidden``,
the "not displayed" utility classes, unless a breakpoint class shows them on wider screens:
``hidden lg:block``) — counted, because a page that hides text is worth knowing about — and
``<noscript>``; neutralises active content: ``on*`` attributes and ``javascript:`` links go,
their text stays.

A page that shows almost nothing but holds its text hidden or in ``<noscript>`` (a thread
served to clients without JavaScript, a streamed render parked in a hidden container until a
script moves it) is that text: then it stays.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree

from handlers.html_dom import drop, text_length, text_of
from handlers.html_tags import DROP_TAGS

# Utility classes that mean "not displayed" in the common CSS frameworks and CMSs.
HIDDEN_CLASSES = frozenset({"hidden", "hide", "is-hidden", "d-none", "element-hidden",
                            "visually-hidden", "visuallyhidden", "sr-only",
                            "screen-reader-text", "invisible", "display-none"})
# A breakpoint class that displays the element: "hidden lg:block", "d-none d-md-flex".
_SHOWN_AT_WIDTH = re.compile(
    r"^(?:(?:sm|md|lg|xl|2xl):(?:block|flex|grid|inline|inline-block|inline-flex|table|contents)"
    r"|d-(?:sm|md|lg|xl|xxl)-(?:block|flex|grid|inline|inline-block|inline-flex|table))$")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_SCRIPT_SCHEMES = ("javascript:", "vbscript:")


def _is_hidden(element: etree._Element, names: list[str]) -> bool:
    if "hidden" in names:
        return True  # the attribute (a class "hidden" is below)
    if "aria-hidden" in names and element.get("aria-hidden", "").strip().lower() == "true":
        return True
    if "style" in names and _HIDDEN_STYLE.search(element.get("style", "")):
        return True
    return "class" in names and _hidden_classes(element.get("class", ""))


@lru_cache(maxsize=8192)
def _hidden_classes(label: str) -> bool:
    """A "not displayed" utility class without a breakpoint class showing the element (a
    page repeats its class strings)."""
    classes = label.lower().split()
    return not HIDDEN_CLASSES.isdisjoint(classes) and not any(
        _SHOWN_AT_WIDTH.match(c) for c in classes)


_TUCKED_AWAY_CHARS = 500  # hidden or <noscript> text worth reading as the page ...
_SHOWN_SHARE = 0.1  # ... when the page shows less than this share of it


def _outermost(elements: list[etree._Element]) -> list[etree._Element]:
    chosen = set(elements)
    return [e for e in elements if not any(a in chosen for a in e.iterancestors())]


def _shows_little(body: etree._Element | None, tucked: list[etree._Element]) -> bool:
    """True when the text hidden or in ``<noscript>`` is the page's (it shows almost none)."""
    if body is None or not tucked:
        return False
    away = sum(text_length(e) for e in _outermost(tucked))
    return away >= _TUCKED_AWAY_CHARS and text_length(body) - away < _SHOWN_SHARE * away


def _hidden_main(page: etree._Element, doomed: list[etree._Element]) -> set[etree._Element]:
    """The hidden elements of a main landmark that shows almost nothing but them (a wrapper
    a script shows once the page has loaded, around the whole product or article)."""
    kept: set[etree._Element] = set()
    for main in page.iter("main"):
        inside = [e for e in doomed if main in e.iterancestors()]
        if _shows_little(main, inside):
            kept.update(inside)
    return kept


def place_streamed(root: etree._Element) -> None:
    """Move content a page streams in hidden containers to the placeholders it fills.

    A server streaming its render (React's streaming SSR, which Next.js and others use)
    sends each late part as ``<div hidden id="S:n">`` at the end of the page, with a script
    that swaps it into the ``<template id="B:n">`` (or ``P:n``) placeholder left in place:
    what the browser shows there, not hidden text."""
    slots = {t.get("id", "")[2:]: t for t in root.iter("template")
             if t.get("id", "")[:2] in _STREAM_SLOTS}
    if not slots:
        return
    for part in [d for d in root.iter("div") if d.get("id", "")[:2] == "S:"]:
        slot = slots.get(part.get("id", "")[2:])
        if slot is not None and slot.getparent() is not None and "hidden" in part.attrib:
            del part.attrib["hidden"]
            drop(part)  # its tail text stays where it was
            part.tail = None
            slot.addprevious(part)


_STREAM_SLOTS = ("B:", "P:")
_STRIPPED = tuple(sorted(DROP_TAGS - {"noscript"}))


def clean_tree(root: etree._Element) -> int:
    """Clean ``root`` in place; return how many hidden elements holding text were removed."""
    place_streamed(root)
    # Removed inside libxml2 (their tails stay); the attribute pass below is the Python part.
    etree.strip_elements(root, *_STRIPPED, etree.Comment, etree.ProcessingInstruction,
                         with_tail=False)
    noscripts = list(root.iter("noscript"))
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
        for name in names:
            if name.startswith("on"):  # the HTML parser lower-cases attribute names
                del element.attrib[name]
        if "href" in names and element.get("href", "").strip().lower().startswith(
            _SCRIPT_SCHEMES
        ):
            del element.attrib["href"]
    if _shows_little(body, doomed + noscripts):
        for noscript in noscripts:  # its children take its place
            noscript.tag = "div"
        return 0
    if doomed:
        kept = _hidden_main(body if body is not None else root, doomed)
        if kept:
            hidden -= sum(1 for e in kept if text_of(e).strip())
            doomed = [e for e in doomed if e not in kept]
    for element in noscripts + doomed:
        drop(element)
    return hidden

"""Small DOM helpers on plain lxml trees (no ``lxml.html`` element classes: their per-node
class lookup costs more than the rest of a walk)."""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree

from handlers.html_tags import BLOCK_TAGS as _BLOCKS

# libxml2's default limits stay on (no huge_tree): nesting deeper than 256 is cut off, which
# also keeps every recursive walk of ours far from Python's recursion limit.
# No id table (collect_ids): nothing looks elements up by id, and building it costs part of
# the parse.
_PARSER = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True,
                           no_network=True, collect_ids=False)


def parse(page: str | bytes) -> etree._Element:
    """Parse decoded HTML, or its UTF-8 bytes, into a tree rooted at ``<html>`` (never
    None)."""
    # As UTF-8 bytes: lxml refuses str input that carries an XML declaration.
    data = page if isinstance(page, bytes) else page.encode("utf-8", "replace")
    root = etree.fromstring(data, _PARSER)
    if root is None:
        raise ValueError("document is empty")
    return root


def text_of(element: etree._Element) -> str:
    """All text inside ``element`` (not its tail)."""
    if not len(element):
        return element.text or ""
    # Serialised as text inside libxml2: the same string as joining itertext(), faster.
    return etree.tostring(element, method="text", encoding="unicode", with_tail=False)


# What a heading's permalink anchor shows ("Usage¶", "§Examples").
PERMALINK_MARKS = frozenset({"#", "¶", "§", "🔗", "∞"})


def is_permalink(element: etree._Element) -> bool:
    """An in-page anchor showing only a permalink mark."""
    return (element.tag == "a" and (element.get("href") or "").startswith("#")
            and text_of(element).strip() in PERMALINK_MARKS)


def heading_text(element: etree._Element) -> str:
    """A heading's text as shown, whitespace collapsed: a ``<br>`` or a block inside it
    parts words ("Data Analytics<br>Agency"), a permalink anchor is not part of it."""
    parts: list[str] = []
    _shown_text(element, parts)
    return " ".join("".join(parts).split())


def _shown_text(element: etree._Element, parts: list[str]) -> None:
    parts.append(element.text or "")
    for child in element:
        if isinstance(child.tag, str) and not is_permalink(child):
            spaced = child.tag == "br" or child.tag in _BLOCKS
            parts.append(" " if spaced else "")
            _shown_text(child, parts)
            parts.append(" " if spaced else "")
        parts.append(child.tail or "")


def names(element: etree._Element) -> str:
    """The element's class and id, lower-cased, for name-based heuristics."""
    return f"{element.get('class') or ''} {element.get('id') or ''}".lower()


_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def name_words(element: etree._Element) -> str:
    """The element's class and id as lower-case words, each with a space either side:
    ``class="c-product-widget postBody"`` → ``" c product widget post body "``. Name rules
    match whole words (or word starts) in it, never a fragment inside a word ("ad" in "pad")."""
    return words_of(element.get("class"), element.get("id"))


def words_of(label: str | None, ident: str | None) -> str:
    """:func:`name_words` of a class and an id."""
    return _words(f"{label or ''} {ident or ''}")


@lru_cache(maxsize=8192)
def _words(raw: str) -> str:
    lowered = raw.lower()
    if lowered != raw:  # humps to split ("postBody"); none without a capital
        lowered = _CAMEL_HUMP.sub(" ", raw).lower()
    return " " + _NOT_ALNUM.sub(" ", lowered).strip() + " "


_NORMALIZED_LENGTH = etree.XPath("string-length(normalize-space())")


def text_length(element: etree._Element) -> int:
    """Length of the element's text with whitespace collapsed (computed inside libxml2)."""
    return int(_NORMALIZED_LENGTH(element))


def drop(element: etree._Element) -> None:
    """Remove ``element`` and its subtree, keeping its tail text in the tree."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def inside_code(root: etree._Element) -> set[etree._Element]:
    """Every element below a ``<pre>`` or ``<code>``: highlighter spans whose classes
    ("comment", "hljs-meta", "token tag") are syntax, not page furniture."""
    return {node for block in root.iter("pre", "code") for node in block.iterdescendants()}

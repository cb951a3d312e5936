"""Microdata items (``itemscope``/``itemtype``/``itemprop``) as JSON-LD-shaped nodes.

An item becomes ``{"@type": [...], "@id": itemid, "prop": value or [values]}``, its nested
items nodes of the same shape, so one set of readers serves both syntaxes. Values follow the
WHATWG microdata rules (``content`` of ``<meta>``, ``href``/``src``/``data``, ``datetime``,
``value``, else the element's text). ``itemref`` is followed where it names an element of the
page. Bounded: items, properties, nesting depth and every value's length.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from lxml import etree

from handlers.html_dom import text_of

MAX_ITEMS = 200  # itemscope elements read per page
MAX_PROPERTIES = 2_000  # itemprop elements read per page
MAX_DEPTH = 8  # items inside items
VALUE_CHARS = 4_000  # an element's text read as a value (readers clip further)
_ANCESTORS = 64  # how far up a property's item is looked for
_REFERENCED_ELEMENTS = 2_000  # elements read under itemref targets, per page
MAX_NODES = 1_000  # items built per page, each nested or referenced copy counted
_URL_ATTRIBUTES = {"a": "href", "area": "href", "link": "href", "audio": "src", "embed": "src",
                   "iframe": "src", "img": "src", "source": "src", "track": "src",
                   "video": "src", "object": "data"}


def microdata_items(typed: Iterable[etree._Element],
                    props: Iterable[etree._Element]) -> list[dict[str, Any]]:
    """The page's top-level typed items (not a property of another item), as nodes, from
    its elements with an ``itemtype`` (``typed``) and with an ``itemprop`` (``props``),
    each in document order: the handler's one walk of the page collects both."""
    scopes = [e for e in typed if e.get("itemscope") is not None][:MAX_ITEMS]
    if not scopes:
        return []
    properties: dict[etree._Element | None, list[etree._Element]] = {}
    for element in itertools.islice(props, MAX_PROPERTIES):
        properties.setdefault(_owner(element), []).append(element)
    reader = _Reader(scopes[0].getroottree().getroot(), properties)
    return [reader.item(scope, 0) for scope in scopes
            if scope.get("itemprop") is None or _owner(scope) is None]


def _owner(element: etree._Element) -> etree._Element | None:
    """The item ``element`` is a property of: its nearest ``itemscope`` ancestor."""
    for depth, ancestor in enumerate(element.iterancestors()):
        if depth >= _ANCESTORS:
            break
        if ancestor.get("itemscope") is not None:
            return ancestor
    return None


def _referenced(target: etree._Element, budget: int) -> tuple[list[etree._Element], int]:
    """(the properties an ``itemref`` target holds: it and its descendants with an
    ``itemprop``, except those inside a nested item; the elements read, at most ``budget``)."""
    found = []
    read = 0
    for element in target.iter():
        if read >= budget:
            break
        read += 1
        if not isinstance(element.tag, str) or element.get("itemprop") is None:
            continue
        nested = False
        for ancestor in element.iterancestors():
            if ancestor is target:
                break
            if ancestor.get("itemscope") is not None:
                nested = True
                break
        if not nested:
            found.append(element)
    return found, read


class _Reader:
    def __init__(self, root: etree._Element,
                 properties: dict[etree._Element | None, list[etree._Element]]) -> None:
        self._root = root
        self._properties = properties
        self._ids: dict[str, etree._Element] | None = None
        self._items_left = MAX_NODES  # items read, nested and referenced ones included
        self._referenced_left = _REFERENCED_ELEMENTS

    def item(self, scope: etree._Element, depth: int,
             seen: frozenset[etree._Element] = frozenset()) -> dict[str, Any]:
        node: dict[str, Any] = {}
        self._items_left -= 1
        if self._items_left < 0:
            return node
        kinds = (scope.get("itemtype") or "").split()
        if kinds:
            node["@type"] = kinds if len(kinds) > 1 else kinds[0]
        itemid = (scope.get("itemid") or "").strip()
        if itemid:
            node["@id"] = itemid
        seen = seen | {scope}
        for element in self._members(scope):
            value = self._value(element, depth, seen)
            for prop in (element.get("itemprop") or "").split()[:4]:
                previous = node.get(prop)
                if isinstance(previous, list):  # values are never lists themselves
                    previous.append(value)
                elif prop in node:
                    node[prop] = [previous, value]
                else:
                    node[prop] = value
        return node

    def _members(self, scope: etree._Element) -> list[etree._Element]:
        members = list(self._properties.get(scope, ()))
        refs = (scope.get("itemref") or "").split()
        for ref in refs[:8]:
            if self._referenced_left <= 0:
                break
            target = self._by_id().get(ref)
            if target is None:
                continue
            if target.get("itemscope") is not None:  # an item: a property only as a whole
                if target.get("itemprop") is not None:
                    members.append(target)
                continue
            found, read = _referenced(target, self._referenced_left)
            self._referenced_left -= read
            members.extend(found)
        return members

    def _by_id(self) -> dict[str, etree._Element]:
        """Elements by id, built on the first ``itemref`` (the parser keeps no id table)."""
        if self._ids is None:
            self._ids = {}
            for element in self._root.iter():
                ident = element.get("id") if isinstance(element.tag, str) else None
                if ident and ident not in self._ids:
                    self._ids[ident] = element
        return self._ids

    def _value(self, element: etree._Element, depth: int,
               seen: frozenset[etree._Element]) -> Any:
        if element.get("itemscope") is not None:
            if depth >= MAX_DEPTH or element in seen:
                return ""
            return self.item(element, depth + 1, seen)
        tag = element.tag
        if tag == "meta":
            return element.get("content") or ""
        attribute = _URL_ATTRIBUTES.get(str(tag))
        if attribute is not None:
            return (element.get(attribute) or "").strip()[:VALUE_CHARS]
        if tag in ("data", "meter"):
            return element.get("value") or ""
        if tag == "time" and element.get("datetime"):
            return element.get("datetime") or ""
        content = element.get("content")  # not in the standard; schema.org's examples use it
        if content is not None:
            return content[:VALUE_CHARS]
        return " ".join(text_of(element)[: VALUE_CHARS * 2].split())[:VALUE_CHARS]

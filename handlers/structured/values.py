"""Reading schema.org property values as pages write them, into plain bounded Python values.

A property may hold a string, a number, a node (``{"@type": …, "name": …}``), a reference
(``{"@id": …}``, resolved through :class:`Nodes`), a ``{"@value": …}`` literal or a list of
any of these; microdata gives strings and nested items of the same shape. Every reader here
takes any of them and returns a clean value or None: text without tags or entities, with
whitespace collapsed and clipped; absolute http(s) URLs; numbers; ISO 8601 dates and
durations; the last part of an enumeration URL (``https://schema.org/InStock`` → ``InStock``).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from handlers.html_dates import iso_date

TEXT_CHARS = 300  # a name, a headline, a brand
LONG_CHARS = 1_000  # a description, an answer, a recipe step
URL_CHARS = 2_000
LIST_ITEMS = 50
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,2000}>|<!--.*?-->", re.DOTALL)
_SPACE = re.compile(r"\s+")
_DURATION = re.compile(
    r"P(?=\d|T\d)(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:[.,]\d+)?S)?)?")
_URL_SPACE = re.compile(r"[\s<>\"]")
_NUMBER = re.compile(r"-?\d[\d.,\s]*")
REFERENCE_KEYS = frozenset({"@id", "@type", "@context"})


MAX_NODES = 5_000  # nodes visited per walk of a page's declared data
MAX_DEPTH = 12  # nesting followed below a block's top level


@dataclass
class Nodes:
    """The page's declared nodes (``roots``: its top-level objects and items), and a reader
    of references (``"author": {"@id": "#jane"}``) to the nodes defining them."""

    base_url: str
    roots: list[dict[str, Any]] = field(default_factory=list)
    _by_id: dict[str, dict[str, Any]] | None = None

    def resolve(self, value: Any) -> Any:
        """The node a bare reference names, else ``value`` itself."""
        if isinstance(value, dict) and "@id" in value and value.keys() <= REFERENCE_KEYS:
            if self._by_id is None:  # most pages never refer: index on the first reference
                self._by_id = _index(self.roots)
            return self._by_id.get(str(value["@id"]), value)
        return value

    def each(self, value: Any, limit: int = LIST_ITEMS) -> Iterator[Any]:
        """The items of a value that may be one item or a list, references resolved."""
        items = value if isinstance(value, list) else [value]
        for item in items[:limit]:
            if item is not None:
                yield self.resolve(item)


def children(node: Any) -> list[Any]:
    """The objects and lists inside a node or a list (``@graph`` members are roots)."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if isinstance(v, dict | list) and k != "@graph"]
    return node[:MAX_NODES] if isinstance(node, list) else []


def _index(roots: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every node that defines something (more than ``@id`` and ``@type``) by its ``@id``;
    the first definition in document order wins."""
    by_id: dict[str, dict[str, Any]] = {}
    stack: list[tuple[Any, int]] = [(root, 0) for root in reversed(roots)]
    visited = 0
    while stack and visited < MAX_NODES:
        node, depth = stack.pop()
        visited += 1
        if isinstance(node, dict):
            ident = node.get("@id")
            if isinstance(ident, str) and ident not in by_id and node.keys() - REFERENCE_KEYS:
                by_id[ident] = node
        if depth < MAX_DEPTH:
            stack.extend((child, depth + 1) for child in reversed(children(node)))
    return by_id


def type_names(node: dict[str, Any]) -> list[str]:
    """``@type`` as bare names: ``"schema:NewsArticle"``, ``"https://schema.org/Product"``
    and ``["Article", …]`` all give the last part of each."""
    kind = node.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return [re.split(r"[/#:]", k.strip())[-1] for k in kinds[:8] if isinstance(k, str) and k]


def plain(text: str, limit: int = TEXT_CHARS) -> str:
    """``text`` as a reader sees it: entities decoded, tags out, whitespace collapsed,
    clipped to ``limit`` characters."""
    text = text[: limit * 4]  # bound the work before the cleaning
    if "&" in text:
        text = html.unescape(text)
    if "<" in text:
        text = _TAG.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def text(nodes: Nodes, value: Any, limit: int = TEXT_CHARS) -> str | None:
    """The first text in ``value``: a string, a number, a ``@value`` literal, a node's name."""
    for item in nodes.each(value, 8):
        found: str | None
        if isinstance(item, str):
            found = plain(item, limit)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            found = str(item)
        elif isinstance(item, dict):
            inner = item.get("@value", item.get("name"))
            found = text(nodes, inner, limit) if isinstance(inner, str | int | float) else None
        else:
            continue
        if found:
            return found
    return None


def texts(nodes: Nodes, value: Any, limit: int = LIST_ITEMS,
          chars: int = TEXT_CHARS) -> list[str]:
    """Every text in ``value`` (see :func:`text`), duplicates out, at most ``limit``."""
    return _every(nodes, value, lambda item: text(nodes, item, chars), limit)


def _every(nodes: Nodes, value: Any, read: Callable[[Any], str | None],
           limit: int) -> list[str]:
    """What ``read`` finds in each item of ``value``, duplicates out, at most ``limit``."""
    found: list[str] = []
    for item in nodes.each(value, limit * 2):
        one = read(item)
        if one and one not in found:
            found.append(one)
            if len(found) >= limit:
                break
    return found


def name(nodes: Nodes, value: Any) -> str | None:
    """A person's, an organisation's or a thing's name: a string, or a node's ``name``
    (else ``givenName familyName``)."""
    for item in nodes.each(value, 8):
        if isinstance(item, dict):
            found = text(nodes, item.get("name")) or text(nodes, " ".join(
                part for part in (item.get("givenName"), item.get("familyName"))
                if isinstance(part, str)))
        else:
            found = text(nodes, item)
        if found:
            return found
    return None


def names(nodes: Nodes, value: Any, limit: int = 10) -> list[str]:
    return _every(nodes, value, lambda item: name(nodes, item), limit)


def url(nodes: Nodes, value: Any) -> str | None:
    """The first http(s) URL in ``value`` (a string, or a node's ``url``, ``contentUrl`` or
    ``@id``), made absolute."""
    for item in nodes.each(value, 8):
        if isinstance(item, dict):
            item = item.get("url") or item.get("contentUrl") or item.get("@id")
            if isinstance(item, list):
                item = next((i for i in item if isinstance(i, str)), None)
        if not isinstance(item, str) or not item.strip() or len(item) > URL_CHARS:
            continue
        item = item.strip()
        if _URL_SPACE.search(item):  # not a URL (a sentence, markup)
            continue
        if item.startswith(("https://", "http://")):
            return item  # already absolute (most are): urljoin costs more than the rest
        try:
            absolute = urljoin(nodes.base_url, item)
            if urlsplit(absolute).scheme in ("http", "https"):
                return absolute
        except ValueError:  # an invalid IPv6 host, ...
            continue
    return None


def urls(nodes: Nodes, value: Any, limit: int = 10) -> list[str]:
    return _every(nodes, value, lambda item: url(nodes, item), limit)


def number(nodes: Nodes, value: Any) -> float | None:
    """A number as declared: ``12``, ``"12.50"``, ``"1,299.00"``, ``"12,50 €"``."""
    for item in nodes.each(value, 4):
        if isinstance(item, dict):
            item = item.get("@value")
        if isinstance(item, bool):
            continue
        found: float | None
        if isinstance(item, int | float):
            found = float(item)
        elif isinstance(item, str):
            found = _parse_number(item[:100])
        else:
            continue
        if found is not None and math.isfinite(found):
            return int(found) if found.is_integer() and abs(found) < 2**53 else found
    return None


def _parse_number(raw: str) -> float | None:
    match = _NUMBER.search(raw)
    if not match:
        return None
    digits = match.group().replace(" ", "").rstrip(".,")
    comma, dot = digits.rfind(","), digits.rfind(".")
    if comma > dot:  # "1.299,00" or "12,50"; "1,299" is thousands
        whole, _, tail = digits.rpartition(",")
        digits = (whole.replace(".", "").replace(",", "") +
                  ("" if len(tail) == 3 and dot < 0 else ".") + tail)
    else:
        digits = digits.replace(",", "")
    if digits.count(".") > 1:
        return None
    try:
        return float(digits)
    except ValueError:
        return None


def integer(nodes: Nodes, value: Any) -> int | None:
    found = number(nodes, value)
    return int(found) if found is not None and found >= 0 and abs(found) < 2**53 else None


def date(nodes: Nodes, value: Any) -> str | None:
    """A declared date or timestamp in ISO 8601 (see :func:`handlers.html_dates.iso_date`)."""
    found = text(nodes, value, 100)
    return iso_date(found) if found else None


def duration(nodes: Nodes, value: Any) -> str | None:
    """An ISO 8601 duration (``PT1H30M``), as declared."""
    found = text(nodes, value, 100)
    match = _DURATION.fullmatch(found.upper().replace(" ", "")) if found else None
    return match.group() if match else None


def enumeration(nodes: Nodes, value: Any) -> str | None:
    """An enumeration member's name: ``https://schema.org/InStock`` → ``InStock``."""
    found = text(nodes, value, 200)
    if not found:
        return None
    return re.split(r"[/#:]", found.rstrip("/"))[-1] or None


def address(nodes: Nodes, value: Any) -> str | None:
    """A postal address as one line (``PostalAddress`` parts joined), or its text."""
    for item in nodes.each(value, 4):
        if isinstance(item, dict):
            parts = [text(nodes, item.get(key)) for key in (
                "streetAddress", "addressLocality", "addressRegion", "postalCode")]
            parts.append(name(nodes, item.get("addressCountry")))
            line = ", ".join(part for part in parts if part)
            if line:
                return plain(line)
        else:
            found = text(nodes, item)
            if found:
                return found
    return None

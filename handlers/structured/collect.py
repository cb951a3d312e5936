"""What one page declares, read once from its parsed tree, and its record fields.

:func:`read_declared` gathers the JSON-LD blocks (their top-level objects and ``@graph``
members), the typed microdata items and the OpenGraph properties, and indexes every node by
``@id``. :func:`structured_objects` turns them into ``metadata.structured`` (normalised
objects by group, :mod:`handlers.structured.schema`); :func:`raw_blocks` into
``metadata.structured_raw``. Every walk is bounded in nodes and depth, and both outputs in
size, so a hostile page cannot inflate a record or burn CPU.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from handlers.structured.jsonld import json_ld_values
from handlers.structured.microdata import microdata_items
from handlers.structured.opengraph import OpenGraph, og_properties
from handlers.structured.schema import normalise
from handlers.structured.values import MAX_DEPTH, MAX_NODES, Nodes, children

PER_GROUP = 20  # objects kept per group
STRUCTURED_CHARS = 32_000  # metadata.structured, as JSON
RAW_CHARS = 64_000  # metadata.structured_raw, as JSON
_RAW_ITEMS, _RAW_TEXT, _RAW_DEPTH = 50, 2_000, 10  # per list or object / string / nesting
JSON_LD, MICRODATA = "json-ld", "microdata"


@dataclass
class Declared:
    """A page's structured data as declared: JSON-LD block values, their top-level objects
    (``@graph`` members included), top-level microdata items, OpenGraph properties."""

    nodes: Nodes
    blocks: list[Any] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    og: OpenGraph = field(default_factory=dict)

    def walk(self) -> Iterator[dict[str, Any]]:
        """Every node, breadth first: the top-level objects and items, then what they hold
        (a ``WebPage``'s ``mainEntity``), then theirs; bounded like every walk."""
        queue = deque((node, 0) for node in self.nodes.roots)
        visited = 0
        while queue and visited < MAX_NODES:
            node, depth = queue.popleft()
            visited += 1
            if isinstance(node, dict):
                yield node
            if depth < MAX_DEPTH:
                queue.extend((child, depth + 1) for child in children(node))


def read_declared(root: etree._Element, base_url: str, *,
                  metas: Iterable[etree._Element] | None = None,
                  typed: Iterable[etree._Element] = (),
                  props: Iterable[etree._Element] = ()) -> Declared:
    """Read the page's JSON-LD, its OpenGraph from ``metas`` (its ``<meta>`` elements; None:
    find them) and its microdata from ``typed`` and ``props`` (its elements with an
    ``itemtype``, with an ``itemprop``: the caller's walk of the page collects them). Call
    it before cleaning, which removes scripts and ``<meta>``."""
    declared = Declared(Nodes(base_url), json_ld_values(root),
                        og=og_properties(root.iter("meta") if metas is None else metas))
    for value in declared.blocks:
        declared.objects.extend(_top_level(value))
    declared.items = microdata_items(typed, props)
    declared.nodes.roots = [*declared.objects, *declared.items]
    return declared


def _top_level(value: Any) -> list[dict[str, Any]]:
    """A block's objects: the value itself, or a list's items, plus ``@graph`` members."""
    found: list[dict[str, Any]] = []
    stack = [(value, 0)]
    while stack and len(found) < MAX_NODES:
        item, depth = stack.pop()
        if isinstance(item, list) and depth < 3:
            stack.extend((i, depth + 1) for i in reversed(item[:MAX_NODES]))
        elif isinstance(item, dict):
            found.append(item)
            graph = item.get("@graph")
            if graph is not None and depth < 3:
                stack.append((graph, depth + 1))
    return found


def structured_objects(declared: Declared) -> dict[str, list[dict[str, Any]]]:
    """``metadata.structured``: the normalised objects by group, in document order (JSON-LD
    first), duplicates out. A node of a known type is read whole; others are looked into
    (a ``WebPage``'s ``mainEntity``, an ``ItemList``'s items)."""
    nodes = declared.nodes
    found: dict[str, list[dict[str, Any]]] = {}
    seen_ids: set[int] = set()
    seen_objects: set[str] = set()
    left = STRUCTURED_CHARS
    queue: list[tuple[Any, str, int]] = [(o, JSON_LD, 0) for o in declared.objects]
    queue += [(i, MICRODATA, 0) for i in declared.items]
    queue.reverse()
    visited = 0
    while queue and visited < MAX_NODES and left > 0:
        node, source, depth = queue.pop()
        node = nodes.resolve(node)
        visited += 1
        if id(node) in seen_ids:
            continue
        seen_ids.add(id(node))
        read = normalise(nodes, node, source) if isinstance(node, dict) else None
        if read is None:
            if depth < MAX_DEPTH:
                queue.extend((child, source, depth + 1) for child in reversed(children(node)))
            continue
        group, fields = read
        kept = found.setdefault(group, [])
        same = _fit(fields, left)
        if same is None or same in seen_objects or len(kept) >= PER_GROUP:
            continue
        seen_objects.add(same)
        kept.append(fields)
        left -= len(same)
    return {group: objects for group, objects in found.items() if objects}


def _fit(fields: dict[str, Any], room: int) -> str | None:
    """The object as JSON (its identity for duplicates) once it fits in ``room``
    characters — its longest list halved until it does — or None when it cannot."""
    while True:
        same = json.dumps({k: v for k, v in fields.items() if k != "source"},
                          sort_keys=True, ensure_ascii=False)
        if len(same) <= room:
            return same
        lists = [k for k, v in fields.items() if isinstance(v, list) and len(v) > 1]
        if not lists:
            return None
        longest = max(lists, key=lambda k: len(fields[k]))
        fields[longest] = fields[longest][: len(fields[longest]) // 2]


def raw_blocks(declared: Declared) -> dict[str, list[Any]]:
    """``metadata.structured_raw``: the JSON-LD blocks and microdata items as declared,
    cut to :data:`RAW_CHARS` of JSON (whole blocks while they fit, then no more) and to
    bounded depth, list lengths and strings."""
    raw: dict[str, list[Any]] = {"json_ld": [], "microdata": []}
    left = RAW_CHARS
    for key, values in (("json_ld", declared.blocks), ("microdata", declared.items)):
        for value in values:
            copy = _bounded(value, 0)
            size = len(json.dumps(copy, ensure_ascii=False))
            if size > left:
                continue
            raw[key].append(copy)
            left -= size
    return {k: v for k, v in raw.items() if v}


def _bounded(value: Any, depth: int) -> Any:
    """A copy of a JSON value within :data:`_RAW_DEPTH`, :data:`_RAW_ITEMS` and
    :data:`_RAW_TEXT` (deeper values become null)."""
    if isinstance(value, str):
        return value[:_RAW_TEXT]
    if depth >= _RAW_DEPTH and isinstance(value, dict | list):
        return None
    if isinstance(value, dict):
        return {str(k)[:200]: _bounded(v, depth + 1)
                for k, v in list(value.items())[:_RAW_ITEMS]}
    if isinstance(value, list):
        return [_bounded(v, depth + 1) for v in value[:_RAW_ITEMS]]
    if isinstance(value, float) and not math.isfinite(value):  # JSON's NaN, Infinity
        return None
    return value

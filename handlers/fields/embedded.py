"""Product fields from JSON the page carries for its scripts: ``application/json`` islands,
JSON-LD blocks that are not schema.org, and state objects assigned in inline scripts
(``window.__STATE__ = {…}``).

Such JSON holds every product a page lists; the page's own is the object whose name is the
page's heading, else one whose identifier the page's URL holds. Its fields are read by the
shape of their keys and values (``price``/``salePrice``, ``sku``, ``inStock``…), never by a
site's layout. Bounded: JSON read per page, nodes walked, depth.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from handlers.fields.candidates import Candidate, evidence_of
from handlers.fields.values import availability_name, parse_price, squash

SCRIPT_CHARS = 2_000_000  # a larger script is skipped
PAGE_CHARS = 3_000_000  # JSON decoded per page
MAX_NODES = 20_000  # JSON nodes walked per page
MAX_DEPTH = 14
_JSON_TYPES = frozenset({"application/json", "application/ld+json", "text/json"})
# "window.__STATE__ = {", "var data = {" ... the assignment of a literal object.
_ASSIGNMENT = re.compile(r"(?:^|[;\s])(?:window\.|self\.|var\s+|let\s+|const\s+)?"
                         r"[\w$.\[\]\"']{1,80}\s*=\s*(?=\{)")
_NAME_KEYS = ("name", "title", "productname", "displayname", "product_name")
_PRICE_KEYS = ("saleprice", "sale_price", "finalprice", "final_price", "currentprice",
               "current_price", "sellingprice", "selling_price", "offerprice", "price",
               "pricevalue", "price_value", "amount")
_PRICE_INNER = ("value", "amount", "current", "final", "sale", "raw", "formatted", "price")
_CURRENCY_KEYS = ("currency", "currencycode", "currency_code", "pricecurrency")
_SKU_KEYS = ("sku", "skuid", "sku_id", "productsku", "itemnumber", "item_number",
             "productcode", "product_code", "partnumber", "articlenumber")
_STOCK_KEYS = ("availability", "stockstatus", "stock_status", "instock", "in_stock",
               "isinstock", "is_in_stock", "available", "isavailable", "is_available",
               "availabilitystatus", "availabletoorder", "purchasable", "ispurchasable",
               "buyable", "isbuyable", "orderable", "isorderable", "soldout", "sold_out",
               "issoldout")
_NEGATED = frozenset({"soldout", "sold_out", "issoldout"})


def json_values(scripts: Iterable[tuple[str, str]]) -> list[Any]:
    """The JSON values of the page's data islands and script-assigned objects, from its
    scripts' (type, text)."""
    values: list[Any] = []
    left = PAGE_CHARS
    for kind, body in scripts:
        if not body.strip() or len(body) > SCRIPT_CHARS or len(body) > left:
            continue
        kind = kind.split(";", 1)[0].strip().lower()
        if kind in _JSON_TYPES:
            left -= len(body)
            try:
                values.append(json.loads(body, strict=False))
            except (ValueError, RecursionError):
                continue
        elif kind in ("", "text/javascript", "application/javascript", "module"):
            for match in _ASSIGNMENT.finditer(body, 0, min(len(body), 200_000)):
                try:
                    value, end = _DECODER.raw_decode(body, match.end())
                except (ValueError, RecursionError):
                    continue
                left -= end - match.end()
                values.append(value)
                if left <= 0:
                    break
    return values


_DECODER = json.JSONDecoder(strict=False)


def _lower_keys(node: dict[str, Any]) -> dict[str, Any]:
    return {k.lower(): v for k, v in node.items() if isinstance(k, str)}


def _is_schema_org(node: dict[str, Any]) -> bool:
    return "@type" in node or "@context" in node  # read as declared data already


def embedded_candidates(values: list[Any], heading: str, url_words: set[str]
                        ) -> Iterator[Candidate]:
    """Candidates from the object in ``values`` describing the page's product."""
    wanted = squash(heading)
    queue: deque[tuple[Any, int]] = deque((v, 0) for v in values)
    seen = 0
    while queue and seen < MAX_NODES:
        node, depth = queue.popleft()
        seen += 1
        if isinstance(node, dict):
            if not _is_schema_org(node):
                keys = _lower_keys(node)
                named = next((keys[k] for k in _NAME_KEYS if isinstance(keys.get(k), str)),
                             None)
                ident = next((keys[k] for k in _SKU_KEYS
                              if isinstance(keys.get(k), str | int)), None)
                if (wanted and named and squash(named) == wanted) or (
                        ident is not None and str(ident).lower() in url_words
                        and len(str(ident)) >= 5):
                    found = list(_fields(keys))
                    if any(c.field in ("price", "sku", "availability") for c in found):
                        yield from found
                        return
            children: list[Any] = list(node.values())
        elif isinstance(node, list):
            children = node[:500]
        else:
            continue
        if depth < MAX_DEPTH:
            queue.extend((c, depth + 1) for c in children if isinstance(c, dict | list))


def _fields(keys: dict[str, Any]) -> Iterator[Candidate]:
    currency = next((keys[k] for k in _CURRENCY_KEYS if isinstance(keys.get(k), str)), None)
    for key in _PRICE_KEYS:
        raw = keys.get(key)
        if isinstance(raw, dict):
            inner = _lower_keys(raw)
            currency = currency or next((inner[k] for k in _CURRENCY_KEYS
                                         if isinstance(inner.get(k), str)), None)
            raw = next((inner[k] for k in _PRICE_INNER if isinstance(inner.get(k), str | int |
                                                                      float)), None)
        if isinstance(raw, str | int | float) and not isinstance(raw, bool):
            amount, code = parse_price(raw, currency, declared=True)
            if amount is not None:
                evidence = evidence_of({key: keys.get(key), **(
                    {"currency": currency} if currency else {})})
                yield Candidate("price", amount, "embedded-json", evidence)
                if code:
                    yield Candidate("currency", code, "embedded-json", evidence)
                break
    for key in _SKU_KEYS:
        raw = keys.get(key)
        if isinstance(raw, str | int) and not isinstance(raw, bool) and str(raw).strip():
            yield Candidate("sku", str(raw).strip()[:100], "embedded-json",
                            evidence_of({key: raw}))
            break
    state = _stock_state(keys)
    if state is not None:
        yield Candidate("availability", state[0], "embedded-json", evidence_of(state[1]))


def _stock_state(keys: dict[str, Any], depth: int = 0) -> tuple[str, dict[str, Any]] | None:
    """(availability name, the key and value it was read from) of an object's stock keys:
    a yes/no (``inStock``, ``availableToOrder``, ``soldOut``), a status string
    (``"in-stock"``, ``"OUT_OF_STOCK"``, a schema.org URL) or an object holding one
    (``"availability": {"stockLevel": 0, "availableToOrder": true}``)."""
    for key in _STOCK_KEYS:
        if key not in keys:
            continue
        raw = keys[key]
        state: str | None = None
        if isinstance(raw, bool):
            state = "InStock" if raw != (key in _NEGATED) else "OutOfStock"
        elif isinstance(raw, str):
            state = availability_name(raw)
        elif isinstance(raw, dict) and depth == 0:
            inner = _stock_state(_lower_keys(raw), 1)
            state = inner[0] if inner else None
        if state:
            return state, {key: raw}
    return None

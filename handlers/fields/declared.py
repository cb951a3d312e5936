"""Product fields from what the page declares: JSON-LD and microdata (the nodes
:mod:`handlers.structured` read), RDFa ``property`` attributes, product ``<meta>`` tags and
``itemprop`` elements anywhere on the page.

On a page declaring several products (variants, recommendations), the product the page is
about is the one whose name is the page's heading, whose URL is the page's, or whose
identifier the URL holds; the first declared wins a tie.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any

from lxml import etree

from handlers.fields.candidates import Candidate, evidence_of
from handlers.fields.values import availability_name, parse_price, squash
from handlers.structured.collect import Declared
from handlers.structured.schema import group_of
from handlers.structured.values import Nodes, enumeration, name, text, type_names, url

_GTINS = ("gtin13", "gtin", "gtin12", "gtin14", "gtin8", "isbn")
_IN_STOCK = frozenset({"InStock", "LimitedAvailability", "OnlineOnly", "InStoreOnly",
                       "PreOrder", "PreSale", "BackOrder", "MadeToOrder"})
MAX_RDFA = 2_000  # elements with a property attribute read per page
_TOKEN = re.compile(r"[A-Za-z0-9]+")


def _products(declared: Declared) -> list[tuple[str, dict[str, Any]]]:
    """(syntax, node) of every declared product, in document order (JSON-LD first)."""
    found: list[tuple[str, dict[str, Any]]] = []
    json_ld = {id(o) for o in declared.objects}
    syntax = "json-ld"
    for node in declared.walk():
        if id(node) in json_ld:
            syntax = "json-ld"
        elif any(node is item for item in declared.items):
            syntax = "microdata"
        kind = group_of(type_names(node))
        if kind is not None and kind[0] == "Product":
            found.append((syntax, node))
        if len(found) >= 50:
            break
    return found


def _score(nodes: Nodes, node: dict[str, Any], heading: str, page_url: str) -> int:
    """How surely ``node`` is the page's product (higher is surer)."""
    score = 0
    named = text(nodes, node.get("name"))
    if named and heading and squash(named) == squash(heading):
        score += 2
    declared_url = url(nodes, node.get("url"))
    if declared_url and declared_url.split("#")[0].rstrip("/") == page_url.rstrip("/"):
        score += 2
    ident = text(nodes, node.get("sku"), 100) or text(nodes, node.get("productID"), 100)
    if ident and len(ident) >= 4 and ident.lower() in page_url.lower():
        score += 1
    return score


def declared_candidates(declared: Declared, heading: str, page_url: str
                        ) -> Iterator[Candidate]:
    """Candidates from the page's product in JSON-LD or microdata."""
    products = _products(declared)
    if not products:
        return
    nodes = declared.nodes
    best = max(range(len(products)), key=lambda i: (_score(nodes, products[i][1], heading,
                                                            page_url), -i))
    syntax, node = products[best]
    # Variants declared as products of their own (one per size) share the product's name.
    named = text(nodes, node.get("name"))
    variants = [n for _, n in products if n is not node and named
                and text(nodes, n.get("name")) == named]
    yield from _product_fields(nodes, node, syntax, variants)


def _product_fields(nodes: Nodes, node: dict[str, Any], syntax: str,
                    variants: list[dict[str, Any]]) -> Iterator[Candidate]:
    def one(field: str, key: str, value: Any) -> Candidate | None:
        if value is None or value == "":
            return None
        return Candidate(field, value, syntax, evidence_of({key: node.get(key)}))

    simple = (
        ("name", "name", text(nodes, node.get("name"))),
        ("sku", "sku", text(nodes, node.get("sku"), 100)),
        ("sku", "productID", text(nodes, node.get("productID"), 100)),
        ("mpn", "mpn", text(nodes, node.get("mpn"), 100)),
        ("brand", "brand", name(nodes, node.get("brand"))),
        ("image", "image", url(nodes, node.get("image"))),
    )
    for field, key, value in simple:
        found = one(field, key, value)
        if found:
            yield found
    for key in _GTINS:
        found = one("gtin", key, text(nodes, node.get(key), 100))
        if found:
            yield found
    yield from _offer_fields(nodes, node.get("offers"), syntax,
                             [v.get("offers") for v in variants])
    rating = next((r for r in nodes.each(node.get("aggregateRating"), 2)
                   if isinstance(r, dict)), None)
    if rating is not None:
        value = text(nodes, rating.get("ratingValue"), 20)
        if value:
            yield Candidate("rating", value, syntax, evidence_of(rating))
        count = text(nodes, rating.get("reviewCount") or rating.get("ratingCount"), 20)
        if count:
            yield Candidate("review_count", count, syntax, evidence_of(rating))


def _offers(nodes: Nodes, value: Any, depth: int = 0) -> list[dict[str, Any]]:
    """The offers under ``offers``: one, a list, an ``AggregateOffer`` and its own."""
    found: list[dict[str, Any]] = []
    for item in nodes.each(value, 50):
        if not isinstance(item, dict):
            continue
        found.append(item)
        if depth < 2 and "offers" in item:
            found.extend(_offers(nodes, item.get("offers"), depth + 1))
    return found


def _offer_fields(nodes: Nodes, value: Any, syntax: str,
                  more: list[Any]) -> Iterator[Candidate]:
    offers = _offers(nodes, value)
    for offer in offers:
        spec = nodes.resolve(offer.get("priceSpecification"))
        spec = spec[0] if isinstance(spec, list) and spec else spec
        spec = spec if isinstance(spec, dict) else {}
        raw = next((v for v in (offer.get("price"), spec.get("price"), offer.get("lowPrice"))
                    if v is not None and v != ""), None)
        hint = text(nodes, offer.get("priceCurrency") or spec.get("priceCurrency"), 10)
        amount, currency = parse_price(_plain_value(raw), hint, declared=True)
        if amount is not None:
            evidence = evidence_of({k: offer.get(k) for k in ("price", "lowPrice",
                                                              "priceCurrency") if k in offer}
                                   or spec)
            yield Candidate("price", amount, syntax, evidence)
            if currency:
                yield Candidate("currency", currency, syntax, evidence)
            break
    # A product is in stock when any of its offers is (a size or colour sold out is not
    # the product sold out).
    offers += [offer for other in more for offer in _offers(nodes, other)]
    states = [availability_name(enumeration(nodes, o.get("availability"))) for o in offers]
    named = [s for s in states if s]
    if named:
        chosen = next((s for s in named if s in _IN_STOCK), named[0])
        raw_state = next(o.get("availability") for o, s in zip(offers, states, strict=True)
                         if s == chosen)
        yield Candidate("availability", chosen, syntax, evidence_of({"availability": raw_state}))


def _plain_value(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw.get("@value")
    if isinstance(raw, list):
        return raw[0] if raw else None
    return raw


# ----------------------------------------------------------------------- meta and itemprop
_META_FIELDS = {
    "product:price:amount": "price", "og:price:amount": "price", "og:price": "price",
    "product:sale_price:amount": "price", "price": "price",
    "product:price:currency": "currency", "og:price:currency": "currency",
    "pricecurrency": "currency",
    "product:availability": "availability", "og:availability": "availability",
    "availability": "availability",
    "product:retailer_item_id": "sku", "product:sku": "sku", "og:sku": "sku", "sku": "sku",
    "product:brand": "brand", "og:brand": "brand", "brand": "brand",
    "product:mfr_part_no": "mpn", "mpn": "mpn", "product:upc": "gtin", "product:ean": "gtin",
    "gtin13": "gtin", "gtin": "gtin", "gtin12": "gtin", "gtin14": "gtin", "gtin8": "gtin",
}
# A sale price, when a page gives one, is the price it sells at.
_META_ORDER = ("product:sale_price:amount", "product:price:amount", "og:price:amount",
               "og:price")


def meta_candidates(metas: Iterable[etree._Element]) -> Iterator[Candidate]:
    """Candidates from product ``<meta>`` tags (OpenGraph/Facebook product properties and
    ``itemprop`` metas)."""
    found: dict[str, str] = {}
    for meta in itertools.islice(metas, 500):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        value = (meta.get("content") or "").strip()
        if key in _META_FIELDS and value and key not in found:
            found[key] = value
    hint = found.get("product:price:currency") or found.get("og:price:currency") or found.get(
        "pricecurrency")
    for key in sorted((k for k in found if _META_FIELDS[k] == "price"),
                      key=lambda k: _META_ORDER.index(k) if k in _META_ORDER else 9):
        amount, currency = parse_price(found[key], hint, declared=True)
        if amount is not None:
            evidence = evidence_of(f'{key}="{found[key]}"' + (f' currency="{hint}"' if hint
                                                               else ""))
            yield Candidate("price", amount, "meta", evidence)
            if currency:
                yield Candidate("currency", currency, "meta", evidence)
    for key, value in found.items():
        field = _META_FIELDS[key]
        if field == "price":
            continue
        if field == "availability":
            value = availability_name(value) or ""
        elif field == "currency":
            continue  # with its price above
        if value:
            yield Candidate(field, value, "meta", evidence_of(f'{key}="{found[key]}"'))


_PROP_FIELDS = {"price": "price", "sku": "sku", "productid": "sku", "mpn": "mpn",
                "availability": "availability", "pricecurrency": "currency",
                "brand": "brand", **{g: "gtin" for g in _GTINS}}


def itemprop_candidates(props: Iterable[etree._Element], rdfa: Iterable[etree._Element]
                        ) -> Iterator[Candidate]:
    """Candidates from ``itemprop`` elements anywhere (inside an item or not) and RDFa
    ``property`` attributes (``schema:price``, ``price``)."""
    for source, attribute, elements in (("microdata", "itemprop", props),
                                        ("rdfa", "property", rdfa)):
        for element in itertools.islice(elements, MAX_RDFA):
            if element.tag == "meta" and source == "microdata":
                continue  # read with the metas
            key = re.split(r"[:/#]", (element.get(attribute) or "").strip())[-1].lower()
            field = _PROP_FIELDS.get(key)
            if field is None:
                continue
            raw = _element_value(element)
            if not raw:
                continue
            value: Any = raw
            if field == "price":
                value, _ = parse_price(raw, declared=element.get("content") is not None)
            elif field == "availability":
                value = availability_name(raw)
            if value:
                yield Candidate(field, value, source, evidence_of(
                    etree.tostring(element, encoding="unicode", with_tail=False)[:400]))


def _element_value(element: etree._Element) -> str:
    for attribute in ("content", "href", "value", "datetime"):
        found = element.get(attribute)
        if found and found.strip():
            return found.strip()[:200]
    return " ".join("".join(element.itertext())[:400].split())[:200]


def rdfa_elements(root: etree._Element) -> list[etree._Element]:
    """Elements with an RDFa ``property`` other than ``<meta>`` (read with the metas)."""
    found: list[etree._Element] = root.xpath("//*[@property][not(self::meta)]")
    return found[:MAX_RDFA]


def url_tokens(page_url: str) -> set[str]:
    """The alphanumeric words of a URL, lower-cased: identifiers a URL carries."""
    return {t.lower() for t in _TOKEN.findall(page_url)}

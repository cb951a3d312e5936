"""One page's fields for one schema: candidates from every source, the first one per field
that validates and is on the page, and where each value came from.

:class:`FieldReader` is made before the tree is cleaned (it reads scripts, ``<meta>``,
buttons, which cleaning drops) and finished with the visible text the handler made after
cleaning. Sources, most trusted first: declared data (JSON-LD, microdata, RDFa), product
meta tags and ``itemprop`` elements, JSON embedded for scripts, the visible page. A value is
kept only when it is on the page (:func:`handlers.fields.values.on_page`) and valid against
its property's schema; otherwise it is dropped, the drop recorded, and the next candidate
tried.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from lxml import etree

from handlers.fields.candidates import SEEN_BONUS, Candidate, evidence_of
from handlers.fields.declared import (
    declared_candidates,
    itemprop_candidates,
    meta_candidates,
    rdfa_elements,
    url_tokens,
)
from handlers.fields.embedded import embedded_candidates, json_values
from handlers.fields.values import _SIGNS, numbers_in, on_page
from handlers.fields.visible import (
    button_labels,
    code_candidates,
    headings,
    price_candidates,
    product_span,
    shown_text,
    stock_candidates,
    url_code_candidates,
)
from handlers.structured.collect import Declared
from pipeline.core.field_schemas import load_schema

MAX_DROPS = 20
_NORMAL = re.compile(r"[^a-z0-9]")
# Other names a user's schema may give a field (normalised: lower case, letters and digits).
_ALIASES = {"productname": "name", "headline": "title", "author": "byline",
            "authors": "byline", "datepublished": "published", "datemodified": "modified",
            "inlanguage": "language", "lang": "language", "pricecurrency": "currency",
            "stock": "availability", "instock": "availability", "brandname": "brand",
            "ean": "gtin", "upc": "gtin", "gtin13": "gtin", "imageurl": "image",
            "ratingvalue": "rating", "reviewcount": "review_count",
            "reviews": "review_count", "productid": "sku", "model": "mpn",
            "startdate": "start", "enddate": "end", "hiringorganization": "organization",
            "company": "organization", "dateposted": "posted"}
_PRODUCT_ONLY = frozenset({"price", "currency", "availability", "sku", "gtin", "mpn"})


def _normal(name: str) -> str:
    return _NORMAL.sub("", name.lower())


class FieldReader:
    """Reads one page's fields for the schema ``schema_text`` (see
    :func:`pipeline.core.field_schemas.schema_text`): made on the parsed tree before it is
    cleaned, then :meth:`finish` ed on the cleaned page."""

    def __init__(self, schema_text: str, root: etree._Element, *, source: str,
                 base_url: str, title: str | None, declared: Declared,
                 metas: list[etree._Element], props: list[etree._Element]) -> None:
        self.schema = load_schema(schema_text)
        self.schema_text = schema_text
        self.base_url = base_url
        self.source = source
        # The page's headline as the metadata reader chose it (cross-checked with the
        # declared titles), else its first <h1>: the product's name.
        self.headings = headings(root)
        self.heading = title or next(iter(self.headings), "")
        wanted = {_ALIASES.get(n, n) for n in map(_normal, self.schema.get("properties", {}))}
        # Only a schema asking for what only products have reads the product sources.
        self.product = bool(wanted & _PRODUCT_ONLY)
        self.marked: list[Candidate] = []
        self.buttons: list[str] = []
        self.scripts: list[tuple[str, str]] = []
        self.og_product = False
        if not self.product:
            return
        self.buttons = button_labels(root)
        self.marked.extend(declared_candidates(declared, self.heading, base_url))
        self.marked.extend(itemprop_candidates(props, rdfa_elements(root)))
        self.marked.extend(meta_candidates(metas))
        self.og_product = any((m.get("content") or "").lower() == "product" and (
            m.get("property") or m.get("name") or "").lower() == "og:type" for m in metas)
        # The scripts' text, read later only if the page proves to be a product's with a
        # field still open (cleaning drops the elements).
        self.scripts = [(s.get("type") or "", s.text or "") for s in root.iter("script")]

    def finish(self, page: etree._Element, title: str | None, metadata: dict[str, Any]
               ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(fields, fields_meta) for the page, ``page`` its cleaned body (call it before
        the tree is cut to the main content)."""
        visible = shown_text(page)
        properties: dict[str, Any] = self.schema.get("properties", {})
        pool = self._pool(visible, title, metadata)
        fields: dict[str, Any] = {}
        meta: dict[str, Any] = {}
        drops: list[dict[str, Any]] = []
        for name, spec in properties.items():
            wanted = _normal(name)
            key = wanted if wanted in pool else _ALIASES.get(wanted, wanted)
            fields[name] = None
            for candidate in pool.get(key, ()):
                value = _coerce(candidate.value, spec)
                problem = _invalid(self.schema_text, name, value)
                if problem is None and not _found(candidate, value, visible):
                    problem = "not found on the page"
                if problem is not None:
                    if len(drops) < MAX_DROPS:
                        drops.append({"field": name, "value": evidence_of(value),
                                      "source": candidate.source, "reason": problem})
                    continue
                fields[name] = value
                seen = candidate.source == "page" or on_page(value, visible)
                meta[name] = {"source": candidate.source, "evidence": candidate.evidence,
                              "confidence": round(min(1.0, candidate.trust +
                                                      (SEEN_BONUS if seen else 0)), 2)}
                break
        filled = sum(value is not None for value in fields.values())
        status = "empty" if not filled else "complete" if filled == len(fields) else "partial"
        return fields, {"status": status, "fields": meta, "dropped": drops}

    def _pool(self, visible: str, title: str | None,
              metadata: dict[str, Any]) -> dict[str, list[Candidate]]:
        """Every candidate by normalised field name, most trusted first."""
        pool: dict[str, list[Candidate]] = {}
        for candidate in self._ordered(visible, metadata):
            pool.setdefault(_normal(candidate.field), []).append(candidate)
        for candidate in _article(title, metadata):
            pool.setdefault(_normal(candidate.field), []).append(candidate)
        for candidate in _groups(metadata):
            pool.setdefault(_normal(candidate.field), []).append(candidate)
        if "sku" in pool:
            pool["sku"] = _rank_codes(pool["sku"], self.base_url, visible)
        if "price" in pool:
            pool["price"] = _sale_first(pool["price"])
        if "availability" in pool:
            pool["availability"] = _buyable_first(pool["availability"])
        return pool

    def _priced_scripts(self) -> bool:
        """Whether a script names a price (``"price":``, ``salePrice``): an app's page
        holds its product there and shows it only once rendered."""
        return any('rice"' in body or "rice'" in body for _, body in self.scripts)

    def _ordered(self, visible: str, metadata: dict[str, Any]) -> Iterator[Candidate]:
        yield from self.marked
        if not self.product:
            return
        span = product_span(visible, [self.heading, *self.headings])
        hint = next((c.value for c in self.marked if c.field == "currency"), None)
        prices = list(price_candidates(visible, span, hint))
        offered = next((c.evidence for c in (*self.marked, *prices) if c.field == "price"),
                       None)
        stock = list(stock_candidates(visible, span, self.buttons, "", offered))
        found = {c.field for c in self.marked}
        # A page that declares no product and shows neither a price nor a stock line or a
        # buy button is no product's page: the costlier readers below are not run on it.
        if not (found & {"price", "sku", "availability"} or prices or stock
                or self.og_product or self._priced_scripts()):
            return
        if not stock:  # now the page's markup too (a buy control that is no <button>)
            stock = list(stock_candidates(visible, span, self.buttons, self.source, offered))
        if not {"price", "sku", "availability"} <= found:
            embedded = list(embedded_candidates(json_values(self.scripts), self.heading,
                                                url_tokens(self.base_url)))
            yield from embedded
            found |= {c.field for c in embedded}
        yield from prices
        yield from stock
        yield from code_candidates(visible, span)
        yield from url_code_candidates(self.base_url, metadata.get("canonical_url"))


def _sale_first(candidates: list[Candidate]) -> list[Candidate]:
    """Price candidates with a discounted price the page shows first when the most trusted
    one is the price before the discount (declared data often gives the list price)."""
    sale = next((c for c in candidates if c.source == "page"
                 and c.evidence.endswith("(the discounted price)")), None)
    if sale is None or not candidates or candidates[0] is sale:
        return candidates
    top = candidates[0]
    if str(top.value) != str(sale.value) and on_page(top.value, sale.evidence):
        return [sale, *(c for c in candidates if c is not sale)]
    return candidates


_CANNOT_ORDER = frozenset({"OutOfStock", "SoldOut", "Discontinued"})


def _buyable_first(candidates: list[Candidate]) -> list[Candidate]:
    """Availability candidates with the page's own buy button first when the most trusted
    one declares the product out of stock: declared data is often the first variant's or
    stale, while an enabled button labelled to buy, on no other card of the page, is what
    a reader can press. (A stock phrase does not get this: those near a product are as
    often a variant's or a neighbour's.)"""
    if not candidates or candidates[0].source == "page" or \
            candidates[0].value not in _CANNOT_ORDER:
        return candidates
    button = next((c for c in candidates if c.source == "page"
                   and c.evidence.startswith("<button>")), None)
    if button is None:
        return candidates
    return [button, *(c for c in candidates if c is not button)]


def _rank_codes(candidates: list[Candidate], page_url: str, visible: str
                ) -> list[Candidate]:
    """SKU candidates, surest first: a code the page's URL also holds (the page names its
    item by it); then, when no declared code is shown on the page but a labelled one is
    ("Product code: 83810610"), the shown one; then by trust; last, a code read from the
    URL alone."""
    address = page_url.lower()

    def rank(item: tuple[int, Candidate]) -> tuple[int, int]:
        index, candidate = item
        from_url = candidate.source == "page" and candidate.evidence.startswith("http")
        if from_url:
            return 4, index
        if _in_url(str(candidate.value).lower(), address):
            return 0, index
        if candidate.source == "page":
            return (1 if hidden_declared else 3), index
        return 2, index

    declared = [c for c in candidates if c.source not in ("page", "llm")]
    hidden_declared = bool(declared) and not any(
        on_page(c.value, visible) for c in declared)
    return [c for _, c in sorted(enumerate(candidates), key=rank)]


def _in_url(value: str, address: str) -> bool:
    """``value`` is a whole part of the (lower-cased) URL ``address``."""
    start = address.find(value) if len(value) >= 4 else -1
    while start >= 0:
        end = start + len(value)
        if (start == 0 or not address[start - 1].isalnum()) and (
                end == len(address) or not address[end].isalnum()):
            return True
        start = address.find(value, start + 1)
    return False


def _article(title: str | None, metadata: dict[str, Any]) -> Iterator[Candidate]:
    """The article fields, from the readers behind the record's title and metadata."""
    articles = metadata.get("structured", {}).get("Article") or [{}]
    declared = articles[0]
    source = declared.get("source", "meta") if declared else "meta"
    for field, value in (("title", title), ("byline", metadata.get("byline")),
                         ("published", metadata.get("published")),
                         ("modified", metadata.get("modified")),
                         ("language", metadata.get("lang"))):
        if value:
            yield Candidate(field, value, source if declared else "meta", evidence_of(value))


def _groups(metadata: dict[str, Any]) -> Iterator[Candidate]:
    """The first declared recipe, event and job posting's normalised fields."""
    structured = metadata.get("structured", {})
    for group in ("Recipe", "Event", "JobPosting", "Product", "Article"):
        objects = structured.get(group) or []
        if not objects:
            continue
        first = objects[0]
        source = first.get("source", "json-ld")
        for field, value in first.items():
            if field in ("type", "source"):
                continue
            if field == "authors" and group == "Article":
                field = "byline"
                value = ", ".join(value)
            yield Candidate(field, value, source, evidence_of({field: value}))


def _coerce(value: Any, spec: Any) -> Any:
    """``value`` as the property's type wants it (a decimal string where a string is
    wanted, a number where a number is)."""
    if not isinstance(spec, dict):
        return value
    kinds = spec.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if isinstance(value, str) and "string" not in kinds:
        if "integer" in kinds and re.fullmatch(r"\d+", value.replace(",", "")):
            return int(value.replace(",", ""))
        if "number" in kinds:
            try:
                return float(value)
            except ValueError:
                return value
    if isinstance(value, int | float) and not isinstance(value, bool) and "string" in kinds \
            and "number" not in kinds and "integer" not in kinds:
        return str(value)
    if isinstance(value, list) and "array" not in kinds and "string" in kinds:
        return ", ".join(map(str, value))
    return value


@lru_cache(maxsize=512)
def _validator(schema_text: str, name: str) -> Any:
    from jsonschema import validators

    spec = load_schema(schema_text)["properties"][name]
    if isinstance(spec, bool):
        spec = {} if spec else {"not": {}}
    cls = validators.validator_for(spec, default=validators.Draft202012Validator)
    return cls(spec)


def _invalid(schema_text: str, name: str, value: Any) -> str | None:
    error = next(iter(_validator(schema_text, name).iter_errors(value)), None)
    return None if error is None else f"invalid: {error.message}"[:200]


def _found(candidate: Candidate, value: Any, visible: str) -> bool:
    """Whether the value is on the page: in the markup or text it was read from, or in the
    visible text. A name of a vocabulary (availability, a currency code) is read from the
    page's words or signs, so it is on the page when its evidence is."""
    if isinstance(value, str) and re.fullmatch(r"[A-Z]{3}", value):
        signs = [s for s, code in _SIGNS.items() if code == value]
        return any(on_page(sign, candidate.evidence, visible) for sign in [value, *signs])
    if candidate.field == "availability":
        return candidate.source != "llm" or on_page(value, visible)
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        tail = value.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
        return on_page(tail, candidate.evidence, visible)
    if isinstance(value, int | float | str) and not isinstance(value, bool) and bool(
            numbers_in(str(value))) and re.fullmatch(r"[\d.,]+", str(value)):
        return on_page(str(value), candidate.evidence, visible)
    return on_page(value, candidate.evidence, visible)

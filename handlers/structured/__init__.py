"""The data a page declares: schema.org JSON-LD and microdata, OpenGraph.

The HTML handler reads it once per page (:func:`read_declared`, before cleaning) into
``metadata.structured`` (:func:`structured_objects`: normalised objects by group — Article,
Product, Recipe, FAQPage, Event, BreadcrumbList, Organization, Person, VideoObject,
JobPosting), ``metadata.og`` and, on request, ``metadata.structured_raw``
(:func:`raw_blocks`).

Code inside a handler reads the normalised objects typed: ``structured_of(metadata)`` is the
field as a :class:`Structured` (``.get("Product", [])`` is a ``list[Product]``), and
:func:`main_product` the page's first named product. A small own reader on the tree the
handler already parsed: extruct cost more per page and to import, and failed whole pages on
JSON-LD that this reads (benchmarks/README.md, "Structured data").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

from handlers.structured.collect import (
    Declared,
    raw_blocks,
    read_declared,
    structured_objects,
)
from handlers.structured.schema import (
    GROUPS,
    Article,
    BreadcrumbList,
    Event,
    FAQPage,
    JobPosting,
    Offer,
    Organization,
    Person,
    Product,
    Recipe,
    VideoObject,
)


class Structured(TypedDict, total=False):
    """``metadata.structured``: each group's objects, in document order."""

    Article: list[Article]
    Product: list[Product]
    Recipe: list[Recipe]
    FAQPage: list[FAQPage]
    Event: list[Event]
    BreadcrumbList: list[BreadcrumbList]
    Organization: list[Organization]
    Person: list[Person]
    VideoObject: list[VideoObject]
    JobPosting: list[JobPosting]


def structured_of(metadata: Mapping[str, Any]) -> Structured:
    """A page's ``metadata.structured``, typed (empty when the page declares nothing)."""
    value = metadata.get("structured")
    return cast(Structured, value if isinstance(value, dict) else {})


def main_product(metadata: Mapping[str, Any]) -> Product | None:
    """The first product the page declares with a name, or None."""
    return next((p for p in structured_of(metadata).get("Product", []) if p.get("name")), None)


__all__ = [
    "GROUPS",
    "Article",
    "BreadcrumbList",
    "Declared",
    "Event",
    "FAQPage",
    "JobPosting",
    "Offer",
    "Organization",
    "Person",
    "Product",
    "Recipe",
    "Structured",
    "VideoObject",
    "main_product",
    "raw_blocks",
    "read_declared",
    "structured_objects",
    "structured_of",
]

"""What kind of page this is, where the page says so cheaply: ``metadata.page_type``.

From the types the page declares — JSON-LD ``@type``, microdata ``itemtype``, ``og:type`` —
and the generator a documentation site names in ``<meta name="generator">``. A page that
declares nothing gets no type here (the extractor may still find a discussion by its
structure). Strongest first: a discussion or a product page often also declares an article
or a list somewhere on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

FORUM, PRODUCT, DOCS, ARTICLE, LISTING = "forum", "product", "docs", "article", "listing"

# schema.org type names (the last part of an itemtype URL) → page type, strongest first.
_SCHEMA_TYPES: tuple[tuple[str, frozenset[str]], ...] = (
    (FORUM, frozenset({"DiscussionForumPosting", "QAPage"})),
    (PRODUCT, frozenset({"Product", "ProductGroup", "IndividualProduct", "ProductModel"})),
    (DOCS, frozenset({"TechArticle", "APIReference"})),
    (ARTICLE, frozenset({"Article", "NewsArticle", "BlogPosting", "Report", "ScholarlyArticle",
                         "LiveBlogPosting", "OpinionNewsArticle", "AnalysisNewsArticle",
                         "ReportageNewsArticle", "ReviewNewsArticle", "SatiricalArticle",
                         "SocialMediaPosting", "Review"})),
    (LISTING, frozenset({"CollectionPage", "SearchResultsPage", "OfferCatalog"})),
)
_OG_TYPES = ((FORUM, re.compile(r"forum|discussion", re.I)),
             (PRODUCT, re.compile(r"^(?:og:)?product(?:\.item)?$|:product$", re.I)),
             (LISTING, re.compile(r"^product\.group$", re.I)),
             (ARTICLE, re.compile(r"^article$", re.I)))
# Tools that build documentation sites and say so in <meta name="generator">.
_DOCS_GENERATORS = re.compile(
    r"\b(?:sphinx|mkdocs|docusaurus|mdbook|rustdoc|gitbook|vitepress|docfx|antora|starlight|"
    r"nextra|jsdoc|typedoc|doxygen|javadoc|pdoc|hexdocs|readthedocs)\b", re.I)


def _type_names(value: Any) -> Iterable[str]:
    values = value if isinstance(value, list) else [value]
    return (str(v).rsplit("/", 1)[-1] for v in values if isinstance(v, str))


def declared_types(itemtypes: list[str], objects: list[dict[str, Any]]) -> set[str]:
    """schema.org type names the page declares in JSON-LD and microdata (``itemtypes``: the
    page's ``itemtype`` values)."""
    names = {name for item in objects for name in _type_names(item.get("@type"))}
    for itemtype in itemtypes:
        names.update(_type_names(str(itemtype).split()))
    return names


def page_type(itemtypes: list[str], meta: dict[str, str],
              objects: list[dict[str, Any]]) -> str | None:
    """``forum``, ``product``, ``docs``, ``article`` or ``listing`` when the page declares
    it (``itemtypes``: its ``itemtype`` values), else None."""
    declared = declared_types(itemtypes, objects)
    for kind, names in _SCHEMA_TYPES:
        if kind == ARTICLE and _DOCS_GENERATORS.search(meta.get("generator", "")):
            return DOCS
        if declared & names:
            return kind
    og_type = meta.get("og:type", "")
    for kind, pattern in _OG_TYPES:
        if pattern.search(og_type):
            return kind
    if _DOCS_GENERATORS.search(meta.get("generator", "")):
        return DOCS
    return None

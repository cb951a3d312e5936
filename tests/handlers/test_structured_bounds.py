"""Structured data on hostile pages: whatever a script block or microdata holds, reading it
never raises, and what reaches the record stays bounded (objects, sizes, depth)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handlers.html import HTML_HANDLER
from handlers.html_dom import parse
from handlers.registry import HandlerContext
from handlers.structured import GROUPS, raw_blocks, read_declared, structured_objects
from handlers.structured.collect import PER_GROUP, RAW_CHARS, STRUCTURED_CHARS
from handlers.structured.jsonld import MAX_BLOCKS, json_ld_values
from handlers.structured.microdata import MAX_DEPTH

URL = "https://hostile.example/page"
TYPES = ["Article", "NewsArticle", "Product", "Recipe", "FAQPage", "Event", "BreadcrumbList",
         "Organization", "Person", "VideoObject", "JobPosting", "ItemList", "WebPage", "Offer"]


def _page(blocks: list[str], body: str = "<p>x</p>") -> str:
    scripts = "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks)
    return f"<html><head>{scripts}</head><body>{body}</body></html>"


def _read(html: str, raw: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    root = parse(html)
    declared = read_declared(root, URL,
                             typed=[e for e in root.iter() if e.get("itemtype") is not None],
                             props=[e for e in root.iter() if e.get("itemprop") is not None])
    return structured_objects(declared), raw_blocks(declared) if raw else {}


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _assert_bounded(structured: dict[str, Any], raw: dict[str, Any]) -> None:
    assert set(structured) <= set(GROUPS)
    assert all(1 <= len(objects) <= PER_GROUP for objects in structured.values())
    assert len(json.dumps(structured, ensure_ascii=False)) <= STRUCTURED_CHARS + 1_000
    assert len(json.dumps(raw, ensure_ascii=False)) <= RAW_CHARS + 100
    assert _depth(structured) <= 6  # group → list → object → offers/questions → item
    json.dumps(structured, allow_nan=False)  # no NaN or Infinity reaches a record
    json.dumps(raw, allow_nan=False)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(
        st.sampled_from(["@type", "@id", "@graph", "name", "headline", "author", "offers",
                         "price", "image", "url", "itemListElement", "item", "mainEntity",
                         "acceptedAnswer", "text", "recipeInstructions", "location",
                         "address", "baseSalary", "value", "aggregateRating", "brand",
                         "priceSpecification", "nutrition", "datePublished"])
        | st.text(max_size=10), children, max_size=6),
    max_leaves=40)
typed_nodes = st.builds(lambda kind, ident, rest: {"@type": kind, "@id": ident, **rest},
                        st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), max_size=3),
                        st.sampled_from(["#a", "#b", "#c"]),
                        st.dictionaries(st.text(max_size=12), json_values, max_size=6))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(max_size=300), max_size=4))
def test_any_script_text_never_raises_and_stays_bounded(blocks: list[str]) -> None:
    # Text that would end the <script> element is not script content.
    blocks = [b.replace("</", "<\\/") for b in blocks]
    structured, raw = _read(_page(blocks), raw=True)
    _assert_bounded(structured, raw)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(typed_nodes | json_values, max_size=5))
def test_any_json_ld_graph_never_raises_and_stays_bounded(nodes: list[Any]) -> None:
    block = json.dumps({"@context": "https://schema.org", "@graph": nodes})
    structured, raw = _read(_page([block.replace("</", "<\\/")]), raw=True)
    _assert_bounded(structured, raw)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["div", "span", "meta", "a", "img", "time"]),
                          st.sampled_from(["", "itemscope", "itemprop"]),
                          st.sampled_from(TYPES), st.text(max_size=20)), max_size=25))
def test_any_microdata_never_raises_and_stays_bounded(parts: list[tuple[str, str, str, str]]
                                                      ) -> None:
    body = "".join(
        f'<{tag} {"itemscope itemtype=https://schema.org/" + kind if mark == "itemscope" else ""}'
        f' itemprop="{"name" if mark == "itemprop" else "offers"}" content="{escape(text)}"'
        f' href="{escape(text)}" itemref="a b">{escape(text)}'
        for tag, mark, kind, text in parts)
    structured, raw = _read(_page([], body), raw=True)
    _assert_bounded(structured, raw)


def test_deeply_nested_json_is_skipped_or_cut() -> None:
    structured, raw = _read(_page(["[" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000,
                                   '{"@type": "Article", "headline": "Kept"}']), raw=True)
    assert structured["Article"][0]["headline"] == "Kept"
    _assert_bounded(structured, raw)


def test_a_thousand_products_are_cut_to_the_group_limit() -> None:
    many = [{"@type": "Product", "name": f"Item {i}", "description": "x" * 900}
            for i in range(1_000)]
    structured, raw = _read(_page([json.dumps(many)]), raw=True)
    assert 1 <= len(structured["Product"]) <= PER_GROUP
    _assert_bounded(structured, raw)


def test_huge_strings_are_clipped() -> None:
    structured, raw = _read(_page([json.dumps(
        {"@type": "FAQPage", "mainEntity": [
            {"@type": "Question", "name": "q" * 5_000,
             "acceptedAnswer": {"text": "<b>a</b>" * 1_000}}] * 60})]), raw=True)
    questions = structured["FAQPage"][0]["questions"]  # fewer questions, not none
    assert 10 <= len(questions) <= 50
    assert all(len(q["question"]) <= 1_000 and len(q["answer"]) <= 1_000 for q in questions)
    _assert_bounded(structured, raw)


def test_reference_cycles_end() -> None:
    block = json.dumps({"@graph": [
        {"@type": "WebPage", "@id": "#a", "mainEntity": {"@id": "#b"}, "x": {"@id": "#a"}},
        {"@type": "ItemList", "@id": "#b", "itemListElement": [{"@id": "#a"}, {"@id": "#b"}]},
        {"@type": "Article", "@id": "#c", "author": {"@id": "#c"}, "headline": "Loop"}]})
    structured, _ = _read(_page([block]))
    assert structured["Article"][0]["headline"] == "Loop"


def test_microdata_nesting_and_itemref_cycles_are_bounded() -> None:
    nested = ('<div itemprop="isPartOf" itemscope itemtype="https://schema.org/WebPage">'
              '<span itemprop="name">n</span>') * 300 + "</div>" * 300
    # Two items each naming the other through itemref (neither inside another item).
    cyclic = ('<div id="a" itemprop="knows" itemscope itemtype="https://schema.org/Person" '
              'itemref="b"><span itemprop="name">Ann</span></div>'
              '<div id="b" itemprop="knows" itemscope itemtype="https://schema.org/Person" '
              'itemref="a"><span itemprop="name">Bob</span></div>')
    html = _page([], cyclic + '<div itemscope itemtype="https://schema.org/Article">'
                 '<h1 itemprop="headline">Deep</h1>' + nested + "</div>")
    structured, raw = _read(html, raw=True)
    assert structured["Article"][0]["headline"] == "Deep"
    assert [p["name"] for p in structured["Person"]] == ["Ann", "Bob"]
    assert raw["microdata"][0]["knows"]["knows"] == ""  # the cycle ends where it closes
    assert _depth(raw) <= 2 * (MAX_DEPTH + 2) + 4
    _assert_bounded(structured, raw)


def test_too_many_blocks_are_not_all_read() -> None:
    blocks = [json.dumps({"@type": "Person", "name": f"P{i}"}) for i in range(500)]
    assert len(json_ld_values(parse(_page(blocks)))) == MAX_BLOCKS


def test_a_hostile_page_still_makes_a_bounded_record() -> None:
    blocks = ["{'@type': 'Product', 'name': 'x', " + "'a': [" * 5_000,
              json.dumps([{"@type": "Recipe", "name": "r", "recipeIngredient": [
                  f"i{n}" for n in range(2_000)], "recipeInstructions": "step\n" * 2_000}] * 30)]
    ctx = HandlerContext(url=URL, options={"structured_raw": True})
    metadata = HTML_HANDLER.handle(_page(blocks, "<p>" + "words " * 100 + "</p>").encode(),
                                   ctx).metadata
    assert len(metadata["structured"]["Recipe"][0]["ingredients"]) <= 50
    assert len(metadata["structured"]["Recipe"][0]["instructions"]) <= 50
    _assert_bounded(metadata["structured"], metadata.get("structured_raw", {}))

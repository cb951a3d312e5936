"""Fields by schema without a model (handlers.fields): each source on a hand-written page,
the order of trust between them, validation and the on-page check, and nothing read or
added when no schema is asked for."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.fields.values import availability_name, on_page, parse_price
from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext, HandlerOptions
from pipeline.core.errors import PipelineError
from pipeline.core.field_schemas import BUILTIN, schema_text
from pipeline.core.models import Document

URL = "https://shop.example/p/widget-AB12345"
PROSE = "<p>Plenty of readable prose about this fine product for the extractor.</p>" * 4


def page(body: str, head: str = "") -> str:
    return (f"<html><head><title>Widget | Shop</title>{head}</head>"
            f"<body><h1>Blue Widget</h1>{body}{PROSE}</body></html>")


def handled(html: str, schema: Any = "product") -> Document:
    options = HandlerOptions(schema=None if schema is None else schema_text(schema))
    return HTML_HANDLER.handle(html.encode(), HandlerContext(url=URL, options=options))


def ld(obj: Any) -> str:
    return f'<script type="application/ld+json">{json.dumps(obj)}</script>'


PRODUCT = {"@context": "https://schema.org", "@type": "Product", "name": "Blue Widget",
           "sku": "W-100", "gtin13": "4006381333931", "brand": {"@type": "Brand",
                                                                 "name": "Acme"},
           "offers": {"@type": "Offer", "price": "1299.00", "priceCurrency": "EUR",
                      "availability": "https://schema.org/InStock"}}


def test_no_schema_reads_nothing_and_adds_nothing() -> None:
    document = handled(page("<p>1.299,00 €</p>", ld(PRODUCT)), schema=None)
    assert document.fields is None and document.fields_meta is None


def test_json_ld_product_fills_the_schema_with_its_sources() -> None:
    document = handled(page("<p>Price 1.299,00 €</p>", ld(PRODUCT)))
    assert document.fields is not None and document.fields_meta is not None
    assert list(document.fields) == list(BUILTIN["product"]["properties"])
    assert {k: document.fields[k] for k in ("name", "price", "currency", "availability",
                                            "sku", "gtin", "brand")} == {
        "name": "Blue Widget", "price": "1299", "currency": "EUR",
        "availability": "InStock", "sku": "W-100", "gtin": "4006381333931", "brand": "Acme"}
    meta = document.fields_meta["fields"]
    assert meta["price"]["source"] == "json-ld" and "1299.00" in meta["price"]["evidence"]
    # shown on the page as 1.299,00: seen, so surer than the declaration alone
    assert meta["price"]["confidence"] > meta["gtin"]["confidence"]
    assert document.fields_meta["status"] == "partial"  # no image, rating, ...
    assert document.fields["mpn"] is None


def test_any_offer_in_stock_makes_the_product_in_stock() -> None:
    product = {**PRODUCT, "offers": [
        {"@type": "Offer", "price": "10", "availability": "http://schema.org/OutOfStock"},
        {"@type": "Offer", "price": "10", "availability": "http://schema.org/InStock"}]}
    assert handled(page("", ld(product))).fields["availability"] == "InStock"  # type: ignore[index]


def test_the_product_named_by_the_heading_wins_over_recommendations() -> None:
    other = {**PRODUCT, "name": "Red Gadget", "sku": "R-9"}
    fields = handled(page("", ld(other) + ld(PRODUCT))).fields
    assert fields is not None and fields["sku"] == "W-100"


def test_product_meta_tags_sale_price_first() -> None:
    head = ('<meta property="product:price:amount" content="36.49">'
            '<meta property="product:sale_price:amount" content="32.00">'
            '<meta property="product:price:currency" content="PLN">'
            '<meta property="product:availability" content="instock">')
    document = handled(page("", head))
    assert document.fields is not None and document.fields_meta is not None
    assert (document.fields["price"], document.fields["currency"],
            document.fields["availability"]) == ("32", "PLN", "InStock")
    assert document.fields_meta["fields"]["price"]["source"] == "meta"


def test_itemprop_outside_any_item_and_rdfa() -> None:
    body = ('<span itemprop="price" content="19.90">19,90 €</span>'
            '<span property="schema:sku">SKU-77</span>')
    fields = handled(page(body)).fields
    assert fields is not None and (fields["price"], fields["sku"]) == ("19.9", "SKU-77")


def test_embedded_state_object_named_by_the_heading() -> None:
    state = {"catalog": {"items": [
        {"name": "Red Gadget", "sku": "R-9", "price": 5, "inStock": False},
        {"name": "Blue Widget", "sku": "B-42", "salePrice": {"value": 24.5,
                                                              "currency": "USD"},
         "inStock": True}]}}
    script = f"<script>window.__STATE__ = {json.dumps(state)};</script>"
    document = handled(page("<p>Now 24.50</p>" + script))
    assert document.fields is not None and document.fields_meta is not None
    assert (document.fields["price"], document.fields["sku"],
            document.fields["availability"]) == ("24.5", "B-42", "InStock")
    assert document.fields_meta["fields"]["sku"]["source"] == "embedded-json"


def test_embedded_stock_object_and_status_strings() -> None:
    for stock, expected in (({"stockLevel": 0, "availableToOrder": False}, "OutOfStock"),
                            ({"status": "x", "isPurchasable": True}, "InStock"),
                            ("OUT_OF_STOCK", "OutOfStock")):
        state = {"product": {"name": "Blue Widget", "price": 5, "availability": stock}}
        script = f"<script>var data = {json.dumps(state)};</script>"
        document = handled(page("<p>$5</p>" + script))
        assert document.fields is not None and document.fields_meta is not None
        assert document.fields["availability"] == expected, stock
        assert document.fields_meta["fields"]["availability"]["source"] == "embedded-json"


def test_visible_page_price_beside_heading_code_label_and_stock_phrase() -> None:
    body = "<p>£1,149.00</p><p>Product code: 83810610</p><p>Out of stock</p>"
    document = handled(page(body))
    assert document.fields is not None and document.fields_meta is not None
    assert (document.fields["price"], document.fields["currency"], document.fields["sku"],
            document.fields["availability"]) == ("1149", "GBP", "83810610", "OutOfStock")
    assert {m["source"] for m in document.fields_meta["fields"].values()} == {"page"}


def test_a_recommended_or_former_price_is_passed_over() -> None:
    for shown in ("RRP: £55.00 Price: £48.99", "Unverb. Preisempf.: 9,99 € Preis: 8,33 €"):
        fields = handled(page(f"<p>{shown}</p>")).fields
        assert fields is not None and fields["price"] in ("48.99", "8.33")


def test_a_discounted_price_beside_the_declared_list_price_wins() -> None:
    product = {**PRODUCT, "offers": {"@type": "Offer", "price": "219.99",
                                     "priceCurrency": "EUR"}}
    document = handled(page("<p>EUR219.99</p><p>-50%</p><p>EUR110.00</p>", ld(product)))
    assert document.fields is not None and document.fields_meta is not None
    assert document.fields["price"] == "110"
    assert document.fields_meta["fields"]["price"]["source"] == "page"
    # no discount beside them: the declared price stands
    document = handled(page("<p>EUR219.99</p><p>EUR110.00</p>", ld(product)))
    assert document.fields is not None and document.fields["price"] == "219.99"


def test_buy_button_means_in_stock() -> None:
    fields = handled(page("<p>€ 9,99</p><button>Ajouter au panier</button>")).fields
    assert fields is not None and fields["availability"] == "InStock"


def test_the_pages_own_buy_button_over_a_declared_out_of_stock() -> None:
    stale = {**PRODUCT, "offers": {**PRODUCT["offers"],
                                   "availability": "https://schema.org/OutOfStock"}}
    document = handled(page("<button>Add to your basket</button>", ld(stale)))
    assert document.fields is not None and document.fields_meta is not None
    assert document.fields["availability"] == "InStock"
    assert document.fields_meta["fields"]["availability"]["source"] == "page"
    # a disabled button (waiting for a size) and one on every card of a list say nothing
    for buttons in ("<button disabled>Add to basket</button>",
                    '<button aria-disabled="true">Add to basket</button>',
                    "<button>Add to basket</button>" * 3):
        fields = handled(page(buttons, ld(stale))).fields
        assert fields is not None and fields["availability"] == "OutOfStock", buttons
    # without a declaration a disabled button is no buy signal either
    fields = handled(page("<button disabled>Add to basket</button>")).fields
    assert fields is not None and fields["availability"] is None


def test_a_stock_phrase_under_every_card_of_a_strip_is_not_the_products() -> None:
    strip = "".join(f"<div><p>Panel {n}</p><p>25,99 zł</p><p>Produkt niedostępny</p></div>"
                    for n in range(4))
    fields = handled(page(f"<p>32 zł</p><h2>Inne z serii</h2>{strip}")).fields
    assert fields is not None and (fields["price"], fields["availability"]) == (
        "32", "InStock")
    fields = handled(page("<p>32 zł</p><p>Produkt niedostępny</p>")).fields
    assert fields is not None and fields["availability"] == "OutOfStock"


def test_a_headline_not_shown_falls_back_to_the_h1_with_a_price_after_it() -> None:
    html = ("<html><head><title>Clinic - Health for all</title></head><body>"
            "<nav><h1>Services</h1><ul><li>Cardiology</li><li>Orthopaedics</li></ul></nav>"
            "<h1>Custom insoles with gait analysis</h1><p>-50% 270,00 Kn 540,00 Kn</p>"
            f"{PROSE}</body></html>")
    fields = handled(html).fields
    assert fields is not None
    assert (fields["price"], fields["currency"], fields["availability"]) == (
        "270", "HRK", "InStock")


def test_invalid_value_is_dropped_and_the_next_source_taken() -> None:
    schema = {"type": "object", "properties": {
        "sku": {"type": "string", "pattern": "^[0-9]+$"}, "price": {"type": "number"}}}
    document = handled(page("<p>Ours: W-100</p><p>Product code: 4781720</p>", ld(PRODUCT)),
                       schema=schema)
    assert document.fields == {"sku": "4781720", "price": 1299.0}
    assert document.fields_meta is not None
    drop = document.fields_meta["dropped"][0]
    assert (drop["field"], drop["source"], drop["value"]) == ("sku", "json-ld", "W-100")
    assert drop["reason"].startswith("invalid")


def test_a_code_the_url_holds_wins_then_a_shown_one_over_a_hidden_declaration() -> None:
    shown = "<p>Model number X-1</p><p>Item code: AB12345</p>"
    fields = handled(page(shown, ld(PRODUCT))).fields  # URL: .../widget-AB12345
    assert fields is not None and fields["sku"] == "AB12345"
    fields = handled(page("<p>Product code: 83810610</p>", ld(PRODUCT))).fields
    assert fields is not None and fields["sku"] == "83810610"  # W-100 is not shown
    fields = handled(page("<p>Ref W-100</p><p>Product code: 83810610</p>",
                          ld(PRODUCT))).fields
    assert fields is not None and fields["sku"] == "W-100"


def test_the_urls_own_identifier_is_the_last_resort_sku() -> None:
    html = page("<p>€ 12</p>",
                '<link rel="canonical" href="https://shop.example/item/133588510845">')
    document = handled(html)
    assert document.fields is not None and document.fields_meta is not None
    assert document.fields["sku"] == "133588510845"
    assert document.fields_meta["fields"]["sku"]["evidence"].startswith("https://")


def test_variants_declared_as_products_any_in_stock() -> None:
    sizes = [{**PRODUCT, "sku": f"W-{n}", "offers": {
        "@type": "Offer", "price": "10", "availability": f"https://schema.org/{state}"}}
        for n, state in ((1, "OutOfStock"), (2, "InStock"))]
    fields = handled(page("", ld(sizes))).fields
    assert fields is not None and fields["availability"] == "InStock"


def test_buy_control_named_in_markup_and_a_priced_ad() -> None:
    product = '<meta property="og:type" content="product">'
    control = '<img id="addToCartButton" alt="">'
    fields = handled(page(control, product)).fields
    assert fields is not None and fields["availability"] == "InStock"
    style = "<style>.add-to-cart{color:red}</style>"  # a style sheet names no control
    assert handled(page(style, product)).fields["availability"] is None  # type: ignore[index]
    # a page showing no sign of a product is not searched for one
    assert handled(page(control)).fields["availability"] is None  # type: ignore[index]
    priced = handled(page("<p>€ 20,- Verhandlungsbasis</p>"))
    assert priced.fields is not None and priced.fields_meta is not None
    assert priced.fields["availability"] == "InStock"
    assert priced.fields_meta["fields"]["availability"]["confidence"] < 0.9
    sold = handled(page("<p>€ 20</p><p>Sold out</p>")).fields
    assert sold is not None and sold["availability"] == "OutOfStock"


def test_a_page_without_product_signals_is_not_searched_for_codes() -> None:
    html = page("<p>Model number X-100 in our review</p>",
                '<link rel="canonical" href="https://news.example/item/133588510845">')
    fields = handled(html).fields
    assert fields is not None and fields["sku"] is None


def test_a_page_with_nothing_gives_nulls_and_empty_status() -> None:
    document = handled(page(""))
    assert document.fields is not None and document.fields_meta is not None
    assert set(document.fields.values()) == {None}
    assert document.fields_meta["status"] == "empty"


def test_article_schema_reads_the_metadata() -> None:
    html = page("", '<meta property="article:published_time" content="2024-05-01T10:00:00Z">'
                '<meta name="author" content="Jane Doe">').replace("<html>", '<html lang="de">')
    document = handled(html, schema="article")
    assert document.fields is not None
    assert document.fields == {"title": "Blue Widget", "byline": "Jane Doe",
                               "published": "2024-05-01T10:00:00+00:00", "modified": None,
                               "language": "de"}


@pytest.mark.parametrize(("raw", "hint", "expected"), [
    ("1.299,00 €", None, ("1299", "EUR")), ("$24.99", None, ("24.99", None)),
    ("30,000원~", None, ("30000", "KRW")), (12, "usd", ("12", "USD")),
    ("free", None, (None, None)), (0, None, (None, None))])
def test_parse_price(raw: Any, hint: str | None, expected: tuple[Any, Any]) -> None:
    assert parse_price(raw, hint) == expected


def test_a_declared_price_is_the_decimal_it_spells() -> None:
    assert parse_price("24.990", declared=True) == ("24.99", None)
    assert parse_price("24.990") == ("24990", None)  # shown on a page: a thousands dot


def test_on_page_numbers_in_any_formatting_and_text_normalised() -> None:
    assert on_page("1299", "now 1.299,00 €") and on_page("1299", "$1,299")
    assert on_page("24.5", "24,50") and not on_page("24.5", "245")
    assert on_page("Blue  WIDGET", "the blue widget here") and not on_page("Red", "blue")


def test_availability_names() -> None:
    assert availability_name("http://schema.org/InStock") == "InStock"
    assert availability_name("out of stock") == "OutOfStock"
    assert availability_name("NOT SOLD") is None
    # any case, a URL or a prefix, any separator
    for raw, name in (("HTTPS://SCHEMA.ORG/INSTOCK", "InStock"), ("in-stock", "InStock"),
                      ("OUT_OF_STOCK", "OutOfStock"), ("schema:SoldOut", "SoldOut"),
                      ("Pre-Order", "PreOrder"), ("limited-availability",
                                                  "LimitedAvailability")):
        assert availability_name(raw) == name, raw


def test_schema_errors_are_one_line_config_errors(tmp_path: Any) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "object", "properties": {"a": {"type": "nonsense"}}}')
    with pytest.raises(PipelineError) as error:
        schema_text(str(bad))
    assert error.value.kind == "config" and "\n" not in str(error.value)
    for spec in ("nope", str(tmp_path / "missing.json")):
        with pytest.raises(PipelineError):
            schema_text(spec)
    with pytest.raises(PipelineError, match="no properties"):
        schema_text({"type": "object"})


def test_article_fields_are_the_records_own_reading_on_the_dev_sets(news_dataset,
                                                                    modern_dataset):
    import gzip

    for dataset in (news_dataset, modern_dataset):
        truth = json.loads((dataset / "ground-truth.json").read_text(encoding="utf-8"))
        for page_id in sorted(truth)[:25]:
            body = gzip.decompress((dataset / "html" / f"{page_id}.html.gz").read_bytes())
            options = HandlerOptions(schema=schema_text("article"))
            try:
                document = HTML_HANDLER.handle(body, HandlerContext(
                    url=truth[page_id]["url"], options=options))
            except PipelineError:
                continue
            metadata = document.metadata
            assert document.fields == {
                "title": document.title, "byline": metadata.get("byline"),
                "published": metadata.get("published"), "modified": metadata.get("modified"),
                "language": metadata.get("lang")}, page_id

"""Structured data the page declares: JSON-LD, microdata and OpenGraph, normalised by type
into ``metadata.structured`` and ``metadata.og``; hand-written pages per type and per
malformation."""

from __future__ import annotations

import json
from typing import Any

from handlers.html import HTML_HANDLER
from handlers.html_dom import parse
from handlers.registry import HandlerContext
from handlers.structured import main_product, read_declared, structured_objects, structured_of

URL = "https://shop.example/p/1"
BODY = "<h1>Page</h1>" + "<p>Plenty of readable prose on the page for the extractor.</p>" * 5


def page(*blocks: str, head: str = "", body: str = BODY) -> str:
    scripts = "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks)
    return f"<html><head><title>Page</title>{head}{scripts}</head><body>{body}</body></html>"


def structured(html: str) -> dict[str, list[dict[str, Any]]]:
    root = parse(html)
    return structured_objects(read_declared(
        root, URL, typed=[e for e in root.iter() if e.get("itemtype") is not None],
        props=[e for e in root.iter() if e.get("itemprop") is not None]))


def handled(html: str, **options: Any) -> dict[str, Any]:
    ctx = HandlerContext(url=URL, format="markdown", options=options)
    return HTML_HANDLER.handle(html.encode(), ctx).metadata


def ld(obj: Any) -> str:
    return json.dumps(obj)


# --------------------------------------------------------------------------- types
def test_article_headline_authors_dates_image_publisher() -> None:
    found = structured(page(ld({
        "@context": "https://schema.org", "@type": "NewsArticle",
        "headline": "Rivers rise &amp; fall <b>again</b>",
        "author": [{"@type": "Person", "name": "Ana Lima"}, "Rui Costa"],
        "datePublished": "2024-03-01T08:00:00Z", "dateModified": "2024-03-02",
        "image": {"@type": "ImageObject", "url": "/img/river.jpg"},
        "publisher": {"@type": "Organization", "name": "Example News"},
        "keywords": "rivers, storms", "mainEntityOfPage": {"@id": "https://news.example/a"},
    })))
    assert found["Article"] == [{
        "type": "NewsArticle", "source": "json-ld", "headline": "Rivers rise & fall again",
        "authors": ["Ana Lima", "Rui Costa"], "published": "2024-03-01T08:00:00+00:00",
        "modified": "2024-03-02", "image": "https://shop.example/img/river.jpg",
        "publisher": "Example News", "url": "https://news.example/a",
        "keywords": ["rivers", "storms"]}]
    assert "Organization" not in found  # the publisher is part of the article


def test_product_with_one_offer_and_rating() -> None:
    found = structured(page(ld({
        "@type": "Product", "name": "Trail Shoe", "brand": {"@type": "Brand", "name": "Acme"},
        "sku": "TS-1", "gtin13": "0123456789012", "description": "<p>Light and grippy.</p>",
        "offers": {"@type": "Offer", "price": "89.90", "priceCurrency": "EUR",
                   "availability": "https://schema.org/InStock"},
        "aggregateRating": {"ratingValue": "4.6", "reviewCount": "1,204", "bestRating": 5},
    })))
    assert found["Product"] == [{
        "type": "Product", "source": "json-ld", "name": "Trail Shoe",
        "description": "Light and grippy.", "brand": "Acme", "sku": "TS-1",
        "gtin": "0123456789012", "price": 89.9, "currency": "EUR", "availability": "InStock",
        "rating": 4.6, "best_rating": 5, "review_count": 1204}]


def test_product_offers_as_a_list_and_as_an_aggregate() -> None:
    listed = structured(page(ld({"@type": "Product", "name": "Lamp", "offers": [
        {"@type": "Offer", "price": 20, "priceCurrency": "USD", "availability": "OutOfStock"},
        {"@type": "Offer", "priceSpecification": {"price": "18.5", "priceCurrency": "USD"},
         "seller": {"name": "Shop B"}}]})))["Product"][0]
    assert (listed["price"], listed["currency"], listed["availability"]) == (
        20, "USD", "OutOfStock")
    assert listed["offers"] == [
        {"price": 20, "currency": "USD", "availability": "OutOfStock"},
        {"price": 18.5, "currency": "USD", "seller": "Shop B"}]
    aggregate = structured(page(ld({"@type": "Product", "name": "Lamp", "offers": {
        "@type": "AggregateOffer", "lowPrice": "1.299,00", "highPrice": "1.499,00",
        "priceCurrency": "EUR", "offerCount": 3}})))["Product"][0]
    assert {k: aggregate[k] for k in ("low_price", "high_price", "offer_count", "price",
                                      "currency")} == {
        "low_price": 1299, "high_price": 1499, "offer_count": 3, "price": 1299,
        "currency": "EUR"}


def test_recipe_ingredients_instructions_times_and_yield() -> None:
    recipe = structured(page(ld({
        "@type": "Recipe", "name": "Pancakes", "recipeIngredient": ["2 eggs", "1 cup milk"],
        "recipeInstructions": [
            {"@type": "HowToSection", "name": "Batter", "itemListElement": [
                {"@type": "HowToStep", "text": "Whisk the eggs."},
                {"@type": "HowToStep", "text": "Add the milk."}]},
            {"@type": "HowToStep", "name": "Fry them."}],
        "prepTime": "PT10M", "cookTime": "pt15m", "totalTime": "25 minutes",
        "recipeYield": ["4", "4 pancakes"], "nutrition": {"calories": "210 kcal"},
    })))["Recipe"][0]
    assert recipe["ingredients"] == ["2 eggs", "1 cup milk"]
    assert recipe["instructions"] == ["Whisk the eggs.", "Add the milk.", "Fry them."]
    assert (recipe["prep_time"], recipe["cook_time"]) == ("PT10M", "PT15M")
    assert "total_time" not in recipe  # not an ISO 8601 duration
    assert recipe["yield"] == "4 / 4 pancakes"
    assert recipe["calories"] == "210 kcal"
    steps = structured(page(ld({"@type": "Recipe", "name": "Tea",
                                "recipeInstructions": "Boil water.\nSteep 3 minutes."})))
    assert steps["Recipe"][0]["instructions"] == ["Boil water.", "Steep 3 minutes."]


def test_faq_questions_and_answers() -> None:
    faq = structured(page(ld({"@type": "FAQPage", "mainEntity": [
        {"@type": "Question", "name": "Do you ship abroad?",
         "acceptedAnswer": {"@type": "Answer", "text": "<p>Yes, to <b>40</b> countries.</p>"}},
        {"@type": "Question", "name": "Can I return?",
         "suggestedAnswer": [{"@type": "Answer", "text": "Within 30 days."}]}]})))
    assert faq["FAQPage"][0]["questions"] == [
        {"question": "Do you ship abroad?", "answer": "Yes, to 40 countries."},
        {"question": "Can I return?", "answer": "Within 30 days."}]


def test_event_location_dates_and_price() -> None:
    event = structured(page(ld({
        "@type": "MusicEvent", "name": "Jazz Night", "startDate": "2025-06-01T20:00+02:00",
        "endDate": "2025-06-01T23:00+02:00",
        "location": {"@type": "Place", "name": "Blue Hall", "address": {
            "@type": "PostalAddress", "streetAddress": "1 Main St", "addressLocality": "Porto",
            "addressCountry": {"@type": "Country", "name": "PT"}}},
        "eventStatus": "https://schema.org/EventScheduled",
        "offers": {"price": 15, "priceCurrency": "EUR"}, "organizer": {"name": "Jazz Club"},
    })))["Event"][0]
    assert event == {
        "type": "MusicEvent", "source": "json-ld", "name": "Jazz Night",
        "start": "2025-06-01T20:00:00+02:00", "end": "2025-06-01T23:00:00+02:00",
        "location": "Blue Hall", "address": "1 Main St, Porto, PT", "organizer": "Jazz Club",
        "status": "EventScheduled", "price": 15, "currency": "EUR"}


def test_breadcrumbs_in_position_order() -> None:
    crumbs = structured(page(ld({"@type": "BreadcrumbList", "itemListElement": [
        {"@type": "ListItem", "position": 2, "name": "Shoes", "item": "/shoes"},
        {"@type": "ListItem", "position": 1, "item": {"@id": "/", "name": "Home"}}]})))
    assert crumbs["BreadcrumbList"][0]["items"] == [
        {"name": "Home", "url": "https://shop.example/"},
        {"name": "Shoes", "url": "https://shop.example/shoes"}]


def test_organization_person_video_and_job() -> None:
    found = structured(page(ld([
        {"@type": "LocalBusiness", "name": "Moving Co", "telephone": "+1 555 0100",
         "sameAs": ["https://social.example/moving", "not a url"], "logo": "/logo.png"},
        {"@type": "Person", "givenName": "Ada", "familyName": "Lovelace",
         "jobTitle": "Analyst", "worksFor": {"@type": "Organization", "name": "Engines"}},
        {"@type": "VideoObject", "name": "How to pack", "uploadDate": "2024-01-05",
         "duration": "PT2M30S", "thumbnailUrl": ["/t1.jpg", "/t2.jpg"],
         "embedUrl": "https://video.example/embed/1"},
        {"@type": "JobPosting", "title": "Mover", "datePosted": "2024-02-01",
         "hiringOrganization": {"name": "Moving Co"}, "employmentType": ["FULL_TIME"],
         "jobLocation": {"@type": "Place", "address": {"addressLocality": "Leeds"}},
         "baseSalary": {"@type": "MonetaryAmount", "currency": "GBP", "value": {
             "@type": "QuantitativeValue", "minValue": 24000, "maxValue": 28000,
             "unitText": "YEAR"}}, "jobLocationType": "TELECOMMUTE"},
    ])))
    assert found["Organization"] == [{
        "type": "LocalBusiness", "source": "json-ld", "name": "Moving Co",
        "logo": "https://shop.example/logo.png", "same_as": ["https://social.example/moving"],
        "telephone": "+1 555 0100"}]  # absent fields (url, address) are left out
    assert found["Person"][0] == {"type": "Person", "source": "json-ld",
                                  "name": "Ada Lovelace", "job_title": "Analyst",
                                  "works_for": "Engines"}
    video = found["VideoObject"][0]
    assert (video["uploaded"], video["duration"], video["thumbnail"]) == (
        "2024-01-05", "PT2M30S", "https://shop.example/t1.jpg")
    job = found["JobPosting"][0]
    assert {k: job[k] for k in ("organization", "location", "salary_min", "salary_max",
                                "salary_currency", "salary_unit", "remote")} == {
        "organization": "Moving Co", "location": "Leeds", "salary_min": 24000,
        "salary_max": 28000, "salary_currency": "GBP", "salary_unit": "YEAR", "remote": True}


def test_graph_references_and_nested_main_entity() -> None:
    found = structured(page(ld({"@context": "https://schema.org", "@graph": [
        {"@type": "WebPage", "@id": "#page", "mainEntity": {"@id": "#product"}},
        {"@type": ["Product", "Thing"], "@id": "#product", "name": "Kettle",
         "brand": {"@id": "#brand"}, "offers": {"@id": "#offer"}},
        {"@type": "Brand", "@id": "#brand", "name": "Boil"},
        {"@type": "Offer", "@id": "#offer", "price": 30, "priceCurrency": "GBP"},
        {"@type": "BlogPosting", "headline": "Kettles", "author": {"@id": "#jane"}},
        {"@type": "Person", "@id": "#jane", "name": "Jane Roe"}]})))
    assert [(p["name"], p["brand"], p["price"]) for p in found["Product"]] == [
        ("Kettle", "Boil", 30)]  # once, though the page also names it as its main entity
    assert found["Article"][0]["authors"] == ["Jane Roe"]
    assert found["Person"] == [{"type": "Person", "source": "json-ld", "name": "Jane Roe"}]


def test_item_list_members_and_several_blocks() -> None:
    found = structured(page(
        ld({"@type": "ItemList", "itemListElement": [
            {"@type": "ListItem", "position": 1, "item": {"@type": "Product", "name": "A"}},
            {"@type": "ListItem", "position": 2, "item": {"@type": "Product", "name": "B"}}]}),
        ld({"@type": "Organization", "name": "Shop"})))
    assert [p["name"] for p in found["Product"]] == ["A", "B"]
    assert found["Organization"][0]["name"] == "Shop"


def test_prefixed_and_lower_case_types() -> None:
    found = structured(page(ld([{"@type": "schema:Recipe", "name": "Soup"},
                                {"@type": "http://schema.org/Person", "name": "Bo"},
                                {"@type": "person", "name": "Cy"}])))
    assert [r["name"] for r in found["Recipe"]] == ["Soup"]
    assert [p["name"] for p in found["Person"]] == ["Bo", "Cy"]


# --------------------------------------------------------------------------- microdata
MICRODATA = """<div itemscope itemtype="https://schema.org/Product">
  <h1 itemprop="name">Desk Lamp</h1>
  <span itemprop="brand" itemscope itemtype="https://schema.org/Brand">
    <span itemprop="name">Glow</span></span>
  <meta itemprop="sku" content="DL-9">
  <img itemprop="image" src="/lamp.jpg" alt="">
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
    <span itemprop="price" content="24.00">$24</span>
    <meta itemprop="priceCurrency" content="USD">
    <link itemprop="availability" href="https://schema.org/InStock">In stock
  </div>
  <div itemprop="aggregateRating" itemscope>
    <span itemprop="ratingValue">4.2</span> from <span itemprop="ratingCount">87</span>
  </div>
  <p itemprop="description">A lamp for <b>late</b> work.</p>
</div>"""


def test_microdata_product() -> None:
    found = structured(page(body=MICRODATA + BODY))
    assert found["Product"] == [{
        "type": "Product", "source": "microdata", "name": "Desk Lamp",
        "description": "A lamp for late work.", "brand": "Glow", "sku": "DL-9",
        "image": "https://shop.example/lamp.jpg", "price": 24, "currency": "USD",
        "availability": "InStock", "rating": 4.2, "rating_count": 87}]


def test_microdata_article_with_itemref_and_time() -> None:
    html = page(body="""<article itemscope itemtype="http://schema.org/BlogPosting"
      itemref="byline"><h1 itemprop="headline">Spring notes</h1>
      <time itemprop="datePublished" datetime="2024-04-02">2 April</time></article>
      <p id="byline">By <span itemprop="author">Kim Lee</span></p>""" + BODY)
    article = structured(html)["Article"][0]
    assert (article["headline"], article["published"], article["authors"]) == (
        "Spring notes", "2024-04-02", ["Kim Lee"])


def test_microdata_nested_item_without_a_parent_item_is_top_level() -> None:
    # An item marked as some page's property, on a page with no item around it.
    html = page(body='<div itemprop="mainEntity" itemscope itemtype="https://schema.org/'
                     'Recipe"><span itemprop="name">Bread</span></div>' + BODY)
    assert structured(html)["Recipe"][0]["name"] == "Bread"


# --------------------------------------------------------------------------- OpenGraph
def test_opengraph_twitter_and_article_meta() -> None:
    head = """<meta property="og:title" content="Rivers rise">
    <meta property="og:image" content="https://img.example/1.jpg">
    <meta property="og:image" content="https://img.example/2.jpg">
    <meta name="twitter:card" content="summary_large_image">
    <meta property="article:published_time" content="2024-03-01T08:00:00Z">
    <meta property="article:tag" content="rivers"><meta property="article:tag" content="rain">
    <meta property="fb:app_id" content="123"><meta name="description" content="Plain">"""
    og = handled(page(head=head))["og"]
    assert og == {"og:title": "Rivers rise",
                  "og:image": ["https://img.example/1.jpg", "https://img.example/2.jpg"],
                  "twitter:card": "summary_large_image",
                  "article:published_time": "2024-03-01T08:00:00Z",
                  "article:tag": ["rivers", "rain"]}


# --------------------------------------------------------------------------- malformations
ARTICLE = '"@type": "NewsArticle", "headline": "Storm", "datePublished": "2024-05-06"'


def _headline(*blocks: str) -> list[str]:
    return [a["headline"] for a in structured(page(*blocks)).get("Article", [])]


def test_trailing_commas_and_comments() -> None:
    assert _headline('{' + ARTICLE + ', "keywords": ["a", "b",],}') == ["Storm"]
    assert _headline('{\n// the article\n' + ARTICLE + ' /* end */}') == ["Storm"]


def test_control_characters_and_html_inside_strings() -> None:
    assert _headline('{"@type": "Article", "headline": "Line\tone\nand <em>two</em>"}') == [
        "Line one and two"]


def test_several_objects_in_one_block_and_wrappers() -> None:
    assert _headline('{' + ARTICLE + '}\n{"@type": "Article", "headline": "Calm"}') == [
        "Storm", "Calm"]
    assert _headline('{' + ARTICLE + '},{"@type": "Article", "headline": "Calm"}') == [
        "Storm", "Calm"]
    assert _headline('<!--{' + ARTICLE + '}-->') == ["Storm"]
    assert _headline('//<![CDATA[\n{' + ARTICLE + '}\n//]]>') == ["Storm"]


def test_single_quotes_and_unescaped_quotes() -> None:
    assert _headline("{'@type': 'Article', 'headline': 'Storm'}") == ["Storm"]
    assert _headline('{"@type": "Article", "headline": "The "big" storm", "x": 1}') == [
        'The "big" storm']


def test_unreadable_blocks_are_skipped_not_errors() -> None:
    html = page("", "   ", "not json at all", "{", "[1, 2, 3]", '"a string"',
                "{" + ARTICLE + "}")
    assert _headline("", "{", "not json", "{" + ARTICLE + "}") == ["Storm"]
    metadata = handled(html)  # the handler makes a record, not an error
    assert metadata["structured"]["Article"][0]["headline"] == "Storm"


def test_nothing_declared_means_no_fields() -> None:
    metadata = handled(page(head='<meta name="description" content="x">'))
    assert "structured" not in metadata and "og" not in metadata
    assert "structured_raw" not in metadata


# --------------------------------------------------------------------------- handler, API
def test_raw_blocks_only_on_request() -> None:
    html = page(ld({"@type": "Product", "name": "Kettle"}), body=MICRODATA + BODY)
    assert "structured_raw" not in handled(html)
    raw = handled(html, structured_raw=True)["structured_raw"]
    assert raw["json_ld"] == [{"@type": "Product", "name": "Kettle"}]
    assert raw["microdata"][0]["@type"] == "https://schema.org/Product"
    assert raw["microdata"][0]["name"] == "Desk Lamp"


def test_main_product_and_typed_view() -> None:
    metadata = handled(page(ld([{"@type": "Product", "description": "no name"},
                                {"@type": "Product", "name": "Kettle",
                                 "description": "Boils water."}])))
    product = main_product(metadata)
    assert product is not None
    assert (product.get("name"), product.get("description")) == ("Kettle", "Boils water.")
    assert main_product({}) is None and structured_of({"structured": None}) == {}
    assert [p.get("name") for p in structured_of(metadata).get("Product", [])] == [
        None, "Kettle"]

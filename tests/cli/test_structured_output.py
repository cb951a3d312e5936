"""The data a page declares reaches every output: JSONL and Parquet records (nested
``metadata.structured``, ``og`` and, with ``--structured-raw``, ``structured_raw``), in
``--format text`` too, from a page served on 127.0.0.1."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from aiohttp import web

from tests.cli.test_end_to_end import LOOPBACK, run_cli
from tests.support.pages import html_site, serve
from tests.support.records import read_records

PRODUCT = {"@context": "https://schema.org", "@type": "Product", "name": "Trail Kettle",
           "brand": {"@type": "Brand", "name": "Boil"}, "sku": "TK-2",
           "offers": {"@type": "Offer", "price": "39.50", "priceCurrency": "EUR",
                      "availability": "https://schema.org/InStock"},
           "aggregateRating": {"ratingValue": 4.5, "reviewCount": 12}}
PAGE = ("<!doctype html><html><head><title>Trail Kettle | Shop</title>"
        '<meta property="og:title" content="Trail Kettle">'
        '<meta property="og:type" content="product">'
        # a second block with a trailing comma: read, not an error
        f'<script type="application/ld+json">{json.dumps(PRODUCT)}</script>'
        '<script type="application/ld+json">{"@type": "BreadcrumbList", "itemListElement": '
        '[{"@type": "ListItem", "position": 1, "name": "Kettles", "item": "/kettles"},]}'
        "</script></head><body><main><h1>Trail Kettle</h1>"
        + "<p>A light kettle for camp stoves, boiling a litre in four minutes.</p>" * 6
        + "</main></body></html>")


def product_site() -> web.Application:
    """One product page (:data:`PAGE`) at ``/kettle``."""
    return html_site(PAGE, "/kettle")


async def test_jsonl_and_parquet_carry_the_structured_metadata(tmp_path):
    async with serve(product_site()) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{base}/kettle\n")
        outputs = {}
        for name in ("out.jsonl", "out.parquet"):
            outputs[name] = tmp_path / name
            code, stderr = await run_cli(str(urls), "-o", str(outputs[name]), "--format", "text",
                                         "--structured-raw", "--workers", "1", *LOOPBACK)
            assert code == 0, stderr
    (record,) = read_records(outputs["out.jsonl"])
    assert record["ok"] and record["format"] == "text"
    metadata = record["metadata"]
    product = metadata["structured"]["Product"][0]
    assert (product["name"], product["brand"], product["price"], product["currency"],
            product["availability"], product["rating"], product["review_count"]) == (
        "Trail Kettle", "Boil", 39.5, "EUR", "InStock", 4.5, 12)
    assert metadata["structured"]["BreadcrumbList"][0]["items"] == [
        {"name": "Kettles", "url": f"{base}/kettles"}]
    assert metadata["og"] == {"og:title": "Trail Kettle", "og:type": "product"}
    assert metadata["structured_raw"]["json_ld"][0] == PRODUCT
    (row,) = pq.read_table(outputs["out.parquet"]).to_pylist()
    assert json.loads(row["metadata"]) == metadata  # nested metadata: a JSON text column

"""``--schema``: records carry ``fields`` and ``fields_meta`` from a page served on
127.0.0.1, in JSONL and Parquet; records without it are as they were; a schema that is not
JSON Schema is a one-line usage error (exit 2)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from tests.cli.test_end_to_end import LOOPBACK, run_cli
from tests.cli.test_structured_output import product_site
from tests.support.pages import serve
from tests.support.records import read_records


async def test_schema_product_fills_fields_and_only_then(tmp_path):
    async with serve(product_site()) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{base}/kettle\n")
        for name, extra in (("plain.jsonl", []), ("fields.jsonl", ["--schema", "product"]),
                            ("fields.parquet", ["--schema", "product"])):
            code, stderr = await run_cli(str(urls), "-o", str(tmp_path / name), "--workers",
                                         "1", *extra, *LOOPBACK)
            assert code == 0, stderr
    (plain,) = read_records(tmp_path / "plain.jsonl")
    assert "fields" not in plain and "fields_meta" not in plain
    (record,) = read_records(tmp_path / "fields.jsonl")
    fields, meta = record["fields"], record["fields_meta"]
    assert list(fields) == ["name", "price", "currency", "availability", "sku", "gtin", "mpn",
                            "brand", "image", "rating", "review_count"]
    assert (fields["name"], fields["price"], fields["currency"], fields["availability"],
            fields["sku"], fields["brand"], fields["rating"], fields["review_count"]) == (
        "Trail Kettle", "39.5", "EUR", "InStock", "TK-2", "Boil", 4.5, 12)
    assert meta["status"] == "partial" and meta["fields"]["sku"]["source"] == "json-ld"
    # the rest of the record is the record without a schema
    for key in ("content", "title", "metadata"):
        assert record[key] == plain[key]
    (row,) = pq.read_table(tmp_path / "fields.parquet").to_pylist()
    assert json.loads(row["fields"]) == fields


async def test_a_schema_that_is_not_json_schema_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "object", "properties": {"price": {"type": 7}}}')
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.test/\n")
    code, stderr = await run_cli(str(urls), "--schema", str(bad))
    assert code == 2
    assert len(stderr.strip().splitlines()) == 1 and "--schema" in stderr
    code, stderr = await run_cli(str(urls), "--schema", "nonsense")
    assert code == 2 and "built-in schema" in stderr

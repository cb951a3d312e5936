"""``web_extract(schema=…)`` and the tool's ``schema`` argument: a built-in name, a JSON
Schema dict or a pydantic model gives records ``fields``; a schema that is not JSON Schema,
or a file name from a request, is an ``invalid_request``."""

from __future__ import annotations

import json

from pydantic import BaseModel

from pipeline import Settings, web_extract
from pipeline.agent.tools import answer, tool_definitions, web_tools
from tests.cli.test_structured_output import product_site
from tests.support.pages import serve


class Kettle(BaseModel):
    name: str | None = None
    price: float | None = None
    sku: str | None = None


async def test_schema_as_name_dict_and_model(tmp_path):
    settings = Settings(allow_net=["127.0.0.1/32"], cache_dir=str(tmp_path / "cache"))
    async with serve(product_site()) as base:
        url = f"{base}/kettle"
        plain = await web_extract(url, settings=settings)
        named = await web_extract(url, settings=settings, schema="product")
        typed = await web_extract(url, settings=settings, schema=Kettle)
        extract = next(spec for spec in web_tools() if spec.name == "web_extract")
        text, failed = await answer(extract, {"urls": [url], "schema": json.dumps(
            {"type": "object", "properties": {"brand": {"type": "string"}}})}, settings,
            untrusted=False)
    assert plain.records[0].fields is None  # and the cached text did not answer the others
    assert named.records[0].fields is not None
    assert named.records[0].fields["sku"] == "TK-2"
    assert typed.records[0].fields == {"name": "Trail Kettle", "price": 39.5, "sku": "TK-2"}
    assert not failed and 'Fields: {"brand": "Boil"}' in text


async def test_bad_schemas_are_invalid_requests(tmp_path):
    schema_file = tmp_path / "schema.json"
    schema_file.write_text('{"type": "object", "properties": {"a": {"type": "string"}}}')
    for schema in ({"type": "object", "properties": {"a": {"type": 3}}}, str(schema_file),
                   "nonsense"):
        response = await web_extract("https://example.test/", schema=schema)
        assert not response.ok and response.error is not None
        assert response.error.kind == "invalid_request"


def test_tool_definitions_offer_a_schema_argument():
    (_, extract, *_) = tool_definitions("openai_chat")
    assert "schema" in extract["function"]["parameters"]["properties"]

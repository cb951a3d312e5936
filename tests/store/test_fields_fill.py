"""The model path for fields (pipeline.store.fields_fill, pipeline.providers.fields_model)
against a loopback fake of an OpenAI-compatible endpoint: one that answers well, one that
invents values, one that breaks the schema, one that hangs, one that refuses strict
structured output; and chunking with list values merged."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from pipeline.core.field_schemas import load_schema, schema_text
from pipeline.core.models import Record
from pipeline.core.settings import Settings
from pipeline.providers import fields_model
from pipeline.providers.fields_model import FakeFieldsModel, FieldsModel
from pipeline.store.fields_fill import chunks, fill_fields
from tests.support.pages import serve

PAGE = "Blue Widget. Price €24.99. Made by Acme Tools. Model number WX-100. In stock."
SCHEMA = load_schema(schema_text("product"))


def record(content: str = PAGE) -> Record:
    fields: dict[str, Any] = dict.fromkeys(SCHEMA["properties"])
    fields["name"] = "Blue Widget"
    meta = {"status": "partial", "fields": {"name": {"source": "json-ld", "evidence": "x",
                                                     "confidence": 0.9}}, "dropped": []}
    return Record(url="https://shop.example/w", ok=True, content=content, fields=fields,
                  fields_meta=meta)


def endpoint(answers: list[dict[str, Any]], seen: list[dict[str, Any]], *,
             refuse_strict: bool = False, hang: asyncio.Event | None = None
             ) -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        if hang is not None:
            await hang.wait()
        kind = body.get("response_format", {}).get("type")
        if refuse_strict and kind == "json_schema":
            return web.json_response({"error": "response_format not supported"}, status=400)
        answer = answers[min(len(seen) - 1, len(answers) - 1)]
        return web.json_response({"choices": [{"message": {"content": json.dumps(answer)}}],
                                  "usage": {"total_tokens": 50}})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    return app


def model(base: str) -> FieldsModel:
    fields_model._WORKING.clear()
    return FieldsModel(model="m", base_url=f"{base}/v1", settings=Settings(retries=0))


async def test_a_good_answer_fills_only_the_missing_fields():
    seen: list[dict[str, Any]] = []
    answer = {"price": "24.99", "brand": "Acme Tools", "mpn": "WX-100"}
    async with serve(endpoint([answer], seen)) as base, model(base) as client:
        filled = await fill_fields(record(), SCHEMA, client, deadline=30)
    assert filled.ok and filled.fields is not None and filled.fields_meta is not None
    assert (filled.fields["name"], filled.fields["price"], filled.fields["brand"],
            filled.fields["mpn"]) == ("Blue Widget", "24.99", "Acme Tools", "WX-100")
    assert filled.fields_meta["fields"]["price"]["source"] == "llm"
    assert "24.99" in filled.fields_meta["fields"]["price"]["evidence"]
    assert filled.fields_meta["fields"]["name"]["source"] == "json-ld"  # kept
    assert filled.fields_meta["llm"] == {"status": "ok", "tokens": 50,
                                         "mode": "json_schema",
                                         "ms": filled.fields_meta["llm"]["ms"]}
    # asked for the missing properties only, as strict structured output
    sent = seen[0]["response_format"]["json_schema"]["schema"]
    assert "name" not in sent["properties"] and "price" in sent["properties"]
    assert sent["additionalProperties"] is False


async def test_invented_values_are_dropped():
    seen: list[dict[str, Any]] = []
    answer = {"price": "19.99", "brand": "Globex", "sku": "WX-100"}
    async with serve(endpoint([answer], seen)) as base, model(base) as client:
        filled = await fill_fields(record(), SCHEMA, client, deadline=30)
    assert filled.fields is not None and filled.fields_meta is not None
    assert (filled.fields["price"], filled.fields["brand"], filled.fields["sku"]) == (
        None, None, "WX-100")
    reasons = {d["field"]: d["reason"] for d in filled.fields_meta["dropped"]}
    assert reasons == {"price": "not found on the page", "brand": "not found on the page"}


async def test_a_broken_schema_is_asked_again_once_with_the_errors():
    seen: list[dict[str, Any]] = []
    wrong = {"price": 24.99, "review_count": "many"}
    right = {"price": "24.99"}
    async with serve(endpoint([wrong, right], seen)) as base, model(base) as client:
        filled = await fill_fields(record(), SCHEMA, client, deadline=30)
    assert len(seen) == 2 and "last answer was wrong" in seen[1]["messages"][0]["content"]
    assert filled.fields is not None and filled.fields["price"] == "24.99"
    seen.clear()
    async with serve(endpoint([wrong], seen)) as base, model(base) as client:
        filled = await fill_fields(record(), SCHEMA, client, deadline=30)
    assert len(seen) == 2  # one re-ask, no more
    assert filled.fields is not None and filled.fields["price"] is None
    assert filled.fields_meta is not None
    assert {d["field"] for d in filled.fields_meta["dropped"]} == {"price", "review_count"}


async def test_a_hanging_model_leaves_the_fields_and_says_so():
    seen: list[dict[str, Any]] = []
    never = asyncio.Event()
    async with serve(endpoint([{}], seen, hang=never)) as base, model(base) as client:
        filled = await fill_fields(record(), SCHEMA, client, deadline=0.2)
        never.set()
    assert filled.ok and filled.fields == record().fields
    assert filled.fields_meta is not None
    assert filled.fields_meta["llm"]["status"] == "failed"
    assert "did not answer" in filled.fields_meta["llm"]["error"]


async def test_a_model_that_is_down_leaves_the_fields():
    async with serve(web.Application()) as base, model(base) as client:  # 404 everywhere
        filled = await fill_fields(record(), SCHEMA, client, deadline=30)
    assert filled.ok and filled.fields == record().fields
    assert filled.fields_meta is not None and filled.fields_meta["llm"]["status"] == "failed"


async def test_refused_strict_mode_falls_back_and_is_remembered():
    seen: list[dict[str, Any]] = []
    app = endpoint([{"price": "24.99"}], seen, refuse_strict=True)
    async with serve(app) as base, model(base) as client:
        await fill_fields(record(), SCHEMA, client, deadline=30)
        assert [b.get("response_format", {}).get("type") for b in seen] == [
            "json_schema", "json_object"]
        seen.clear()
        filled = await fill_fields(record(), SCHEMA, client, deadline=30)
    assert [b["response_format"]["type"] for b in seen] == ["json_object"]
    assert filled.fields_meta is not None and filled.fields_meta["llm"]["mode"] == "json_object"


async def test_long_pages_in_overlapping_chunks_lists_merged_once():
    schema = {"type": "object", "properties": {"tags": {"type": ["array", "null"],
                                                        "items": {"type": "string"}}}}
    content = ("alpha beta. " * 3000) + ("gamma delta. " * 3000)
    pieces = chunks(content, size=20_000, overlap=100)
    assert len(pieces) == 4 and pieces[1].startswith(pieces[0][-100:])
    asker = FakeFieldsModel({"tags": ["alpha", "beta"]}, {"tags": ["Beta", "gamma"]},
                            {"tags": ["delta"]})
    start = Record(url="u", ok=True, content=content, fields={"tags": None},
                   fields_meta={"status": "empty", "fields": {}, "dropped": []})
    filled = await fill_fields(start, schema, asker, deadline=30)
    assert filled.fields == {"tags": ["alpha", "beta", "gamma", "delta"]}
    assert len(asker.asked) == len(chunks(content))

"""The fields model as a registered stage: ``--fields-model`` in the batch command and
``fields_model=`` in the library fill what the page's readers left null, against a loopback
fake of the OpenAI-compatible endpoint; off by default (no model call)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

import pipeline
from pipeline.core.settings import Settings
from pipeline.providers import fields_model
from tests.cli.test_end_to_end import LOOPBACK, run_cli
from tests.store.test_fields_fill import endpoint
from tests.support.pages import serve
from tests.support.records import read_records

PAGE = ("<html><head><title>Blue Widget</title></head><body><main><h1>Blue Widget</h1>"
        "<p>Made by Acme Tools. Model number WX-100. Ships in two days.</p>"
        "</main></body></html>")
ANSWER = {"brand": "Acme Tools", "mpn": "WX-100"}


def shop() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", page)
    return app


async def test_the_library_fills_missing_fields_only_when_asked(tmp_path):
    seen: list[dict[str, Any]] = []
    fields_model._WORKING.clear()
    async with serve(shop()) as base, serve(endpoint([ANSWER], seen)) as model:
        settings = Settings(allow_net=["127.0.0.1/32"], cache=False,
                            provider_env={"PIPELINE_COMPRESS_MODEL": "m",
                                          "PIPELINE_COMPRESS_BASE_URL": f"{model}/v1"})
        plain = await pipeline.web_extract(f"{base}/w", schema="product", settings=settings)
        assert not seen  # off by default: no model call
        asked = await pipeline.web_extract(f"{base}/w", schema="product", settings=settings,
                                           fields_model=True)
    [before], [after] = plain.records, asked.records
    assert "llm" not in (before.fields_meta or {})
    assert seen and after.ok and after.fields_meta["llm"]["status"] == "ok"
    assert after.fields["mpn"] == "WX-100"
    assert after.fields_meta["fields"]["mpn"]["source"] == "llm"


async def test_the_batch_command_fills_missing_fields_with_the_flag(tmp_path, monkeypatch):
    seen: list[dict[str, Any]] = []
    async with serve(shop()) as base, serve(endpoint([ANSWER], seen)) as model:
        monkeypatch.setenv("PIPELINE_COMPRESS_MODEL", "m")
        monkeypatch.setenv("PIPELINE_COMPRESS_BASE_URL", f"{model}/v1")
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{base}/w\n")
        out = tmp_path / "out.jsonl"
        code, stderr = await run_cli(str(urls), "-o", str(out), "--schema", "product",
                                     "--fields-model", *LOOPBACK)
    assert code == 0, stderr
    [record] = read_records(out)
    assert seen and record["fields"]["mpn"] == "WX-100"
    assert record["fields_meta"]["llm"]["status"] == "ok"


async def test_the_flag_without_a_schema_is_one_line(tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.org/\n")
    code, stderr = await run_cli(str(urls), "--fields-model", "-o", str(tmp_path / "o.jsonl"))
    assert code == 2 and "--fields-model needs --schema" in stderr
    assert "Traceback" not in stderr

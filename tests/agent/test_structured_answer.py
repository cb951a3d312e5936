"""The library API and the agent tool on a page that declares structured data: the record
carries ``metadata.structured``; the tool's answer for a model stays the page's text."""

from __future__ import annotations

from pipeline import Settings, web_extract
from pipeline.agent.tools import answer, web_tools
from tests.cli.test_structured_output import product_site
from tests.support.pages import serve


async def test_library_record_and_tool_answer(tmp_path):
    settings = Settings(allow_net=["127.0.0.1/32"], cache_dir=str(tmp_path / "cache"))
    async with serve(product_site()) as base:
        response = await web_extract(f"{base}/kettle", settings=settings)
        extract = next(spec for spec in web_tools() if spec.name == "web_extract")
        text, failed = await answer(extract, {"urls": [f"{base}/kettle"]}, settings,
                                    untrusted=False)
    (record,) = response.records
    assert record.ok and record.metadata["structured"]["Product"][0]["price"] == 39.5
    assert "structured_raw" not in record.metadata  # only on request
    assert not failed
    assert text.startswith("## Trail Kettle") and "boiling a litre" in text

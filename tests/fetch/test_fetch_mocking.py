"""Tests can mock the fetcher's HTTP with aioresponses (fitted to this aiohttp by conftest)."""

from __future__ import annotations

from aioresponses import aioresponses

from pipeline.fetch.client import HttpFetcher
from tests.fetch.conftest import fast_settings


async def test_the_fetcher_answers_from_aioresponses():
    with aioresponses() as mocked:
        mocked.head("http://127.0.0.1:9/page", headers={"Content-Length": "30"})
        mocked.get("http://127.0.0.1:9/page", body=b"<p>mocked page</p>",
                   content_type="text/html")
        async with HttpFetcher(fast_settings()) as fetcher:
            result = await fetcher.fetch("http://127.0.0.1:9/page")
    assert result.status == 200 and result.body == b"<p>mocked page</p>"


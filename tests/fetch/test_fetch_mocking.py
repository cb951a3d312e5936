"""Applications can mock this library's HTTP with aioresponses, whatever aiohttp needs."""

from __future__ import annotations

from aioresponses import aioresponses, core

from pipeline.fetch.client import HttpFetcher
from pipeline.fetch.mocking import teach_aioresponses
from tests.fetch.conftest import fast_settings


async def test_the_fetcher_answers_from_aioresponses():
    with aioresponses() as mocked:
        mocked.head("http://127.0.0.1:9/page", headers={"Content-Length": "30"})
        mocked.get("http://127.0.0.1:9/page", body=b"<p>mocked page</p>",
                   content_type="text/html")
        async with HttpFetcher(fast_settings()) as fetcher:
            result = await fetcher.fetch("http://127.0.0.1:9/page")
    assert result.status == 200 and result.body == b"<p>mocked page</p>"


def test_a_response_class_chosen_by_the_test_is_left_alone(monkeypatch):
    class Chosen(core.ClientResponse):
        pass

    monkeypatch.setattr(core, "ClientResponse", Chosen)
    teach_aioresponses()
    teach_aioresponses()
    assert core.ClientResponse is Chosen

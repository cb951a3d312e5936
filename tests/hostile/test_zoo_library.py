"""``pipeline.web_extract`` in-process against the hostile-server zoo: the library gives
the same guarantees as the command (one record per URL, acceptable kinds, bounded records).
The cases that end only by their deadline get a 3 s one; the others room (60 s), so a busy
machine cannot turn their outcome into a timeout."""

from __future__ import annotations

import asyncio

import pytest

from pipeline import web_extract
from pipeline.core.settings import Settings
from pipeline.core.truncate import METADATA_CHARS, TITLE_CHARS
from tests.hostile.zoo import MAX_BYTES, OK

MAX_CHARS = 20_000
SETTINGS = Settings(timeout=60, read_timeout=30, connect_timeout=30, max_bytes=MAX_BYTES,
                    retries=1, retry_after_cap=1, rate=1000, per_host=128, concurrency=128,
                    max_chars=MAX_CHARS, allow_net=["127.0.0.1/32"], cache=False)
DEADLINE = SETTINGS.model_copy(update={"timeout": 3, "read_timeout": 1, "connect_timeout": 1})
BOUND = 600  # seconds for the whole call: only a hang gets near it
pytestmark = pytest.mark.timeout(BOUND + 60)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item)


async def test_web_extract_over_the_zoo(zoo):
    timed, room = zoo.listed(deadline=True), zoo.listed(deadline=False)
    calls = [web_extract([zoo.url(case.name) for case in cases], settings=settings)
             for cases, settings in ((timed, DEADLINE), (room, SETTINGS))]
    responses = await asyncio.wait_for(asyncio.gather(*calls), BOUND)
    assert all(response.ok for response in responses)
    records = [record for response in responses for record in response.records]
    cases = timed + room
    assert [r.url for r in records] == [zoo.url(case.name) for case in cases]
    wrong = {}
    for case, record in zip(cases, records, strict=True):
        got = OK if record.ok else record.error.kind
        if got not in case.kinds:
            wrong[case.name] = (got, record.error and record.error.message)
        assert len(record.content or "") <= MAX_CHARS
        assert len(record.title or "") <= TITLE_CHARS
        assert all(len(s) <= METADATA_CHARS for s in _strings(record.metadata))
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())


async def test_a_huge_title_and_description_are_clipped(zoo):
    response = await web_extract([zoo.url("huge-title")], settings=SETTINGS)
    record = response.records[0]
    assert record.ok and record.title.startswith("TTT") and len(record.title) <= TITLE_CHARS
    assert record.metadata["description"].startswith("DDD")
    assert len(record.metadata["description"]) <= METADATA_CHARS

from __future__ import annotations

import pytest

from pipeline.fetch.base import FetchResult


def page(url: str, body: bytes, media_type: str | None = "text/plain", **extra) -> FetchResult:
    """A canned 200 response for FakeFetcher routes."""
    return FetchResult(url=url, final_url=extra.pop("final_url", url), status=200,
                       media_type=media_type, charset=None, body=body, **extra)


@pytest.fixture
def make_page():
    return page

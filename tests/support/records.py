from __future__ import annotations

import json
from pathlib import Path

from pipeline.fetch.base import FakeFetcher, FetchResult


def text_fetcher(urls, media_type="text/plain") -> FakeFetcher:
    """Every URL answers 200 with a short text naming it."""
    return FakeFetcher({u: FetchResult(url=u, final_url=u, status=200, media_type=media_type,
                                       charset=None, body=f"content of {u}".encode())
                        for u in urls})


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]

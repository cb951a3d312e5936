"""Run the real command line in a subprocess with a fetcher that answers every URL with
text after ``FAKE_DELAY`` seconds — signal and exit-code tests without a network."""

from __future__ import annotations

import asyncio
import os
import sys

from pipeline.cli.command import main
from pipeline.fetch.base import FetchResult


class DelayedFetcher:
    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def fetch(self, url: str) -> FetchResult:
        await asyncio.sleep(self.delay)
        return FetchResult(url=url, final_url=url, status=200, media_type="text/plain",
                           charset=None, body=f"content of {url}".encode())

    async def __aenter__(self) -> DelayedFetcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], fetcher=DelayedFetcher(float(os.environ.get("FAKE_DELAY", "0")))))

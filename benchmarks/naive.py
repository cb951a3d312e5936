"""Naive baseline: fetch with aiohttp and run readability-lxml on the event loop."""

from __future__ import annotations

from baseline import main
from readability import Document


def extract(body: bytes) -> str:
    return Document(body).summary()


if __name__ == "__main__":
    main(__doc__, extract)

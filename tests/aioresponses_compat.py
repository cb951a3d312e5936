"""Make aioresponses build responses aiohttp >= 3.14 accepts.

aiohttp 3.14 made ``ClientResponse(stream_writer=...)`` a required argument (the upload
tracker); aioresponses (0.7.9) does not pass it, so every mocked request failed with a
``TypeError`` before our code saw an answer. A mocked answer has no upload to track: a stub
writer with nothing written stands in. Imported once by ``tests/conftest.py``; a no-op on
versions that do not need it.
"""

from __future__ import annotations

import inspect
from typing import Any

from aiohttp import ClientResponse


class _NothingUploaded:
    """What ``ClientResponse`` reads from a finished upload."""

    output_size = 0


class _CompatResponse(ClientResponse):
    def __init__(self, *args: Any, stream_writer: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, stream_writer=stream_writer or _NothingUploaded(), **kwargs)


def install() -> None:
    """Point aioresponses at a response class it can build (when aiohttp needs one)."""
    try:
        from aioresponses import core
    except ImportError:  # not installed: nothing to fix
        return
    if "stream_writer" in inspect.signature(ClientResponse.__init__).parameters:
        core.ClientResponse = _CompatResponse  # type: ignore[misc]

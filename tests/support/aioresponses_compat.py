"""Let aioresponses mock aiohttp >= 3.14 in our tests (applied once by ``tests/conftest.py``).

aiohttp 3.14 made ``ClientResponse(stream_writer=...)`` a required argument; aioresponses
(0.7.9, the latest) does not pass it, so every response it mocks fails with a ``TypeError``
before the caller sees it. Where this aiohttp needs the argument, aioresponses' response class
is given a stand-in writer with nothing uploaded. Production code knows nothing of this: it
offers a transport seam instead (:mod:`pipeline.fetch.transport`).
"""

from __future__ import annotations

import inspect
from typing import Any

from aiohttp import ClientResponse
from aioresponses import core

_NEEDS_WRITER = "stream_writer" in inspect.signature(ClientResponse.__init__).parameters


class _NothingUploaded:
    """What a response reads from its finished upload."""

    output_size = 0


class _MockedResponse(ClientResponse):
    def __init__(self, *args: Any, stream_writer: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, stream_writer=stream_writer or _NothingUploaded(), **kwargs)


def fit_aioresponses_to_aiohttp() -> None:
    """Make aioresponses build responses this aiohttp accepts (idempotent)."""
    if _NEEDS_WRITER and core.ClientResponse is ClientResponse:
        core.ClientResponse = _MockedResponse

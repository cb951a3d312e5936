"""Let aioresponses mock this library's HTTP calls under aiohttp >= 3.14.

aiohttp 3.14 made ``ClientResponse(stream_writer=...)`` a required argument; aioresponses
(0.7.9, the latest) does not pass it, so every response it mocks fails with a ``TypeError``
before the caller sees it. Applications test their use of our providers and fetcher with
aioresponses, so each of our sessions calls :func:`teach_aioresponses` when it opens: only
if aioresponses is already loaded (it is never imported here) and only if this aiohttp needs
the argument, its response class is given a stand-in writer with nothing uploaded.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from aiohttp import ClientResponse

_NEEDS_WRITER = "stream_writer" in inspect.signature(ClientResponse.__init__).parameters


class _NothingUploaded:
    """What a response reads from its finished upload."""

    output_size = 0


class _MockedResponse(ClientResponse):
    def __init__(self, *args: Any, stream_writer: Any = None, **kwargs: Any) -> None:
        writer: Any = stream_writer or _NothingUploaded()  # duck-typed: only output_size is read
        super().__init__(*args, stream_writer=writer, **kwargs)


def teach_aioresponses() -> None:
    """Make a loaded aioresponses build responses this aiohttp accepts (idempotent)."""
    core: Any = sys.modules.get("aioresponses.core")
    if not _NEEDS_WRITER or core is None:
        return
    current = getattr(core, "ClientResponse", None)
    if current is ClientResponse:  # its default, not a class a test chose on purpose
        core.ClientResponse = _MockedResponse

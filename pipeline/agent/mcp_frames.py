"""A second chance for MCP frames the SDK's stdio transport could not parse.

The transport parses each line with pydantic's strict JSON parser, which refuses a lone
surrogate escape (``"\\ud800"``, valid JSON for Python's own parser). It then hands the
server the error instead of a message, and the server drops it: the client waits for an
answer for ever. :class:`LenientFrames` wraps the transport's read stream and parses such a
line again with :mod:`json`, lone surrogates turned into U+FFFD (so the answer, which may
quote them, can be encoded). Anything still not a JSON-RPC message passes on as it came.
Imported only with the ``mcp`` extra.
"""

from __future__ import annotations

import json
from contextvars import Context
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from pipeline.agent.rendering import encodable

Item = SessionMessage | Exception


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {encodable(key): _without_surrogates(item) for key, item in value.items()}
    return value


def second_chance(item: Item) -> Item:
    """``item``, or the message its line holds when only the strict JSON parser refused it."""
    if not isinstance(item, ValidationError):
        return item
    errors = item.errors()
    line = errors[0].get("input") if errors and errors[0]["type"] == "json_invalid" else None
    if not isinstance(line, str):
        return item
    try:
        data = json.loads(line)
        message = types.jsonrpc_message_adapter.validate_python(_without_surrogates(data),
                                                                by_name=False)
    except (ValueError, RecursionError):  # ValidationError is a ValueError
        return item
    return SessionMessage(message)


class LenientFrames:
    """The transport's read stream (same interface, the sender's context passed through),
    each item given :func:`second_chance`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def last_context(self) -> Context | None:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Item:
        return second_chance(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

"""A second chance for MCP frames the SDK's stdio transport could not parse, and an answer
for every frame that is no message.

The transport parses each line with pydantic's strict JSON parser, which refuses a lone
surrogate escape (``"\\ud800"``, valid JSON for Python's own parser) and anything nested
more than a few hundred levels deep. It then hands the server the error instead of a
message, and the server drops it: the client waits for an answer for ever. So does a frame
that is JSON but no JSON-RPC message (``"params": "str"``). :class:`LenientFrames` wraps the
transport's read stream: such a line is parsed again with :mod:`json`, lone surrogates turned
into U+FFFD (so the answer, which may quote them, can be encoded); a frame that still is no
message gets a JSON-RPC error answer (its id, or null when it has no usable one), written
straight to the transport. The SDK also takes a request whose id is null, an object or an
array for a notification (and drops it): :class:`Lines` keeps each raw line so such a frame
is answered too. Imported only with the ``mcp`` extra.
"""

from __future__ import annotations

import json
import logging
import re
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable
from contextvars import Context
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from pipeline.agent.rendering import encodable
from pipeline.core.errors import sanitize_message

Item = SessionMessage | Exception
log = logging.getLogger(__name__)

_STRUCTURE = re.compile(r'["{}\[\]]')
_DECODER = json.JSONDecoder()
# json's own string scanner (C): (the string, the position after it); typeshed omits it
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
# What a frame's parts must be, in the words of a JSON-RPC error (pydantic's error types).
_PROBLEMS = {"dict_type": "must be an object", "model_type": "must be an object",
             "string_type": "must be a string", "missing": "is missing",
             "literal_error": "has a value not allowed here"}


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {encodable(key): _without_surrogates(item) for key, item in value.items()}
    return value


def _skip(line: str, position: int) -> int:
    """Where the JSON whitespace at ``position`` ends."""
    while position < len(line) and line[position] in " \t\n\r":
        position += 1
    return position


def _after_a_separator(line: str, position: int) -> bool:
    """Whether the string starting at ``position`` follows ``{`` or ``,``: an object's key."""
    position -= 1
    while position >= 0 and line[position] in " \t\n\r":
        position -= 1
    return position >= 0 and line[position] in "{,"


def frame_id(line: str) -> tuple[bool, object]:
    """Whether the JSON object ``line`` holds has an ``"id"`` member, and its value (None
    when that is not a scalar). Read without recursion, so no depth of the other members
    (nor a syntax error after the id) hides it."""
    start = _skip(line, 0)
    if not line.startswith("{", start):
        return False, None
    depth, position = 0, start
    while (found := _STRUCTURE.search(line, position)) is not None:
        mark, position = found.group(), found.end()
        if mark == '"':
            try:
                text, position = scanstring(line, position)
            except ValueError:  # an unterminated string or a bad escape: nothing follows
                return False, None
            if depth == 1 and text == "id" and _after_a_separator(line, found.start()):
                colon = _skip(line, position)
                if not line.startswith(":", colon):
                    return False, None
                try:
                    value, _ = _DECODER.raw_decode(line, _skip(line, colon + 1))
                except (ValueError, RecursionError):
                    return True, None
                return True, value if not isinstance(value, (dict, list)) else None
        elif mark in "{[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                break
    return False, None


def _described(errors: list[Any]) -> str:
    """What makes a frame no request, from pydantic's errors for the request branch."""
    problems = [f"{e['loc'][1]} " + (_PROBLEMS.get(e["type"], "is not valid")
                                     if len(e["loc"]) == 2 else "is not valid")
                for e in errors if e["loc"][:1] == ("JSONRPCRequest",) and len(e["loc"]) > 1]
    return "; ".join(dict.fromkeys(problems)) or "not a JSON-RPC request"


def _error(request_id: object, code: int, message: str) -> types.JSONRPCError:
    """The error answer for ``request_id``: null unless it is a JSON-RPC id MCP accepts
    (a string or an integer; MCP forbids a null id)."""
    answer_to: int | str | None = None
    if isinstance(request_id, str):
        answer_to = encodable(request_id)
    elif isinstance(request_id, int) and not isinstance(request_id, bool):
        answer_to = request_id
    return types.JSONRPCError(jsonrpc="2.0", id=answer_to,
                              error=types.ErrorData(code=code, message=message))


def _line_id(line: str) -> object:
    """The scalar id ``line`` holds (None: none, or none that can be read)."""
    return frame_id(line)[1]


def _checked(message: types.JSONRPCMessage, line: str) -> SessionMessage | types.JSONRPCError:
    """``message``, unless the SDK took it for a notification only because its ``id`` is
    unusable (null, an object, an array, a boolean, a fraction): a request owed an error."""
    if isinstance(message, types.JSONRPCNotification) and frame_id(line)[0]:
        return _error(None, types.INVALID_REQUEST,
                      "Invalid request: id must be a string or an integer")
    return SessionMessage(message)


def second_chance(item: Item, line: str) -> Item | types.JSONRPCError | None:
    """What the server gets for the frame ``line`` the transport turned into ``item``: the
    message; or the message the line holds when only the strict JSON parser refused it; or
    the error answer every other frame is owed (JSON-RPC: -32700 when it is no JSON, -32600
    when it is no request, a batch included; its id, null when that is unusable); None for
    a blank line (no frame at all)."""
    if isinstance(item, SessionMessage):
        return _checked(item.message, line)
    if not line.strip():
        return None
    if not isinstance(item, ValidationError):  # the transport failed otherwise: still answered
        return _error(_line_id(line), types.INTERNAL_ERROR, "Internal error reading the frame")
    try:
        data = json.loads(line)
    except RecursionError:
        return _error(_line_id(line), types.INVALID_REQUEST, "Invalid request: nested too deeply")
    except ValueError as exc:  # not JSON at all
        return _error(_line_id(line), types.PARSE_ERROR,
                      f"Parse error: {sanitize_message(exc, 120)}")
    if isinstance(data, list):
        return _error(None, types.INVALID_REQUEST, "Invalid request: batches are not supported")
    try:
        message = types.jsonrpc_message_adapter.validate_python(
            _without_surrogates(data), by_name=False)
    except RecursionError:
        return _error(_line_id(line), types.INVALID_REQUEST, "Invalid request: nested too deeply")
    except ValidationError as exc:
        return _error(data.get("id") if isinstance(data, dict) else None, types.INVALID_REQUEST,
                      f"Invalid request: {_described(exc.errors())}")
    return _checked(message, line)


class Lines:
    """The transport's input (an async iterable of text lines), each line also kept, in
    order, for :class:`LenientFrames`: the transport turns every line into exactly one item,
    in order, so the item received next is always the oldest line kept."""

    def __init__(self, inner: AsyncIterable[str]) -> None:
        self._inner = inner
        self.kept: deque[str] = deque()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._inner:
            self.kept.append(line)
            yield line


class LenientFrames:
    """The transport's read stream (same interface, the sender's context passed through),
    each item given :func:`second_chance`; the error answers it owes go to ``answers``
    (the transport's write stream) and the server never sees their frames."""

    def __init__(self, inner: Any, answers: Any, lines: Lines) -> None:
        self._inner = inner
        self._answers = answers
        self._lines = lines

    @property
    def last_context(self) -> Context | None:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Item:
        while True:
            received = await self._inner.receive()
            line = self._lines.kept.popleft() if self._lines.kept else ""
            item = second_chance(received, line)
            if isinstance(item, types.JSONRPCError):
                log.warning("answered a malformed frame: %s", item.error.message)
                await self._answers.send(SessionMessage(item))
            elif item is not None:
                return item

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

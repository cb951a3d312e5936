"""A model that reads fields from text: JSON from an OpenAI-compatible
``/chat/completions`` endpoint (the compressor's settings, :mod:`pipeline.providers.compressor`).

Structured output is tried as a strict ``json_schema`` response format, then
``json_object``, then plain text with the JSON read out of it; an endpoint that refuses a
mode (400, 404, 415, 422) gets the next, and the mode that worked is remembered per endpoint
and model for the life of the process. :class:`FieldsModel` only asks and parses; checking
the values (the user's schema, the page) is the stage's (:mod:`pipeline.store.fields_fill`).
:class:`FakeFieldsModel` answers from a list, for tests.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Protocol

from pipeline.core.slices import VendorSettings
from pipeline.providers.common import dig
from pipeline.providers.http import OwnsClient, VendorClient, VendorError, join_url

MODES = ("json_schema", "json_object", "text")
_REFUSED = frozenset({400, 404, 415, 422})  # an endpoint that does not take a mode
_WORKING: dict[str, str] = {}  # endpoint + model -> the mode that worked


@dataclass(frozen=True)
class ModelAnswer:
    """What the model said: its JSON object, the tokens the call used, the mode."""

    values: dict[str, Any]
    tokens: int
    mode: str


class FieldsAsker(Protocol):
    """Contract: ``ask(text, schema, errors)`` returns the model's JSON object for the
    schema's properties found in ``text`` (``errors``: what was wrong with its last answer,
    to be fixed), or raises ``PipelineError`` (a ``VendorError`` for a failed call)."""

    async def ask(self, text: str, schema: dict[str, Any],
                  errors: list[str] | None = None) -> ModelAnswer: ...


class FakeFieldsModel:
    """Answers with ``replies`` in turn (the last one again when they run out); ``asked``
    keeps each (text, errors)."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.asked: list[tuple[str, list[str] | None]] = []

    async def ask(self, text: str, schema: dict[str, Any],
                  errors: list[str] | None = None) -> ModelAnswer:
        self.asked.append((text, errors))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return ModelAnswer(dict(reply), 10, "fake")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as strict structured output wants it: every property required (nullable
    ones stay nullable), no other properties."""
    strict = copy.deepcopy(schema)
    strict.pop("$schema", None)
    strict["required"] = list(strict.get("properties", {}))
    strict["additionalProperties"] = False
    return strict


def _json_in(text: str) -> Any:
    """The JSON object a text reply holds: all of it, else its outermost ``{…}``."""
    text = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        return json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start: end + 1])
            except ValueError:
                return None
    return None


class FieldsModel(OwnsClient):
    """Fields from an OpenAI-compatible endpoint, with the shared vendor HTTP client."""

    name = "fields-model"

    def __init__(self, *, model: str, base_url: str, settings: VendorSettings,
                 api_key: str | None = None, timeout: float = 60.0,
                 token_param: str = "max_tokens", max_tokens: int = 1024,
                 **client_options: Any) -> None:
        self.model, self.base_url, self.api_key = model, base_url, api_key
        self.token_param, self.max_tokens = token_param, max_tokens
        self.http = VendorClient(self.name, settings, total_timeout=timeout,
                                 **client_options)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url.rstrip('/')}|{self.model}"

    async def ask(self, text: str, schema: dict[str, Any],
                  errors: list[str] | None = None) -> ModelAnswer:
        first = MODES.index(_WORKING.get(self.endpoint, MODES[0]))
        for mode in MODES[first:]:
            try:
                data = await self._call(mode, text, schema, errors)
            except VendorError as exc:
                if exc.status in _REFUSED and mode != MODES[-1]:
                    continue  # the endpoint does not take this mode: the next one
                raise
            choices = dig(data, "choices")
            content = (dig(choices[0], "message", "content")
                       if isinstance(choices, list) and choices else None)
            values = _json_in(content) if isinstance(content, str) else None
            if not isinstance(values, dict):
                raise VendorError(self.name, "the model's answer holds no JSON object")
            _WORKING[self.endpoint] = mode
            tokens = dig(data, "usage", "total_tokens")
            return ModelAnswer(values, tokens if isinstance(tokens, int) else 0, mode)
        raise VendorError(self.name, "no structured-output mode worked")  # pragma: no cover

    async def _call(self, mode: str, text: str, schema: dict[str, Any],
                    errors: list[str] | None) -> Any:
        properties = json.dumps(schema.get("properties", {}), ensure_ascii=False)
        system = ("Read these fields from the web page below and answer with one JSON "
                  f"object with exactly these properties: {properties}. Copy each value as "
                  "the page writes it; a field the page does not state is null. Never "
                  "guess.")
        if errors:
            system += " Your last answer was wrong: " + "; ".join(errors)[:2000]
        body: dict[str, Any] = {
            "model": self.model, self.token_param: self.max_tokens,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": text}]}
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "fields", "strict": True, "schema": strict_schema(schema)}}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else None
        return await self.http.request_json("POST", join_url(self.base_url,
                                                             "/chat/completions"),
                                            json_body=body, headers=headers)

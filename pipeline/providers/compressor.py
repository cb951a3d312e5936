"""The compressor's vendor client: an OpenAI-compatible ``/chat/completions`` endpoint that
summarises long page content (the compressor stage, :mod:`pipeline.read.stages`, calls it
through the :class:`~pipeline.store.compress.Compressor` port).

Configuration (environment): ``PIPELINE_COMPRESS_MODEL`` (required: it switches the
compressor on), ``PIPELINE_COMPRESS_BASE_URL`` or ``OPENAI_BASE_URL`` (default OpenAI's),
``PIPELINE_COMPRESS_API_KEY`` or ``OPENAI_API_KEY`` (optional for local servers),
``PIPELINE_COMPRESS_TOKEN_PARAM`` (``max_tokens`` or ``max_completion_tokens``),
``PIPELINE_COMPRESS_TARGET_CHARS`` (2000), ``PIPELINE_COMPRESS_INPUT_CHARS`` (48000: longer
content is split on paragraph/sentence boundaries, summarised piece by piece, then combined),
``PIPELINE_COMPRESS_CONCURRENCY`` (4), ``PIPELINE_COMPRESS_TIMEOUT`` (120 s per model call).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from pipeline.core.errors import PipelineError
from pipeline.core.slices import ModelSettings, VendorSettings
from pipeline.core.truncate import find_cut
from pipeline.providers.common import dig
from pipeline.providers.http import OwnsClient, VendorClient, env_value, join_url
from pipeline.providers.registry import provider_env

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MIN_PIECE_TARGET = 200
MAX_ROUNDS = 3  # summary-of-summaries rounds before the partials are cut to fit


class CompressorConfig(BaseModel):
    """Where and how to call the model; see the module docstring for the variables."""

    model: str
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = None
    token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    target_chars: int = Field(2_000, ge=100)
    input_chars: int = Field(48_000, ge=1_000)
    concurrency: int = Field(4, ge=1, le=64)
    timeout: float = Field(120.0, gt=0)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> CompressorConfig | None:
        """The configuration in the environment, or None when no model is named."""
        env = os.environ if env is None else env
        model = env_value(env, "PIPELINE_COMPRESS_MODEL")
        if not model:
            return None
        fields: dict[str, Any] = {
            "model": model,
            "base_url": env_value(env, "PIPELINE_COMPRESS_BASE_URL", "OPENAI_BASE_URL"),
            "api_key": env_value(env, "PIPELINE_COMPRESS_API_KEY", "OPENAI_API_KEY"),
            "token_param": env_value(env, "PIPELINE_COMPRESS_TOKEN_PARAM"),
            "target_chars": env_value(env, "PIPELINE_COMPRESS_TARGET_CHARS"),
            "input_chars": env_value(env, "PIPELINE_COMPRESS_INPUT_CHARS"),
            "concurrency": env_value(env, "PIPELINE_COMPRESS_CONCURRENCY"),
            "timeout": env_value(env, "PIPELINE_COMPRESS_TIMEOUT"),
        }
        try:
            return cls(**{k: v for k, v in fields.items() if v is not None})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise PipelineError("config",
                                f"invalid compressor settings: {where}: {first['msg']}") from exc


def split_text(text: str, budget: int) -> list[str]:
    """Pieces of at most ``budget`` characters, cut on paragraph/sentence/word boundaries."""
    pieces: list[str] = []
    rest = text
    while len(rest) > budget:
        end = find_cut(rest, budget).end or budget
        piece = rest[:end].strip()
        if piece:
            pieces.append(piece)
        rest = rest[end:].lstrip()
    if rest.strip():
        pieces.append(rest.strip())
    return pieces


class OpenAICompressor(OwnsClient):
    """Summaries from an OpenAI-compatible ``/chat/completions`` endpoint, with the shared
    vendor HTTP client (timeouts, ``Retry-After``-aware retries) and a concurrency cap."""

    name = "compressor"

    def __init__(self, config: CompressorConfig, settings: VendorSettings,
                 **client_options: Any):
        self.config = config
        self.http = VendorClient(self.name, settings, total_timeout=config.timeout,
                                 **client_options)
        self._gate = asyncio.Semaphore(config.concurrency)

    async def compress(self, text: str, instruction: str | None = None) -> str:
        """A summary of ``text`` of about ``target_chars``; text longer than ``input_chars``
        is summarised piece by piece first. Raises ``PipelineError('compress')``."""
        return await self._compress(text, instruction, rounds=MAX_ROUNDS)

    async def _compress(self, text: str, instruction: str | None, *, rounds: int) -> str:
        budget, target = self.config.input_chars, self.config.target_chars
        if len(text) <= budget:
            return await self._ask(text, instruction, target, combine=False)
        pieces = split_text(text, budget)
        piece_target = max(target // len(pieces), _MIN_PIECE_TARGET)
        partials = await asyncio.gather(
            *(self._ask(piece, instruction, piece_target, combine=False) for piece in pieces))
        joined = "\n\n".join(partials)
        if len(joined) > budget:
            if rounds > 1:  # still too long to combine in one call: another round
                return await self._compress(joined, instruction, rounds=rounds - 1)
            joined = joined[: find_cut(joined, budget).end]  # a model that ignores targets
        return await self._ask(joined, instruction, target, combine=True)

    async def _ask(self, text: str, instruction: str | None, target: int, *,
                   combine: bool) -> str:
        task = ("Merge these partial summaries of one web page into a single summary."
                if combine else "Summarise this web page content.")
        system = (f"{task} Keep the facts, names, numbers, dates and links a reader needs. "
                  f"Write at most {target} characters. Reply with the summary only.")
        if instruction:
            system += f" Focus: {instruction}"
        body = {"model": self.config.model,
                "messages": [{"role": "system", "content": system},
                             {"role": "user", "content": text}],
                self.config.token_param: target // 3 + 64}
        headers = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key \
            else None
        url = join_url(self.config.base_url, "/chat/completions")
        try:
            async with self._gate:
                data = await self.http.request_json("POST", url, json_body=body, headers=headers)
        except PipelineError as exc:
            raise PipelineError("compress", exc.message, retryable=exc.retryable) from exc
        choices = dig(data, "choices")
        content = dig(choices[0], "message", "content") \
            if isinstance(choices, list) and choices else None
        if not isinstance(content, str) or not content.strip():
            raise PipelineError("compress", "compressor: the model returned no summary")
        return content.strip()


def compressor_from_env(settings: ModelSettings,
                        env: Mapping[str, str] | None = None) -> OpenAICompressor | None:
    """The configured compressor, or None (an async context manager: close it after use).
    The variables may also come from the config file's ``provider_env`` table."""
    config = CompressorConfig.from_env(provider_env(settings, env))
    return OpenAICompressor(config, settings) if config else None

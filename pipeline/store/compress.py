"""The compressor stage: an LLM summary of long page content, fail closed.

:class:`Compressor` is the port; :class:`OpenAICompressor` calls any OpenAI-compatible
``/chat/completions`` endpoint; :class:`FakeCompressor` is for tests. The stage runs only
when a compressor is configured and the content is at least ``settings.compress_floor``
characters; a failure turns that record into a ``compress`` error (no uncompressed fallback).

Configuration (environment): ``PIPELINE_COMPRESS_MODEL`` (required: it switches the
compressor on), ``PIPELINE_COMPRESS_BASE_URL`` or ``OPENAI_BASE_URL`` (default OpenAI's),
``PIPELINE_COMPRESS_API_KEY`` or ``OPENAI_API_KEY`` (optional for local servers),
``PIPELINE_COMPRESS_TOKEN_PARAM`` (``max_tokens`` or ``max_completion_tokens``),
``PIPELINE_COMPRESS_TARGET_CHARS`` (2000), ``PIPELINE_COMPRESS_INPUT_CHARS`` (48000: longer
content is split on paragraph/sentence boundaries, summarised piece by piece, then combined),
``PIPELINE_COMPRESS_CONCURRENCY`` (4), ``PIPELINE_COMPRESS_TIMEOUT`` (120 s per model call).
The whole stage of one URL — waiting for a model slot, every piece, retry and combining call
— has ``settings.compress_deadline`` seconds; its time is counted in the record's
``elapsed_ms``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, ValidationError

from pipeline.core.errors import PipelineError
from pipeline.core.models import ErrorInfo, Record
from pipeline.core.settings import Settings
from pipeline.core.truncate import find_cut, truncate
from pipeline.providers.common import dig
from pipeline.providers.http import OwnsClient, VendorClient, env_value, join_url
from pipeline.providers.registry import provider_env

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MIN_PIECE_TARGET = 200
MAX_ROUNDS = 3  # summary-of-summaries rounds before the partials are cut to fit


@runtime_checkable
class Compressor(Protocol):
    """Contract: ``compress(text, instruction)`` returns the summary or raises
    ``PipelineError('compress')``."""

    async def compress(self, text: str, instruction: str | None = None) -> str: ...


class FakeCompressor:
    """Returns ``reply`` (default: the first ``target_chars`` of the text) or raises
    ``error``; ``calls`` records the texts it was given."""

    def __init__(self, reply: str | None = None, *, error: PipelineError | None = None,
                 target_chars: int = 100) -> None:
        self.reply = reply
        self.error = error
        self.target_chars = target_chars
        self.calls: list[tuple[str, str | None]] = []

    async def compress(self, text: str, instruction: str | None = None) -> str:
        self.calls.append((text, instruction))
        if self.error is not None:
            raise self.error
        return self.reply if self.reply is not None else text[: self.target_chars]


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

    def __init__(self, config: CompressorConfig, settings: Settings, **client_options: Any):
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


def compressor_from_env(settings: Settings,
                        env: Mapping[str, str] | None = None) -> OpenAICompressor | None:
    """The configured compressor, or None (an async context manager: close it after use).
    The variables may also come from the config file's ``provider_env`` table."""
    config = CompressorConfig.from_env(provider_env(settings, env))
    return OpenAICompressor(config, settings) if config else None


async def compress_record(record: Record, compressor: Compressor, *, floor: int,
                          instruction: str | None, max_chars: int,
                          deadline: float | None = None) -> Record:
    """Compress one record's content if it is at least ``floor`` characters long, within
    ``deadline`` seconds (None: no limit); the time it takes is added to ``elapsed_ms``.

    The result says ``compressed: true`` and keeps ``metadata.original_chars``; a failure
    (an error, the deadline, an answer that is not a text) is a ``compress`` error for this
    URL (fail closed: the long content is not returned).
    """
    if not record.ok or not record.content or len(record.content) < floor:
        return record
    started = time.monotonic()
    limit = asyncio.timeout(deadline)
    info: ErrorInfo | None  # None: the summary is good
    try:
        async with limit:
            summary = await compressor.compress(record.content, instruction)
    except PipelineError as exc:
        info = exc.to_info() if exc.kind == "compress" else \
            ErrorInfo(kind="compress", message=exc.message, retryable=exc.retryable)
    except TimeoutError as exc:
        info = ErrorInfo(kind="compress", message=f"compressor: no summary within {deadline:g} s",
                         retryable=True) if limit.expired() else _crashed(exc)
    except Exception as exc:  # cancellation and Ctrl-C are BaseExceptions: they pass
        info = _crashed(exc)
    else:
        info = _not_a_summary(summary)
    elapsed_ms = record.elapsed_ms + round((time.monotonic() - started) * 1000)
    if info is None:
        cut = truncate(summary, max_chars, markdown=record.format == "markdown")
        metadata = {**record.metadata, "original_chars": len(record.content)}
        return record.model_copy(update={"content": cut.text, "chars": len(cut.text),
                                         "compressed": True, "metadata": metadata,
                                         "next_offset": None, "elapsed_ms": elapsed_ms})
    return record.model_copy(update={"ok": False, "content": None, "chars": 0, "error": info,
                                     "next_offset": None, "elapsed_ms": elapsed_ms})


def _crashed(exc: BaseException) -> ErrorInfo:
    return ErrorInfo(kind="compress", message=f"compressor crashed ({type(exc).__name__})")


def _not_a_summary(summary: object) -> ErrorInfo | None:
    """Why a compressor's answer is no summary (a custom one may return anything), or None."""
    if not isinstance(summary, str):
        return ErrorInfo(kind="compress", message="compressor returned "
                         f"{type(summary).__name__}, not a text")
    if not summary.strip():
        return ErrorInfo(kind="compress", message="compressor returned an empty summary")
    return None


def compressing(extract: Callable[[str], Awaitable[Record]], compressor: Compressor,
                settings: Settings) -> Callable[[str], Awaitable[Record]]:
    """Wrap the batch engine's ``extract(url) -> Record`` with the compressor stage
    (``--compress``: floor, instruction and ``max_chars`` from ``settings``)."""
    async def run(url: str) -> Record:
        return await compress_record(await extract(url), compressor,
                                     floor=settings.compress_floor,
                                     instruction=settings.instruction,
                                     max_chars=settings.max_chars,
                                     deadline=settings.compress_deadline)

    return run


async def compress_records(records: Sequence[Record], compressor: Compressor | None,
                           settings: Settings, *, instruction: str | None, max_chars: int,
                           warnings: list[str]) -> list[Record]:
    """Run the stage over a list of records. Without an injected or configured compressor
    nothing changes and a warning says so."""
    owned = None
    if compressor is None:
        compressor = owned = compressor_from_env(settings)
        if compressor is None:
            warnings.append("compression requested but no compressor is configured "
                            "(set PIPELINE_COMPRESS_MODEL)")
            return list(records)
    try:
        return list(await asyncio.gather(*(
            compress_record(record, compressor, floor=settings.compress_floor,
                            instruction=instruction, max_chars=max_chars,
                            deadline=settings.compress_deadline)
            for record in records)))
    finally:
        if owned is not None:
            await owned.aclose()

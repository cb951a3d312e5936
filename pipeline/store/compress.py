"""Compressing one record: an LLM summary of long page content, fail closed.

:class:`Compressor` is the port; :class:`~pipeline.providers.compressor.OpenAICompressor`
calls any OpenAI-compatible ``/chat/completions`` endpoint (its configuration is described
there); :class:`FakeCompressor` is for tests. The compress stage
(:mod:`pipeline.read.stages`) runs :func:`compress_record` only when a compressor is
configured, on content of at least ``settings.compress_floor`` characters; a failure turns
that record into a ``compress`` error (no uncompressed fallback). The whole stage of one URL
— waiting for a model slot, every piece, retry and combining call — has
``settings.compress_deadline`` seconds; its time is counted in the record's ``elapsed_ms``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol, runtime_checkable

from pipeline.core.errors import PipelineError
from pipeline.core.models import ErrorInfo, Record
from pipeline.core.truncate import truncate


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

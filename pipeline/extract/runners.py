"""Where a handler's CPU-bound ``bytes → Document`` work runs: the :class:`Runner` port.

:class:`InlineRunner` (here) runs handlers in a thread — for a library caller extracting a
few URLs, who should not pay for starting processes. The batch command's process pool is
:class:`pipeline.batch.pool.ProcessRunner`.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from handlers import ContentHandler, HandlerContext
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document
from pipeline.core.truncate import truncate


class Runner(Protocol):
    """Runs one handler over one body, as an async context manager.

    ``run`` returns the handler's :class:`Document` (a :class:`CutDocument` when the runner
    already cut it to ``ctx.options.max_chars``) and raises ``PipelineError`` only: a
    handler that raises, hangs past the runner's time limit or kills its process is an
    ``extract`` error; a runner that cannot start is ``config``. :class:`InlineRunner` is the
    simplest implementation and serves as the fake in tests.
    """

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        ...

    async def __aenter__(self) -> Runner: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


class CutDocument(Document):
    """A document whose content a worker already cut to the call's ``max_chars`` option
    (``truncated``/``next_offset`` as :func:`pipeline.core.truncate.truncate` says): the event loop
    then neither unpickles nor scans text past the budget."""

    truncated: bool = False
    next_offset: int | None = None


def call_handler(handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
    """Run a handler, turning any failure into a ``PipelineError`` with a stable kind; with
    ``ctx.options.detect_lang`` the document's language is added to its metadata here, where
    the handler ran (a worker process in batch mode)."""
    try:
        document = handler.handle(body, ctx)
    except PipelineError:
        raise
    except Exception as exc:  # a handler bug is this URL's 'extract' error, nothing more
        raise PipelineError(
            "extract", f"handler {handler.name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(document, Document):
        raise PipelineError(
            "extract", f"handler {handler.name!r} returned {type(document).__name__}"
        )
    if ctx.options.detect_lang:
        from pipeline.extract.language import label_language  # fastText loads on first use

        return label_language(document)
    return document


def cut_to_budget(document: Document, ctx: HandlerContext) -> Document:
    """``document`` with its content cut to ``ctx.options.max_chars`` when given (content
    that is only whitespace is left alone: the caller reports it as empty)."""
    max_chars = ctx.options.max_chars
    if max_chars is None or max_chars < 1 or not document.content.strip():
        return document
    cut = truncate(document.content, max_chars, markdown=document.format == "markdown")
    return CutDocument.model_construct(**{**document.__dict__, "content": cut.text},
                                       truncated=cut.truncated, next_offset=cut.next_offset)


class InlineRunner:
    """Handlers in a thread, with a time limit (a thread cannot be killed: past the limit
    the URL fails and the thread is left to finish on its own)."""

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout

    async def run(self, handler: ContentHandler, body: bytes, ctx: HandlerContext) -> Document:
        try:
            async with asyncio.timeout(self.timeout):
                return await asyncio.to_thread(call_handler, handler, body, ctx)
        except TimeoutError as exc:
            raise PipelineError(
                "extract", f"handler {handler.name!r} took longer than {self.timeout:g}s"
            ) from exc

    async def __aenter__(self) -> InlineRunner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

"""The native extract port: one URL → fetch → handler → truncation → :class:`Record`.

:class:`NativeExtractor` never raises for a per-URL problem: a ``PipelineError`` becomes the
record's ``error`` with its kind, anything unexpected becomes ``extract``. It is also the
``native`` :class:`~pipeline.providers.base.ExtractProvider`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Protocol

from handlers import HandlerContext, HandlerOptions, HandlerRegistry, registry_for
from pipeline.core.errors import PipelineError, sanitize_message
from pipeline.core.field_schemas import schema_text
from pipeline.core.models import Document, ErrorInfo, ExtractOptions, OutputFormat, Record
from pipeline.core.settings import load_settings
from pipeline.core.slices import HandlerSettings, NativeSettings
from pipeline.core.truncate import Truncated, clip_metadata, clip_title, truncate
from pipeline.extract.runners import CutDocument, InlineRunner, Runner
from pipeline.fetch import HttpFetcher, normalize_url
from pipeline.fetch.base import Fetcher, FetchError, Validators

if TYPE_CHECKING:
    from handlers import ContentHandler
    from pipeline.browser.renderer import Renderer
    from pipeline.fetch.base import FetchResult
    from pipeline.fetch.local_files import LocalSource

SNIFF_BYTES = 1024
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


class StoredPage(Protocol):
    """A record kept from an earlier extraction and the validators of its response (the
    full-text cache's :class:`~pipeline.store.cache.CachedPage`): what a conditional GET
    revalidates."""

    @property
    def record(self) -> Record: ...

    @property
    def validators(self) -> Validators | None: ...


def load_registry(settings: HandlerSettings) -> HandlerRegistry:
    """The handler registry for ``settings.handlers``; a bad spec is a ``config`` error."""
    if settings.html_extractor == "readability":
        from handlers.html_readability import require

        require()  # a missing extra: one line before any work, not an error per page
    try:
        return registry_for(tuple(settings.handlers))
    except Exception as exc:
        raise PipelineError("config", f"cannot load handlers {settings.handlers}: {exc}") from exc


class NativeExtractor:
    """Fetch and extract URLs with this package's own fetcher and handlers.

    Use as an async context manager. ``settings`` is its slice (default: the settings of
    the environment and ``PIPELINE_CONFIG``). ``fetcher`` defaults to the HTTP fetcher (created and
    closed here; an injected fetcher is the caller's to open and close), ``runner`` to an
    :class:`~pipeline.extract.runners.InlineRunner` (pass a
    :class:`~pipeline.batch.pool.ProcessRunner` for batch work), ``registry`` to the default
    handlers plus ``settings.handlers``. ``local_files`` (the batch command's
    ``--allow-files``, nothing else) reads paths and ``file:`` URLs it allows. With
    ``settings.render`` other than ``never`` HTML pages may be rendered in a headless browser
    (:mod:`pipeline.browser`; ``renderer`` replaces the one built here and is the caller's to
    open and close).
    """

    name = "native"

    def __init__(self, settings: NativeSettings | None = None, *,
                 fetcher: Fetcher | None = None, runner: Runner | None = None,
                 registry: HandlerRegistry | None = None,
                 local_files: LocalSource | None = None,
                 renderer: Renderer | None = None) -> None:
        self.settings: NativeSettings = settings if settings is not None else load_settings()
        self.registry = registry if registry is not None else load_registry(self.settings)
        self._fetcher = fetcher
        self._runner = runner
        self._local_files = local_files
        self._renderer = renderer
        self._stack: AsyncExitStack | None = None

    def is_configured(self) -> bool:
        return True

    def rejects_media_type(self, media_type: str | None) -> bool:
        """True when no handler could take this type (the fetcher's early rejection)."""
        return self.registry.rejects_early(media_type)

    def _make_fetcher(self) -> Fetcher:
        return HttpFetcher(self.settings, early_reject=self.rejects_media_type)

    async def __aenter__(self) -> NativeExtractor:
        stack = AsyncExitStack()
        try:
            if self._fetcher is None:
                self._fetcher = await stack.enter_async_context(self._make_fetcher())
            runner = self._runner or InlineRunner(self.settings.handler_timeout)
            self._runner = await stack.enter_async_context(runner)
            if self._renderer is None and self.settings.render != "never":
                from pipeline.browser.renderer import Renderer  # Playwright only when used

                self._renderer = await stack.enter_async_context(Renderer(
                    self.settings, gate=getattr(self._fetcher, "gate", None),
                    credential_scope=getattr(self._fetcher, "credential_scope", None)))
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def extract_one(self, url: str, *, index: int | None = None,
                          format: OutputFormat | None = None,
                          max_chars: int | None = None) -> Record:
        """One record for ``url``; never raises for a problem with this URL."""
        record, _ = await self.extract_validated(url, index=index, format=format,
                                                 max_chars=max_chars)
        return record

    async def extract_validated(self, url: str, *, index: int | None = None,
                                format: OutputFormat | None = None,
                                max_chars: int | None = None,
                                cached: StoredPage | None = None
                                ) -> tuple[Record, Validators | None]:
        """:meth:`extract_one`, and the validators of the response (None: it had none).

        With ``cached`` (a stored record and its validators) the GET is conditional: when
        the server answers 304 the cached record comes back, marked ``revalidated``,
        without any extraction (and with the validators the 304 carried, else the old ones).
        """
        if self._stack is None or self._fetcher is None or self._runner is None:
            raise RuntimeError("NativeExtractor used outside 'async with'")
        started = time.monotonic()
        fields: dict[str, Any] = {"url": url, "index": index}
        validators: Validators | None = None
        try:
            record, validators = await self._extract(url, fields,
                                                     format or self.settings.format,
                                                     max_chars or self.settings.max_chars,
                                                     cached)
        except FetchError as exc:
            fields.update(attempts=exc.attempts, status=exc.status, final_url=exc.final_url)
            record = Record.failure(error=exc.to_info(), **fields)
        except PipelineError as exc:
            record = Record.failure(error=exc.to_info(), **fields)
        except Exception as exc:  # a bug must cost one URL, not the run
            message = sanitize_message(f"{type(exc).__name__}: {exc}")
            record = Record.failure(error=ErrorInfo(kind="extract", message=message), **fields)
        record.elapsed_ms = round((time.monotonic() - started) * 1000)
        return record, validators

    def _handler_options(self, max_chars: int) -> HandlerOptions:
        s = self.settings
        return HandlerOptions(max_chars=max_chars, pdf_max_pages=s.pdf_max_pages,
                              pdf_time_limit=s.pdf_time_limit,
                              include_comments=s.include_comments,
                              html_extractor=s.html_extractor,
                              structured_raw=s.structured_raw, detect_lang=s.detect_lang,
                              links=s.links,
                              schema=None if s.fields_schema is None
                              else schema_text(s.fields_schema))

    async def _extract(self, url: str, fields: dict[str, Any], format: OutputFormat,
                       max_chars: int, cached: StoredPage | None = None
                       ) -> tuple[Record, Validators | None]:
        assert self._fetcher is not None and self._runner is not None
        if self._local_files is not None and self._local_files.claims(url):
            result = await self._local_files.fetch(url, self.settings.max_bytes)
            target = result.final_url
        elif cached is not None and cached.validators is not None:
            target = normalize_url(url)
            result = await self._fetcher.fetch(target, validators=cached.validators)
            if result.not_modified:
                again = Validators.from_headers(cached.validators.url, result.headers)
                update = {"cache": "revalidated", "index": fields["index"],
                          "attempts": result.attempts}
                return cached.record.model_copy(update=update), again or cached.validators
        else:
            target = normalize_url(url)
            result = await self._fetcher.fetch(target)
        fields.update(final_url=result.final_url, status=result.status,
                      content_type=result.media_type, bytes=len(result.body),
                      attempts=result.attempts)
        handler = self.registry.select(result.media_type, result.body[:SNIFF_BYTES])
        fields["handler"] = handler.name
        ctx = HandlerContext(url=target, final_url=result.final_url,
                             media_type=result.media_type, charset=result.charset,
                             format=format, options=self._handler_options(max_chars))
        if self._renderer is not None and self._renderable(result, handler):
            document = await self._rendered_document(url, result, handler, ctx, fields)
        else:
            try:
                document = await self._runner.run(handler, result.body, ctx)
            except PipelineError as exc:
                hinted = self._render_hint(exc)
                if hinted is exc:
                    raise
                raise hinted from exc
        fields.update(title=clip_title(document.title), format=document.format,
                      metadata=clip_metadata(document.metadata))
        if document.fields is not None:
            fields.update(fields=document.fields, fields_meta=document.fields_meta)
        if document.links is not None:  # kept on an empty page too: a crawl follows them
            fields.update(links=document.links, nofollow_links=document.nofollow_links)
        if not document.content.strip():
            raise PipelineError("empty", "nothing worth reading on the page")
        cut = (Truncated(document.content, document.truncated, document.next_offset)
               if isinstance(document, CutDocument)
               else truncate(document.content, max_chars, markdown=document.format == "markdown"))
        record = Record(ok=True, content=cut.text, truncated=cut.truncated,
                        next_offset=cut.next_offset, chars=len(cut.text), **fields)
        return record, Validators.from_headers(result.final_url, result.headers)

    def _render_hint(self, error: PipelineError) -> PipelineError:
        """With rendering off, an app shell's error names ``--render auto``."""
        if self.settings.render != "never" or error.kind != "challenge":
            return error
        from pipeline.browser.shells import with_render_hint

        return with_render_hint(error)

    def _renderable(self, result: FetchResult, handler: ContentHandler) -> bool:
        """Only an HTML answer (by its type, or sniffed when it has none) is rendered."""
        if result.media_type is not None:
            return result.media_type in HTML_TYPES
        return handler.name == "html"

    async def _rendered_document(self, url: str, result: FetchResult, handler: ContentHandler,
                                 ctx: HandlerContext, fields: dict[str, Any]) -> Document:
        """The page's document as the settings' render mode wants it: ``always`` renders
        first; ``auto`` extracts the fetched page and renders it only when that found an
        app shell or next to nothing where scripts were (:mod:`pipeline.browser.shells`)."""
        from pipeline.browser.renderer import Source
        from pipeline.browser.shells import render_reason

        assert self._renderer is not None and self._runner is not None
        if self.settings.render == "auto":
            try:
                document = await self._runner.run(handler, result.body, ctx)
            except PipelineError as exc:
                if render_reason(result.body, error=exc) is None:
                    raise
            else:
                if render_reason(result.body, content_chars=len(document.content)) is None:
                    return document
        budget = self.settings.timeout - result.elapsed
        if budget <= 0:
            raise PipelineError("timeout", f"no time left to render within "
                                f"{self.settings.timeout:g} s", retryable=True)
        rendered = await self._renderer.render(Source(
            url=url, final_url=result.final_url, body=result.body,
            media_type=result.media_type, charset=result.charset,
            headers=dict(result.headers)), budget)
        fields.update(rendered=True, bytes=rendered.bytes, final_url=rendered.final_url,
                      status=rendered.status)
        ctx = dataclasses.replace(ctx, final_url=rendered.final_url, charset="utf-8")
        return await self._runner.run(handler, rendered.html, ctx)

    async def extract(self, urls: Sequence[str],
                      options: ExtractOptions | None = None) -> list[Record]:
        """One record per URL in input order; identical URLs are fetched once."""
        if self._stack is None:
            async with self:
                return await self.extract(urls, options)
        format = options.format if options else None
        max_chars = options.max_chars if options else None
        gate = asyncio.Semaphore(self.settings.concurrency)

        async def one(url: str) -> Record:
            async with gate:
                return await self.extract_one(url, format=format, max_chars=max_chars)

        unique = list(dict.fromkeys(urls))
        records = await asyncio.gather(*(one(u) for u in unique))
        found = dict(zip(unique, records, strict=True))
        return [found[url].model_copy(deep=True) for url in urls]

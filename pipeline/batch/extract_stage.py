"""The batch command's view of providers and the compressor: one ``extract(url) -> Record``
callable for :class:`pipeline.batch.engine.BatchEngine`, honouring ``--extract-backend`` /
``backend`` (with failover), ``--cache DIR`` (with revalidation when the extraction is
our own: :mod:`pipeline.batch.cached`), ``--lang`` (:mod:`pipeline.batch.language_filter`)
and ``--compress``.

When the selection is just our own pipeline and nothing is compressed, the engine gets the
native extractor's own ``extract_one`` (no extra layer on the hot path).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pipeline.batch.cached import cached_extract, revalidating_extract
from pipeline.batch.language_filter import language_filtered
from pipeline.core.errors import PipelineError
from pipeline.core.models import ExtractOptions, Record
from pipeline.core.settings import Settings
from pipeline.fetch.policy import NetworkPolicy
from pipeline.providers.chain import one_url_extract, open_extractor
from pipeline.providers.registry import (
    EXTRACT,
    ProviderSpec,
    Registry,
    default_registry,
    provider_env,
)
from pipeline.store.cache import cache_for
from pipeline.store.paging import FULL_TEXT_CHARS

if TYPE_CHECKING:
    from pipeline.providers.compressor import CompressorConfig

Extract = Callable[[str], Awaitable[Record]]


def _with_native(native: Any, registry: Registry | None) -> Registry:
    """A copy of ``registry`` whose ``native`` entry is the caller's configured instance
    (process-pool runner, injected fetcher)."""
    base = registry or default_registry()
    copy = Registry(base.specs(), defaults=base.defaults, auto_detect=base.auto_detect)
    copy.register(ProviderSpec("native", EXTRACT, lambda settings, env: native,
                               hint="no key needed (our own pipeline)"))
    return copy


def compressor_config(settings: Settings) -> CompressorConfig | None:
    """The model ``--compress`` calls (None without ``--compress``); ``config`` error when
    none is configured or its variables are invalid."""
    if not settings.compress:
        return None
    # only a compressing run pays its imports
    from pipeline.providers.compressor import CompressorConfig

    config = CompressorConfig.from_env(provider_env(settings))
    if config is None:
        raise PipelineError("config", "--compress needs a compressor model: set "
                            "PIPELINE_COMPRESS_MODEL (and its base URL/key)")
    return config


@contextlib.asynccontextmanager
async def batch_extract(settings: Settings, native: Any, *,
                        registry: Registry | None = None) -> AsyncIterator[Extract]:
    """Open everything the batch needs and yield its ``extract(url)``; closes it all on exit.

    Raises ``PipelineError('config')`` before any work for an unknown/incapable provider name
    or for ``compress`` without a configured compressor.
    """
    async with contextlib.AsyncExitStack() as stack:
        extract: Extract
        compressor = None
        if (config := compressor_config(settings)) is not None:
            from pipeline.providers.compressor import OpenAICompressor
            from pipeline.store.compress import compressing

            compressor = await stack.enter_async_context(OpenAICompressor(config, settings))
        extractor = open_extractor(settings, registry=_with_native(native, registry))
        cache = cache_for(settings, batch=True)
        # --cache DIR keeps whole pages, so a later run can cut them to its own budget
        budget = FULL_TEXT_CHARS if cache.enabled else settings.max_chars
        if extractor.chain.names == ["native"]:
            opened = await stack.enter_async_context(native)
            extract = opened.extract_one
            if cache.enabled:  # revalidation needs our own fetcher's conditional requests
                extract = revalidating_extract(opened, cache, settings, backends=["native"])
        else:
            if not settings.quiet:  # pages going to a vendor may cost money: say so
                print(f"extract-pipeline: extracting with {' → '.join(extractor.chain.names)}",
                      file=sys.stderr)
            await stack.enter_async_context(extractor)
            options = ExtractOptions(format=settings.format, max_chars=budget)
            extract = one_url_extract(extractor, options, NetworkPolicy.from_settings(settings))
            if cache.enabled:
                extract = cached_extract(extract, cache, settings, backends=extractor.chain.names)
        # our handlers detect the language themselves; records from elsewhere are labelled here
        foreign = cache.enabled or extractor.chain.names != ["native"]
        if settings.languages or (settings.detect_lang and foreign):
            extract = language_filtered(extract, settings)  # before paying the compressor
        yield compressing(extract, compressor, settings) if compressor is not None else extract

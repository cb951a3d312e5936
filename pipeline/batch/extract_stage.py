"""The batch command's reader: one ``extract(url) -> Record`` callable for
:class:`pipeline.batch.engine.BatchEngine`, the library's way of a URL
(:mod:`pipeline.read.reader`) with the run's own native extractor (process-pool runner),
``--extract-backend`` (with failover), ``--cache DIR`` (revalidating), ``--lang`` and
``--compress`` (:data:`pipeline.read.stages.STAGES`).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pipeline.core.errors import PipelineError
from pipeline.core.models import Record
from pipeline.core.slices import ReadSettings
from pipeline.providers.chain import open_extractor
from pipeline.providers.registry import (
    EXTRACT,
    ProviderSpec,
    Registry,
    default_registry,
    provider_env,
)
from pipeline.read.reader import Reader, ReadRuntime
from pipeline.read.stages import StageContext, build_stages
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


def compressor_config(settings: ReadSettings) -> CompressorConfig | None:
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
async def batch_extract(settings: ReadSettings, native: Any, *,
                        registry: Registry | None = None) -> AsyncIterator[Extract]:
    """Open the run's reader (:class:`pipeline.read.reader.Reader`) and yield its
    ``extract(url)``; closes it all on exit.

    Raises ``PipelineError('config')`` before any work for an unknown/incapable provider name
    or for ``compress`` without a configured compressor.
    """
    compressor_config(settings)  # the config error first, before anything opens
    extractor = open_extractor(settings, registry=_with_native(native, registry))
    names = extractor.chain.names
    runtime = ReadRuntime.open(settings, batch=True)
    # --cache DIR keeps whole pages, so a later run can cut them to its own budget
    budget = FULL_TEXT_CHARS if runtime.cache.enabled else settings.max_chars
    context = StageContext(settings, foreign=runtime.cache.enabled or names != ["native"],
                           max_chars=settings.max_chars, compress=settings.compress,
                           instruction=settings.instruction, strict=True)
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(runtime.close)
        await stack.enter_async_context(extractor)
        if names != ["native"] and not settings.quiet:  # a vendor may cost money: say so
            print(f"extract-pipeline: extracting with {' → '.join(names)}", file=sys.stderr)
        reader = await stack.enter_async_context(Reader(
            extractor, runtime, settings, format=settings.format, budget=budget,
            stages=build_stages(context)))
        yield functools.partial(reader.read_one, max_chars=settings.max_chars)

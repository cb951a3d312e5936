"""The batch command's per-URL extract through the full-text cache (``--cache DIR``).

With our own pipeline (:func:`revalidating_extract`): a page stored less than ``cache_ttl`` ago
is served from the cache (``cache: "hit"``, no request). An older one whose response had an
``ETag`` or ``Last-Modified`` is revalidated: one conditional GET (no HEAD); a ``304`` serves
the stored record (``cache: "revalidated"``, no extraction) and makes it fresh again, anything
else is extracted and stored as usual. Other pages are fetched and extracted, and stored when
they succeed.

Vendor extract backends have no conditional requests: their cached pages expire
(:func:`cached_extract`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from pipeline.core.models import ExtractOptions, Record
from pipeline.core.settings import Settings
from pipeline.extract.native import NativeExtractor
from pipeline.store.cache import TextCache, cache_keys
from pipeline.store.paging import FULL_TEXT_CHARS, page_record, read_windows, text_identity


def revalidating_extract(native: NativeExtractor, cache: TextCache, settings: Settings, *,
                         backends: Sequence[str]) -> Callable[[str], Awaitable[Record]]:
    """The per-URL extract of a batch run with ``--cache DIR`` and native extraction; records
    are cut to ``settings.max_chars`` (the cache keeps whole texts)."""
    identity = text_identity(settings, backends)
    max_chars = settings.max_chars

    async def one(url: str) -> Record:
        started = time.monotonic()
        [key] = cache_keys([url], format=settings.format, **identity)
        page = await cache.lookup(key)
        if page is not None and page.fresh:
            elapsed = round((time.monotonic() - started) * 1000)
            hit = page.record.model_copy(update={"cache": "hit", "attempts": 0,
                                                 "elapsed_ms": elapsed})
            return page_record(hit, 0, max_chars)
        record, validators = await native.extract_validated(url, max_chars=FULL_TEXT_CHARS,
                                                            cached=page)
        if record.cache == "revalidated":
            await cache.refresh(key, validators)
        elif record.ok:
            await cache.store(key, record, validators)
        return page_record(record, 0, max_chars)

    return one


def cached_extract(
    extract_full: Callable[[str], Awaitable[Record]],
    cache: TextCache,
    settings: Settings,
    *,
    backends: Sequence[str],
) -> Callable[[str], Awaitable[Record]]:
    """The batch command's per-URL extract through the full-text cache (``--cache DIR``):
    fresh pages come from ``cache``, others from ``extract_full`` (which must extract the
    whole text: budget :data:`FULL_TEXT_CHARS`) and are stored; either way the record is cut
    to ``settings.max_chars``."""
    options = ExtractOptions(format=settings.format, max_chars=settings.max_chars)
    identity = text_identity(settings, backends)

    async def extract_many(urls: list[str], _: ExtractOptions) -> list[Record]:
        return list(await asyncio.gather(*(extract_full(url) for url in urls)))

    async def one(url: str) -> Record:
        [record] = await read_windows(extract_many, [url], options, cache=cache,
                                      identity=identity)
        return record

    return one

"""The reader: one URL's way from the extractor to a record, the same for every caller.

policy check → extractor (our own ``native`` pipeline, or a vendor chain with failover) →
full-text cache → window (``offset``, ``max_chars``) → stages (:mod:`pipeline.read.stages`).

Cache: a page stored less than ``cache_ttl`` ago is served from it (``cache: "hit"``). An
older one whose response had an ``ETag`` or ``Last-Modified`` is revalidated when our own
pipeline reads it: one conditional GET; a 304 serves the stored record (``cache:
"revalidated"``) and makes it fresh again. ``cache_ttl=0`` revalidates every read. Vendor
extractors have no conditional requests: their stored pages expire.

Single flight: concurrent reads of one page through one :class:`ReadRuntime` load it once
(a vendor chain is still called once per batch of misses).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.errors import PipelineError
from pipeline.core.models import ExtractOptions, OutputFormat, Record
from pipeline.core.single_flight import SingleFlight
from pipeline.core.slices import CacheSettings, ReaderSettings
from pipeline.fetch.policy import NetworkPolicy
from pipeline.providers.chain import ChainExtractor
from pipeline.providers.common import check_page_url
from pipeline.read.stages import Stage
from pipeline.store.cache import TextCache, cache_keys, open_cache
from pipeline.store.paging import page_record, text_identity


@dataclass
class ReadRuntime:
    """What reads share while it lives: the full-text cache and single flight. The batch
    command opens one per run, a long-lived caller (the MCP server, an agent) one for its
    life; a library call without one gets one for the call."""

    cache: TextCache
    flights: SingleFlight[str, Record] = field(default_factory=SingleFlight)

    @classmethod
    def open(cls, settings: CacheSettings, *, batch: bool = False) -> ReadRuntime:
        """The runtime these settings describe (see :func:`pipeline.store.cache.open_cache`)."""
        return cls(open_cache(settings, batch=batch))

    def close(self) -> None:
        self.cache.close()


class Reader:
    """Reads pages through ``extractor`` (an open :class:`ChainExtractor`) and ``runtime``.

    ``budget`` is the size full texts are extracted at: the whole text when pages are kept
    or windowed later, else the record's own ``max_chars`` (nothing is cut twice).
    ``stages`` run on every windowed record, in order. ``served_by`` names the provider of
    the last read that extracted anything.
    """

    def __init__(self, extractor: ChainExtractor, runtime: ReadRuntime,
                 settings: ReaderSettings, *,
                 format: OutputFormat, budget: int, stages: Sequence[Stage] = (),
                 storing: bool = True, warnings: list[str] | None = None) -> None:
        self.extractor = extractor
        self.runtime = runtime
        self.settings = settings
        self.format = format
        self.budget = budget
        self.stages = list(stages)
        self.policy = NetworkPolicy.from_settings(settings)
        self.warnings = warnings
        self.served_by: str | None = None
        self._cache = runtime.cache if storing else None
        self._nothing = TextCache(None)  # stores nothing: a caller's opaque provider
        self._identity = text_identity(settings, extractor.chain.names)
        self._native: Any = None
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Reader:
        chain = self.extractor.chain
        if chain.names == ["native"] and chain.owned:  # our own fetcher: conditional GETs
            native = await chain.provider("native")
            if callable(getattr(native, "extract_validated", None)):
                self._native = native
        for stage in self.stages:
            if hasattr(stage, "__aenter__"):
                await self._stack.enter_async_context(stage)  # type: ignore[arg-type]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()

    @property
    def caching(self) -> bool:
        """Whether pages are stored (a directory that opened)."""
        return self._cache is not None and self._cache.enabled

    # --- the way of one URL

    async def read_one(self, url: str, *, max_chars: int) -> Record:
        """The record for one URL as given: held to the policy, read, staged; a refused URL
        or a failure of the whole chain is that URL's error record. Our own extractor checks
        what it fetches itself (and reads stored WARC records by their locator)."""
        try:
            target = url if self._native is not None else check_page_url(url, self.policy)
            [record] = await self.read([target], max_chars=max_chars)
        except PipelineError as exc:
            return Record.failure(url, exc.to_info())
        return record if record.url == url else record.model_copy(update={"url": url})

    async def read(self, urls: Sequence[str], *, max_chars: int, offset: int = 0
                   ) -> list[Record]:
        """One record per URL (distinct, policy-checked URLs), in order: the window at
        ``offset`` of each page's full text, then the stages. Raises the chain's
        ``PipelineError`` when every provider fails."""
        started = time.monotonic()
        keys = cache_keys(urls, format=self.format, **self._identity)
        flight_keys = {f"{key}:{self.budget}": (key, url)  # a budget is part of the text
                       for key, url in zip(keys, urls, strict=True)}
        if self._native is not None:
            gate = asyncio.Semaphore(self.settings.concurrency)  # a call's pages at once

            async def one(key: str, url: str) -> Record:
                async with gate:
                    return await self._native_full(key, url)

            found = await _all([
                self.runtime.flights.run(fkey, functools.partial(one, key, url))
                for fkey, (key, url) in flight_keys.items()])
            fulls = dict(zip(flight_keys, found, strict=True))
        else:
            fulls = await self.runtime.flights.run_many(
                list(flight_keys), lambda batch: self._vendor_full(batch, flight_keys))
        records = []
        for fkey in flight_keys:
            record = fulls[fkey]
            if record.cache == "hit":
                elapsed = round((time.monotonic() - started) * 1000)
                record = record.model_copy(update={"attempts": 0, "elapsed_ms": elapsed})
            if self.budget > max_chars or offset > 0:
                record = page_record(record, offset, max_chars)
            records.append(record)
        return await _all([self._staged(record) for record in records])

    async def _staged(self, record: Record) -> Record:
        for stage in self.stages:
            record = await stage.apply(record)
        return record

    async def _native_full(self, key: str, url: str) -> Record:
        """Our own pipeline: a fresh stored page, else a (conditional) GET and extraction."""
        cache = self._cache
        page = await cache.lookup(key) if cache is not None else None
        if page is not None and page.fresh:
            return page.record.model_copy(update={"cache": "hit"})
        record: Record
        record, validators = await self._native.extract_validated(
            url, format=self.format, max_chars=self.budget, cached=page)
        self.served_by = "native"
        if cache is not None:
            if record.cache == "revalidated":
                await cache.refresh(key, validators)
            elif record.ok:
                await cache.store(key, record, validators)
        return record

    async def _vendor_full(self, batch: list[str],
                           flight_keys: Mapping[str, tuple[str, str]]) -> dict[str, Record]:
        """A vendor chain: fresh stored pages, the rest with ONE call to the chain."""
        cache = self._cache if self._cache is not None else self._nothing
        wanted = {flight_keys[fkey][0]: flight_keys[fkey][1] for fkey in batch}
        found = await cache.fill_many(wanted, self._vendor_extract)
        return {fkey: found[flight_keys[fkey][0]] for fkey in batch}

    async def _vendor_extract(self, urls: list[str]) -> list[Record]:
        options = ExtractOptions(format=self.format, max_chars=self.budget)
        records = await self.extractor.extract(urls, options, self.warnings)
        self.served_by = self.extractor.served_by
        return records


async def _all(calls: list[Coroutine[Any, Any, Record]]) -> list[Record]:
    """The results of ``calls`` run concurrently; one call (a batch line's URL) is awaited
    as it is, without the task ``gather`` would wrap it in."""
    if len(calls) == 1:
        return [await calls[0]]
    return list(await asyncio.gather(*calls))

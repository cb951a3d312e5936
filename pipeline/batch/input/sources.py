"""The items of a run's input (:class:`~pipeline.batch.input.run_input.RunInput`) as the
runs take them.

The plain run expands sitemaps on its own event loop, through a fetcher that shares the
page fetcher's per-host budget (:func:`document_fetcher`) and its handler pool (which
parses the documents), streaming their URLs into the engine (:func:`run_batches`); a
sharded run expands them once, in the process that reads the input, with a worker process
of its own, before its items are split by host like lines (:func:`all_items`).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator

from pipeline.batch.input.documents import in_worker
from pipeline.batch.input.expand import Expander
from pipeline.batch.input.items import InputItem, feed, feed_async
from pipeline.batch.input.run_input import ExpandOptions, RunInput, naming
from pipeline.batch.pool import ProcessRunner
from pipeline.core.errors import PROG
from pipeline.core.slices import ExpandSettings, FetchSettings
from pipeline.fetch.archive import ResponseArchive
from pipeline.fetch.client import HttpFetcher
from pipeline.fetch.credentials import CredentialScope
from pipeline.fetch.hosts import HostGate
from pipeline.fetch.media import is_binary_media_type

GZIP_TYPES = frozenset({"application/gzip", "application/x-gzip"})
_SYNC_BATCH = 256  # expanded items per turn of the private loop (sharded runs)


def rejects_document(media_type: str) -> bool:
    """The document fetcher's early refusal: binary types but gzip (``sitemap.xml.gz``)."""
    return media_type not in GZIP_TYPES and is_binary_media_type(media_type)


def document_fetcher(settings: FetchSettings, gate: HostGate | None = None,
                     credential_scope: CredentialScope | None = None,
                     archive: ResponseArchive | None = None) -> HttpFetcher:
    """The fetcher of sitemap and feed documents: the page fetcher's settings, policy,
    credential scope, archive and (given its ``gate``) per-host budget, but taking gzip
    bodies."""
    return HttpFetcher(settings, early_reject=rejects_document, gate=gate,
                       credential_scope=credential_scope, archive=archive)


def say(quiet: bool, message: str) -> None:
    """``message`` on stderr, unless ``quiet``."""
    if not quiet:
        print(f"{PROG}: {message}", file=sys.stderr)


def all_items(run_input: RunInput, settings: ExpandSettings,
              credential_scope: CredentialScope | None = None) -> Iterator[InputItem]:
    """Every item of ``run_input``, in this thread: the list's (named in
    ``credential_scope``), then the expanded ones."""
    following = 0
    with run_input.file_items() as items:
        for item in naming(items, credential_scope):
            following = item.index + 1
            yield item
    if run_input.expand.roots:
        yield from expanded(run_input.expand, settings, following, credential_scope)


def expanded(options: ExpandOptions, settings: ExpandSettings, start: int,
             credential_scope: CredentialScope | None = None) -> Iterator[InputItem]:
    """The expanded items, numbered from ``start``, in this thread (a private event loop
    fetches the documents, a batch of items at a time)."""
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()
    try:
        fetcher = loop.run_until_complete(stack.enter_async_context(
            document_fetcher(settings, credential_scope=credential_scope)))
        # spawn: this process may fork its shard processes later (a forkserver's would not
        # be theirs to use); one worker is started for the first document
        worker = loop.run_until_complete(stack.enter_async_context(
            ProcessRunner(1, settings.handler_timeout, start_method="spawn")))
        expander = Expander(options, fetcher, settings.max_bytes,
                            parse=in_worker(worker, settings.max_bytes))
        items = expander.items(start)
        stack.push_async_callback(items.aclose)
        while batch := loop.run_until_complete(_take(items, _SYNC_BATCH)):
            yield from batch
        say(settings.quiet, expander.stats.describe(options))
    finally:
        # a stop (KeyboardInterrupt) leaves a step half-way: ended before the walk is closed
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending))
        loop.run_until_complete(stack.aclose())
        loop.close()


async def _take(items: AsyncIterator[InputItem], count: int) -> list[InputItem]:
    batch: list[InputItem] = []
    async for item in items:
        batch.append(item)
        if len(batch) >= count:
            break
    return batch


async def run_batches(items: Iterable[InputItem], expander: Expander | None
                      ) -> AsyncGenerator[list[InputItem], None]:
    """The plain run's batches: the list's items (read in a thread), then the expanded
    ones, numbered on from the list's."""
    following = 0
    async with contextlib.aclosing(feed(items)) as batches:
        async for batch in batches:
            following = batch[-1].index + 1
            yield batch
    if expander is not None:
        async with contextlib.aclosing(feed_async(expander.items(following))) as batches:
            async for batch in batches:
                yield batch

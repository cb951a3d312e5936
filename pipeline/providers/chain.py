"""Failover chains: the providers selected for a capability, tried in order.

:func:`open_chain` resolves a capability into a :class:`ProviderChain`; each provider is
built and opened once, on first use, and closed when the chain closes. A provider failure
(an exception, not an empty result) hands the call to the next provider; a provider that
failed fatally (bad key, no credit, misconfiguration) is skipped for the rest of the chain's
life. :class:`ChainExtractor` wraps a chain as one :class:`ExtractProvider` (the reader,
:mod:`pipeline.read.reader`, reads through it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pipeline.core.errors import PipelineError
from pipeline.core.models import ExtractOptions, Record
from pipeline.core.slices import ProviderSettings
from pipeline.core.truncate import truncate
from pipeline.providers.registry import Capability, Registry, default_registry

log = logging.getLogger("pipeline.providers")
T = TypeVar("T")
Link = tuple[str, Callable[[], Any]]


class ProviderChain:
    """Providers to try in order (``links`` are ``(name, build)`` pairs). An async context
    manager: it closes the providers it opened. ``warnings`` holds the selection warnings."""

    def __init__(self, links: Sequence[Link], *, warnings: Sequence[str] = (),
                 owned: bool = True) -> None:
        self.links = list(links)
        self.warnings = list(warnings)
        self.owned = owned  # False for a caller's provider object: the caller closes it
        self._open: dict[str, Any] = {}
        self._dead: dict[str, PipelineError] = {}
        self._stack = contextlib.AsyncExitStack()
        self._lock = asyncio.Lock()

    @property
    def names(self) -> list[str]:
        """The provider names in the order they are tried."""
        return [name for name, _ in self.links]

    async def __aenter__(self) -> ProviderChain:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()
        self._open.clear()

    async def _provider(self, name: str, build: Callable[[], Any]) -> Any:
        async with self._lock:  # concurrent first calls must not build a provider twice
            if name not in self._open:
                provider = build()
                if self.owned and hasattr(provider, "__aenter__"):
                    entered = await self._stack.enter_async_context(provider)
                    provider = entered if entered is not None else provider
                self._open[name] = provider
            return self._open[name]

    async def provider(self, name: str) -> Any:
        """The provider ``name`` of this chain, built and opened on first use."""
        return await self._provider(name, dict(self.links)[name])

    async def call(self, fn: Callable[[str, Any], Awaitable[T]],
                   warnings: list[str] | None = None) -> tuple[str, T]:
        """``fn(name, provider)`` on each live provider until one succeeds; returns the name
        that served and the result, or raises the combined failure."""
        live = [(n, b) for n, b in self.links if n not in self._dead]
        failures = [self._dead[n] for n, _ in self.links if n in self._dead]
        for position, (name, build) in enumerate(live):
            try:
                provider = await self._provider(name, build)
                return name, await fn(name, provider)
            except PipelineError as exc:
                failure = exc
            except Exception as exc:  # a provider bug is a failure; cancellation passes
                log.exception("provider %s crashed", name)
                failure = PipelineError("provider", f"{name}: crashed ({type(exc).__name__})")
            failures.append(failure)
            if getattr(failure, "fatal", False) or failure.kind == "config":
                self._dead[name] = failure
            if position + 1 < len(live):
                message = f"{name} failed ({failure.message}); trying {live[position + 1][0]}"
                log.warning(message)
                if warnings is not None:
                    warnings.append(message)
        if len(failures) == 1:
            raise failures[0]
        if not failures:
            raise PipelineError("config", "no provider to try")
        causes = "; ".join(f.message for f in failures)
        raise PipelineError(failures[-1].kind, f"every provider failed: {causes}",
                            retryable=any(f.retryable for f in failures))


def open_chain(capability: Capability, settings: ProviderSettings, *, backend: Any = None,
               registry: Registry | None = None) -> ProviderChain:
    """The chain for ``capability``: ``backend`` may be a provider name, a list of names
    (overriding the settings), a provider object, or None (selection per the settings).
    Raises ``PipelineError('config')`` for unknown or incapable names."""
    if backend is not None and not isinstance(backend, (str, list, tuple)):
        if not callable(getattr(backend, capability, None)):
            raise PipelineError("invalid_request", f"backend object has no {capability}() method")
        name = str(getattr(backend, "name", type(backend).__name__))
        return ProviderChain([(name, lambda: backend)], owned=False)
    registry = registry or default_registry()
    override = [backend] if isinstance(backend, str) else backend
    resolution = registry.resolve(capability, settings, override=override)
    links = [(name, (lambda n=name: registry.build(n, settings, capability=capability)))
             for name in resolution.chain]
    return ProviderChain(links, warnings=resolution.warnings)


def check_records(urls: Sequence[str], records: Any, options: ExtractOptions,
                  provider: str) -> list[Record]:
    """Hold an extract provider to its contract: one record per URL, in input order, and
    content within ``options.max_chars`` (re-truncated if a provider overshoots)."""
    if not isinstance(records, list) or len(records) != len(urls):
        raise PipelineError("invalid_result", f"{provider}: expected {len(urls)} records")
    checked = []
    for url, record in zip(urls, records, strict=True):
        if not isinstance(record, Record) or record.url != url:
            raise PipelineError("invalid_result", f"{provider}: records out of order")
        if record.content is not None and len(record.content) > options.max_chars:
            cut = truncate(record.content, options.max_chars,
                           markdown=record.format == "markdown")
            record = record.model_copy(update={"content": cut.text, "truncated": True,
                                               "chars": len(cut.text)})
        checked.append(record)
    return checked


class ChainExtractor:
    """An :class:`ExtractProvider` over a failover chain; ``served_by`` names the provider
    of the last successful call."""

    name = "chain"

    def __init__(self, chain: ProviderChain) -> None:
        self.chain = chain
        self.served_by: str | None = None

    def is_configured(self) -> bool:
        return bool(self.chain.links)

    async def __aenter__(self) -> ChainExtractor:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.chain.__aexit__(*exc_info)

    async def extract(self, urls: Sequence[str], options: ExtractOptions,
                      warnings: list[str] | None = None) -> list[Record]:
        """Records from the first provider of the chain that does not fail as a whole;
        raises the combined failure when every one does."""
        async def attempt(name: str, provider: Any) -> list[Record]:
            return check_records(urls, await provider.extract(list(urls), options), options,
                                 name)

        self.served_by, records = await self.chain.call(attempt, warnings)
        return records


def open_extractor(settings: ProviderSettings, *, backend: Any = None,
                   registry: Registry | None = None) -> ChainExtractor:
    """The extract provider the settings select (``--extract-backend`` in the batch
    command), with failover; use it as an async context manager."""
    return ChainExtractor(open_chain("extract", settings, backend=backend, registry=registry))

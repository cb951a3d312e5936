"""Provider ports: search and extract capabilities behind one small contract each.

A vendor module implements one or both protocols and registers a ``ProviderSpec`` (a
factory ``(settings, env) -> provider``) in ``pipeline.providers.registry``. Providers receive
validated options and may return untrusted data: the kernel (``pipeline.agent.kernel``) re-validates
it. A provider whose capabilities need different setup may add
``configured_for(capability) -> bool`` (Jina: the reader works without a key, search not).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from pipeline.core.models import ExtractOptions, Record

TimeRange = Literal["day", "week", "month", "year"]


class SearchOptions(BaseModel):
    """What an agent may ask of a search; a provider that cannot honour an option says so
    in ``SearchPage.warnings``."""

    max_results: int | None = Field(None, ge=1, le=100)
    time_range: TimeRange | None = None
    include_domains: list[str] = Field(default_factory=list)
    exclude_domains: list[str] = Field(default_factory=list)
    language: str | None = None
    region: str | None = None


class SearchPage(BaseModel):
    """A provider's raw answer: rows as the vendor gave them, mapped to dicts with the
    :class:`~pipeline.core.models.SearchResult` keys where possible (anything else is kept, so the
    kernel's re-validation can fail the search closed), and warnings."""

    rows: list[Any] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


@runtime_checkable
class SearchProvider(Protocol):
    """Contract of a search provider.

    ``is_configured()`` is cheap and offline (keys/URLs present). ``search`` returns a
    :class:`SearchPage` (possibly empty: that is success) or raises
    ``PipelineError('provider')`` naming the vendor and the cause, ``retryable`` set for
    rate limits and transient failures.
    """

    name: str

    def is_configured(self) -> bool: ...

    async def search(self, query: str, options: SearchOptions) -> SearchPage: ...


@runtime_checkable
class ExtractProvider(Protocol):
    """Contract of an extract provider.

    ``extract(urls, options)`` returns exactly one :class:`Record` per URL, in input order;
    per-URL failures are records with ``error`` set, never exceptions. A failure of the whole
    provider (auth, outage) raises ``PipelineError('provider')`` so a fallback can take over.
    Providers that hold connections are async context managers (``aclose`` on exit).
    """

    name: str

    def is_configured(self) -> bool: ...

    async def extract(self, urls: Sequence[str], options: ExtractOptions) -> list[Record]: ...

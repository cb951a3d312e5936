"""Provider ports: search, extract and crawl capabilities behind one small contract each.

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


class CrawlOptions(BaseModel):
    """What an agent may ask of a crawl, validated before any provider sees it.

    ``include`` / ``exclude`` are the crawl command's globs on a URL's path and query
    (docs/crawl.md); a vendor whose filters are regular expressions gets them translated.
    ``deadline`` is the seconds the provider may take in all: past it, it returns the pages it
    has (``CrawlPage.warnings`` says so) rather than fail.
    """

    max_pages: int = Field(10, ge=1, le=1_000)
    max_depth: int = Field(2, ge=0, le=20)
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    max_chars: int = Field(20_000, ge=1)
    deadline: float = Field(60.0, gt=0)


class MapOptions(BaseModel):
    """What an agent may ask of a map (URLs only, no content)."""

    limit: int = Field(100, ge=1, le=5_000)
    max_depth: int = Field(2, ge=0, le=20)
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    deadline: float = Field(60.0, gt=0)


class CrawlPage(BaseModel):
    """A provider's raw answer to a crawl or a map.

    ``pages`` are dicts as the vendor's data allowed: ``url`` (required), ``final_url``,
    ``title``, ``content`` (markdown; absent for a map), ``depth``, ``parent``, ``via``,
    ``error`` (a short reason for a page that failed). The kernel re-validates every one and
    drops the ones it refuses. ``skipped`` counts URLs not taken, by reason (the crawler's
    ledger reasons: ``out_of_scope``, ``robots``, ``budget``, ...); ``left`` is the number of
    in-scope URLs the budget left, when known.
    """

    pages: list[Any] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict)
    left: int | None = None
    warnings: list[str] = Field(default_factory=list)


@runtime_checkable
class CrawlProvider(Protocol):
    """Contract of a crawl provider (the ``crawl`` capability: both calls).

    ``crawl(url, options)`` follows links from ``url`` and returns at most
    ``options.max_pages`` pages with content; ``map(url, options)`` returns at most
    ``options.limit`` URLs without content. Both return within ``options.deadline`` with what
    they have, a page that fails is a page with ``error``, never an exception; a failure of
    the whole provider (auth, outage, a start page it cannot reach) raises
    ``PipelineError('provider')`` so a fallback can take over. Providers that hold
    connections are async context managers.
    """

    name: str

    def is_configured(self) -> bool: ...

    async def crawl(self, url: str, options: CrawlOptions) -> CrawlPage: ...

    async def map(self, url: str, options: MapOptions) -> CrawlPage: ...

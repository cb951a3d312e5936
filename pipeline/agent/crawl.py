"""What agents call to read a site: :func:`web_crawl` and :func:`web_map` (plus sync twins).

The same guarantees as :mod:`pipeline.agent.kernel`: the request is validated
(``invalid_request`` values), the start URL is held to the safety policy before any provider
sees it, every page a provider returns is re-validated (a page the policy refuses, or one
that is not text, is dropped with a warning), the page budget (at most
:data:`MAX_CRAWL_PAGES`) and one total character budget hold whatever the provider sent, a
failing provider hands over to the next of the ``crawl`` chain, and nothing raises for a
provider, network or page failure. The whole call is bounded by ``crawl_deadline``; the
native crawler fetches through the caller's shared fetcher when there is one
(:class:`~pipeline.agent.runtime.SharedRuntime`), so a crawl spends the same per-host
budget as every other call.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from pipeline.agent.kernel import _failure_info, _run_sync, _settings
from pipeline.core.errors import PipelineError, describe_validation, sanitize_message
from pipeline.core.models import (
    CrawledPage,
    CrawlResponse,
    ErrorInfo,
    MappedUrl,
    MapResponse,
)
from pipeline.core.settings import MIN_MAX_CHARS, Settings
from pipeline.core.truncate import clip_title, truncate
from pipeline.fetch.policy import NetworkPolicy
from pipeline.providers.base import CrawlOptions, CrawlPage, MapOptions
from pipeline.providers.chain import open_chain
from pipeline.providers.common import check_page_url, looks_binary
from pipeline.providers.registry import Registry

Args = TypeVar("Args", bound=BaseModel)
MAX_CRAWL_PAGES = 50
MAX_MAP_URLS = 5_000
MAX_DEPTH = 10
GRACE = 5.0  # seconds past the deadline before the call is cut: providers stop themselves first
VIA = frozenset({"start", "sitemap", "link", "redirect"})
_REASON = re.compile(r"^[a-z_]{1,40}(:[a-z0-9_-]{1,40})?$")

Pattern = Annotated[str, StringConstraints(min_length=1, max_length=300,
                                           pattern=r"^[^\x00-\x20\x7f]+$")]


def _clamp(value: Any, top: int) -> Any:
    """An integer held into ``1..top`` (a model asking for 500 pages gets ``top``)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return min(max(value, 1), top)
    return value


class CrawlArgs(BaseModel):
    """Arguments of ``web_crawl`` (also the source of its tool schema)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=8192, description="the start page: an absolute http(s) URL")
    max_pages: Annotated[int, Field(ge=1, le=MAX_CRAWL_PAGES)] = Field(
        10, description=f"pages to read, at most {MAX_CRAWL_PAGES}")
    max_depth: int = Field(2, ge=0, le=MAX_DEPTH,
                           description="link hops from the start page (0: the start page only)")
    include: list[Pattern] = Field(
        default_factory=list, max_length=20,
        description="only URLs whose path (and query) match one of these globs, e.g. "
        "'/docs/**'; '*' stays within a path segment, '**' crosses them")
    exclude: list[Pattern] = Field(default_factory=list, max_length=20,
                                   description="never URLs matching one of these globs")
    max_chars: int | None = Field(None, ge=MIN_MAX_CHARS, le=10_000_000,
                                  description="content budget for all pages together")


class MapArgs(BaseModel):
    """Arguments of ``web_map`` (also the source of its tool schema)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=8192, description="the start page: an absolute http(s) URL")
    limit: Annotated[int, Field(ge=1, le=MAX_MAP_URLS)] = Field(
        100, description=f"URLs to list, at most {MAX_MAP_URLS}")
    max_depth: int = Field(2, ge=0, le=MAX_DEPTH, description="link hops from the start page")
    include: list[Pattern] = Field(default_factory=list, max_length=20,
                                   description="only URLs matching one of these globs")
    exclude: list[Pattern] = Field(default_factory=list, max_length=20,
                                   description="never URLs matching one of these globs")


def _request(model: type[Args], url: object, include: object, exclude: object,
             **fields: Any) -> Args | ErrorInfo:
    """The call's arguments validated by ``model``, or the ``invalid_request`` error. The
    lists go as given: a bare string is refused there, not split into characters."""
    try:
        return model.model_validate(dict(url=url, include=[] if include is None else include,
                                         exclude=[] if exclude is None else exclude, **fields))
    except ValidationError as exc:
        return ErrorInfo(kind="invalid_request",
                         message=sanitize_message(describe_validation(exc, model, "request")))


def _shown(url: object) -> str:
    return url if isinstance(url, str) else repr(url)[:200]


def _start(settings: Settings | None, url: str) -> tuple[Settings, NetworkPolicy, str]:
    """The call's settings, its safety policy and the start URL held to it (``blocked`` /
    ``invalid_url`` raised before any provider sees the URL)."""
    settings = _settings(settings)
    policy = NetworkPolicy.from_settings(settings)
    return settings, policy, check_page_url(url, policy)


def _text(value: object, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return sanitize_message(" ".join(value.split()), limit)


def _skipped(counts: Mapping[str, Any]) -> dict[str, int]:
    """A provider's skip counts, kept only where the reason looks like one of ours."""
    return {reason: count for reason, count in counts.items()
            if isinstance(reason, str) and _REASON.match(reason)
            and isinstance(count, int) and not isinstance(count, bool) and count > 0}


class _Checker:
    """Holds a provider's rows to our rules: URLs the policy accepts, each page once, at most
    ``limit`` of them; what it drops is counted for one warning."""

    def __init__(self, policy: NetworkPolicy, limit: int) -> None:
        self.policy = policy
        self.limit = limit
        self.seen: set[str] = set()
        self.dropped = 0
        self.over = 0

    def url(self, value: object) -> str | None:
        try:
            return check_page_url(value, self.policy) if value else None
        except PipelineError:
            return None

    def rows(self, rows: Iterable[Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
        for row in rows:
            url = self.url(row.get("url")) if isinstance(row, Mapping) else None
            if url is None or not isinstance(row, Mapping):
                self.dropped += 1
                continue
            if url in self.seen:
                continue
            if len(self.seen) == self.limit:
                self.over += 1
                continue
            self.seen.add(url)
            yield url, row

    def warnings(self, name: str) -> list[str]:
        notes = []
        if self.dropped:
            notes.append(f"{name}: {self.dropped} page(s) refused (not a URL the policy allows)")
        if self.over:
            notes.append(f"{name}: {self.over} page(s) past the budget dropped")
        return notes


def _depth(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _page(url: str, row: Mapping[str, Any], checker: _Checker) -> CrawledPage:
    """One provider row as a page: content must be text (not bytes in disguise)."""
    content = row.get("content")
    error = _text(row.get("error"), 300)
    if error is None and (not isinstance(content, str) or not content.strip()):
        error = "no text content"
    elif error is None and isinstance(content, str) and looks_binary(content):
        error = "binary payload refused"
    page = CrawledPage(url=url, final_url=checker.url(row.get("final_url")) or url,
                       depth=_depth(row.get("depth")), parent=checker.url(row.get("parent")),
                       via=row.get("via") if row.get("via") in VIA else None,
                       title=clip_title(_text(row.get("title"), 2_000)))
    if error is not None or not isinstance(content, str):
        return page.model_copy(update={"error": ErrorInfo(kind="provider",
                                                          message=error or "no text")})
    return page.model_copy(update={"content": content.strip()})


def fit_budget(pages: list[CrawledPage], budget: int) -> list[CrawledPage]:
    """Every page's content inside one total ``budget``: each page in turn gets an equal
    share of what is left (a short page leaves its unused share to the next); a page whose
    share is below the truncation floor keeps its place without content (``truncated``)."""
    readable = sum(1 for page in pages if page.content is not None)
    left = budget
    out = []
    for page in pages:
        if page.content is None:
            out.append(page)
            continue
        share = left // readable
        readable -= 1
        if share < MIN_MAX_CHARS:
            out.append(page.model_copy(update={"content": None, "truncated": True, "chars": 0}))
            continue
        cut = truncate(page.content, share, markdown=True)
        left -= len(cut.text)
        out.append(page.model_copy(update={"content": cut.text, "truncated": cut.truncated,
                                           "chars": len(cut.text)}))
    return out


def _deadline(settings: Settings) -> float:
    return float(settings.crawl_deadline)


async def _call(settings: Settings, backend: Any, registry: Registry | None,
                method: str, url: str, options: CrawlOptions | MapOptions,
                warnings: list[str]) -> tuple[str, CrawlPage]:
    """``provider.<method>(url, options)`` on the crawl chain, bounded by the deadline."""
    async def attempt(name: str, provider: Any) -> CrawlPage:
        page = await getattr(provider, method)(url, options)
        if not isinstance(page, CrawlPage):
            raise PipelineError("invalid_result", f"{name}: the answer is not a CrawlPage")
        warnings.extend(f"{name}: {w}" for w in page.warnings)
        return page

    async with open_chain("crawl", settings, backend=backend, registry=registry) as chain:
        warnings.extend(chain.warnings)
        try:
            async with asyncio.timeout(options.deadline + GRACE):
                return await chain.call(attempt, warnings)
        except TimeoutError:
            raise PipelineError("timeout", f"the {method} took longer than its deadline of "
                                f"{options.deadline:.0f} s", retryable=True) from None


async def web_crawl(url: str, *, max_pages: int = 10, max_depth: int = 2,
                    include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                    max_chars: int | None = None,
                    backend: str | Sequence[str] | Any | None = None,
                    settings: Settings | None = None,
                    registry: Registry | None = None) -> CrawlResponse:
    """Read a site from ``url``: links followed in scope (the start page's origin), at most
    ``max_pages`` pages (clamped into 1..50) within ``max_depth`` link hops, filtered by the
    ``include`` / ``exclude`` globs; every page's markdown inside one total ``max_chars``
    budget (default: the settings' ``max_chars``), with the skips counted by reason.
    ``backend`` as in :func:`~pipeline.agent.kernel.web_search` (``crawl_backend``
    otherwise: the native crawler by default). Never raises for failures."""
    args = _request(CrawlArgs, url, include, exclude, max_depth=max_depth,
                    max_pages=_clamp(max_pages, MAX_CRAWL_PAGES), max_chars=max_chars)
    if isinstance(args, ErrorInfo):
        return CrawlResponse(ok=False, url=_shown(url), error=args)
    warnings: list[str] = []
    try:
        settings, policy, start = _start(settings, args.url)
        budget = args.max_chars or settings.max_chars
        options = CrawlOptions(max_pages=args.max_pages, max_depth=args.max_depth,
                               include=args.include, exclude=args.exclude,
                               max_chars=budget, deadline=_deadline(settings))
        served_by, answer = await _call(settings, backend, registry, "crawl", start, options,
                                        warnings)
        checker = _Checker(policy, args.max_pages)
        pages = [_page(page_url, row, checker) for page_url, row in checker.rows(answer.pages)]
        warnings.extend(checker.warnings(served_by))
    except Exception as exc:  # cancellation and Ctrl-C are BaseExceptions: they pass
        return CrawlResponse(ok=False, url=args.url, warnings=warnings, error=_failure_info(exc))
    left = answer.left if isinstance(answer.left, int) and answer.left >= 0 else None
    return CrawlResponse(ok=True, url=args.url, provider=served_by,
                         pages=fit_budget(pages, budget), skipped=_skipped(answer.skipped),
                         left=left, warnings=warnings)


async def web_map(url: str, *, limit: int = 100, max_depth: int = 2,
                  include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                  backend: str | Sequence[str] | Any | None = None,
                  settings: Settings | None = None,
                  registry: Registry | None = None) -> MapResponse:
    """List a site's URLs from ``url`` without reading their content: the same discovery
    as :func:`web_crawl` (sitemaps and links, scope, globs), at most ``limit`` URLs (clamped
    into 1..5,000). Never raises for failures."""
    args = _request(MapArgs, url, include, exclude, max_depth=max_depth,
                    limit=_clamp(limit, MAX_MAP_URLS))
    if isinstance(args, ErrorInfo):
        return MapResponse(ok=False, url=_shown(url), error=args)
    warnings: list[str] = []
    try:
        settings, policy, start = _start(settings, args.url)
        options = MapOptions(limit=args.limit, max_depth=args.max_depth, include=args.include,
                             exclude=args.exclude, deadline=_deadline(settings))
        served_by, answer = await _call(settings, backend, registry, "map", start, options,
                                        warnings)
        checker = _Checker(policy, args.limit)
        urls = [MappedUrl(url=found, depth=_depth(row.get("depth")),
                          parent=checker.url(row.get("parent")),
                          title=clip_title(_text(row.get("title"), 2_000)))
                for found, row in checker.rows(answer.pages)]
        warnings.extend(checker.warnings(served_by))
    except Exception as exc:  # cancellation and Ctrl-C are BaseExceptions: they pass
        return MapResponse(ok=False, url=args.url, warnings=warnings, error=_failure_info(exc))
    return MapResponse(ok=True, url=args.url, provider=served_by, urls=urls,
                       skipped=_skipped(answer.skipped), warnings=warnings)


def web_crawl_sync(url: str, **kwargs: Any) -> CrawlResponse:
    """Blocking :func:`web_crawl`."""
    return _run_sync(lambda: web_crawl(url, **kwargs))


def web_map_sync(url: str, **kwargs: Any) -> MapResponse:
    """Blocking :func:`web_map`."""
    return _run_sync(lambda: web_map(url, **kwargs))

"""The kernel agents call: :func:`web_search` and :func:`web_extract` (plus sync twins).

Guarantees: the request is validated (``invalid_request`` values, never exceptions);
``max_results`` is clamped into [1, 100] before any provider sees it; every row a provider
returns is re-validated and a single bad row fails the search closed (``invalid_result``);
positions are renumbered 1..n; an empty search is success with ``[]``; a failing provider
hands over to the next one of its chain and the response names the one that served; nothing
raises for a provider, network or page failure.

What propagates: ``asyncio.CancelledError``, ``KeyboardInterrupt`` and ``SystemExit`` — the
caller's own decisions to stop. Every ``Exception`` becomes an error value, ``MemoryError``
and ``RecursionError`` included: they arise inside one provider call whose frames are gone by
the time the kernel answers, and an agent loop is better served by "the provider failed" than
by a crash (``tests/test_web_failures.py`` pins this).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import math
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from pipeline.core.errors import PipelineError, describe_validation, sanitize_message
from pipeline.core.field_schemas import MAX_SCHEMA_CHARS, schema_text
from pipeline.core.models import (
    ErrorInfo,
    ExtractOptions,
    ExtractResponse,
    OutputFormat,
    Record,
    SearchResponse,
    SearchResult,
)
from pipeline.core.settings import MIN_MAX_CHARS, Settings, load_settings
from pipeline.fetch.policy import NetworkPolicy
from pipeline.providers.base import SearchOptions, TimeRange
from pipeline.providers.chain import open_chain, open_extractor
from pipeline.providers.common import check_page_url, check_url
from pipeline.providers.registry import Registry
from pipeline.read.reader import Reader, ReadRuntime
from pipeline.read.stages import StageContext, build_stages
from pipeline.store.paging import FULL_TEXT_CHARS

if TYPE_CHECKING:
    from pipeline.agent.runtime import SharedRuntime

log = logging.getLogger("pipeline.agent.kernel")
T = TypeVar("T")

MAX_RESULTS = 100
MAX_EXTRACT_URLS = 100
_TITLE_CHARS = 500
_SNIPPET_CHARS = 2_000
_SPACES = re.compile(r"\s+")

Domain = Annotated[str, StringConstraints(
    strip_whitespace=True, to_lower=True, max_length=253,
    pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")]


class SearchArgs(BaseModel):
    """Arguments of ``web_search`` (also the source of its tool schema)."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                            max_length=2_000)] = Field(
        description="what to search the web for")
    max_results: int | None = Field(
        None, description="how many results (clamped into 1..100; default: the provider's)")
    time_range: TimeRange | None = Field(None, description="only results from the last day, "
                                         "week, month or year")
    include_domains: list[Domain] = Field(default_factory=list, max_length=20,
                                          description="only results from these domains")
    exclude_domains: list[Domain] = Field(default_factory=list, max_length=20,
                                          description="no results from these domains")
    language: str | None = Field(None, pattern=r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$",
                                 description="result language, e.g. 'en' or 'pt-BR'")
    region: str | None = Field(None, pattern=r"^[A-Za-z]{2}([-_][A-Za-z]{2})?$",
                               description="country code, e.g. 'us' (DuckDuckGo also "
                               "takes 'us-en')")

    @field_validator("max_results", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be an integer")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int):
            return min(max(value, 1), MAX_RESULTS)
        return value


class ExtractArgs(BaseModel):
    """Arguments of ``web_extract`` (also the source of its tool schema)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    urls: list[str] = Field(min_length=1, max_length=MAX_EXTRACT_URLS,
                            description="absolute http(s) URLs to read")
    format: OutputFormat | None = Field(None, description="markdown (default) or text")
    max_chars: int | None = Field(None, ge=MIN_MAX_CHARS, le=10_000_000,
                                  description="content budget per URL, marker included")
    compress: bool | None = Field(None, description="summarise long pages with the "
                                  "configured compressor model")
    instruction: str | None = Field(None, max_length=2_000,
                                    description="what the summary should focus on")
    offset: int = Field(0, ge=0, description="where to start reading each page: the offset "
                        "a cut page gave (its next_offset); 0 reads from the start")
    render: Literal["never", "auto", "always"] | None = Field(
        None, description="run the page's JavaScript in a headless browser: auto (only pages "
        "that are empty without it), always, or never; default: the server's setting")
    schema_: str | None = Field(
        None, alias="schema", max_length=MAX_SCHEMA_CHARS,
        description="also read these fields from each page: product, article, recipe, "
        "event, job, or a JSON Schema object as JSON text; each value is checked against "
        "the page and comes with its source")

    @field_validator("urls", mode="before")
    @classmethod
    def _strict_list(cls, value: Any) -> Any:
        # Agents often pass one URL as a bare string: taken as a list of one. The schema
        # still says "array" (valid for every tool-calling flavour); this is leniency only.
        if isinstance(value, str):
            return [value]
        if not isinstance(value, (list, tuple)):
            raise ValueError("must be a list of URL strings")
        if not all(isinstance(item, str) for item in value):
            raise ValueError("every URL must be a string")
        return list(value)




def _failure_info(exc: BaseException) -> ErrorInfo:
    if isinstance(exc, PipelineError):
        return exc.to_info()
    log.exception("unexpected failure in the kernel")
    return ErrorInfo(kind="provider", message=f"internal error: {type(exc).__name__}")


def _runtime_for(settings: Settings, runtime: SharedRuntime | None,
                 stack: contextlib.AsyncExitStack) -> ReadRuntime:
    """The caller's runtime when its cache is the one ``settings`` describe, else one for
    this call (closed with ``stack``)."""
    if runtime is not None and runtime.reads_like(settings):
        return runtime.reading
    own = ReadRuntime.open(settings)
    stack.callback(own.close)
    return own


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else load_settings()


# --------------------------------------------------------------------------- search

def _row_text(row: Mapping[str, Any], key: str, index: int, limit: int) -> str:
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PipelineError("invalid_result", f"row {index}: {key} is not a string")
    return sanitize_message(_SPACES.sub(" ", value), limit)


def validate_rows(rows: Iterable[Any]) -> list[SearchResult]:
    """Re-validate a provider's rows: every one needs an absolute http(s) URL, text fields
    must be text; duplicates (same URL) are dropped; positions become 1..n."""
    results: list[SearchResult] = []
    seen: set[str] = set()
    for index, row in enumerate(rows, 1):
        if not isinstance(row, Mapping):
            raise PipelineError("invalid_result", f"row {index} is not an object")
        try:
            url = check_url(row.get("url"))
        except PipelineError as exc:
            raise PipelineError("invalid_result", f"row {index}: {exc.message}") from None
        title = _row_text(row, "title", index, _TITLE_CHARS)
        snippet = _row_text(row, "snippet", index, _SNIPPET_CHARS)
        published = _row_text(row, "published", index, 64) or None
        score = row.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                  or not math.isfinite(score)):
            raise PipelineError("invalid_result", f"row {index}: score is not a number")
        if url in seen:
            continue
        seen.add(url)
        results.append(SearchResult(title=title or url, url=url, snippet=snippet,
                                    position=len(results) + 1, score=score,
                                    published=published))
    return results


async def web_search(query: str, *, max_results: int | None = None,
                     time_range: str | None = None,
                     include_domains: Sequence[str] | None = None,
                     exclude_domains: Sequence[str] | None = None,
                     language: str | None = None, region: str | None = None,
                     backend: str | Sequence[str] | Any | None = None,
                     settings: Settings | None = None,
                     registry: Registry | None = None) -> SearchResponse:
    """Search the web. ``backend`` overrides the configured search chain: a provider name,
    a list of names (a failover chain), or a provider object (e.g. a
    :class:`~pipeline.providers.fake.FakeSearchProvider`). ``settings`` as in
    :func:`web_extract`. Never raises for failures."""
    shown_query = query if isinstance(query, str) else repr(query)[:200]
    try:
        # The domain lists go to validation as given: a bare string or a number is refused
        # there, not split into characters or raised as a TypeError here.
        args = SearchArgs.model_validate(dict(
            query=query, max_results=max_results, time_range=time_range,
            include_domains=[] if include_domains is None else include_domains,
            exclude_domains=[] if exclude_domains is None else exclude_domains,
            language=language, region=region))
    except ValidationError as exc:
        return SearchResponse(ok=False, query=shown_query, error=ErrorInfo(
            kind="invalid_request",
            message=sanitize_message(describe_validation(exc, SearchArgs, "request"))))
    warnings: list[str] = []
    try:
        settings = _settings(settings)
        options = SearchOptions(**args.model_dump(exclude={"query"}))

        async def attempt(name: str, provider: Any) -> list[SearchResult]:
            page = await provider.search(args.query, options)
            warnings.extend(f"{name}: {w}" for w in page.warnings)
            rows = validate_rows(page.rows)
            return rows[: args.max_results] if args.max_results else rows

        async with open_chain("search", settings, backend=backend, registry=registry) as chain:
            warnings.extend(chain.warnings)
            served_by, results = await chain.call(attempt, warnings)
    except Exception as exc:  # cancellation and Ctrl-C are BaseExceptions: they pass
        return SearchResponse(ok=False, query=args.query, warnings=warnings,
                              error=_failure_info(exc))
    return SearchResponse(ok=True, query=args.query, provider=served_by, results=results,
                          warnings=warnings)


# --------------------------------------------------------------------------- extract

async def web_extract(urls: Sequence[str] | str, *, format: OutputFormat | None = None,
                      max_chars: int | None = None,
                      backend: str | Sequence[str] | Any | None = None,
                      compress: bool | None = None, instruction: str | None = None,
                      offset: int = 0, settings: Settings | None = None,
                      registry: Registry | None = None,
                      compressor: Any = None,
                      render: str | None = None, schema: Any = None,
                      fields_model: bool | None = None,
                      runtime: SharedRuntime | None = None) -> ExtractResponse:
    """Read pages: one record per URL, in input order (a single URL may be passed as a
    string). ``settings`` carries every limit and switch, by the batch flags' names
    (``--allow-net 127.0.0.1/32`` is ``Settings(allow_net=["127.0.0.1/32"])``, ``--allow-private``
    ``Settings(allow_private=True)``); without it, :func:`~pipeline.core.settings.load_settings`
    reads the environment and ``PIPELINE_CONFIG``. ``backend`` as in :func:`web_search`;
    ``compressor`` injects a :class:`~pipeline.store.compress.Compressor`. A cut page has a
    ``next_offset``: pass it as ``offset`` for the next window, read from the full-text cache
    (:mod:`pipeline.store.cache`) without fetching again. ``render`` (``never``, ``auto``,
    ``always``) overrides ``settings.render`` for this call (a headless browser, extra
    ``[browser]``). ``schema`` (a built-in name, a JSON Schema dict or JSON text, a pydantic
    model class) gives each record ``fields`` and ``fields_meta`` (docs/fields.md); one
    that is not valid JSON Schema is an ``invalid_request``. ``fields_model`` (default:
    ``settings.fields_model``) lets a model fill the fields the page's readers left null
    (the compressor's endpoint; docs/fields.md). Never raises for failures: a bad
    request gives ``ok=False`` and no records; a provider chain that fails entirely gives
    ``ok=False`` and one failed record per URL. ``runtime`` (a
    :class:`~pipeline.agent.runtime.SharedRuntime`) shares one fetcher, cache and single
    flight among calls; its registry serves when ``registry`` is not given."""
    if runtime is not None and registry is None:
        registry = runtime.registry
    try:
        # model_validate: the caller's loose types (a bare URL string, a tuple) are checked there
        args = ExtractArgs.model_validate(dict(
            urls=urls, format=format, max_chars=max_chars, compress=compress,
            instruction=instruction, offset=offset, render=render,
            schema=None if schema is None else schema_text(schema, files=False)))
    except ValidationError as exc:
        return ExtractResponse(ok=False, error=ErrorInfo(
            kind="invalid_request",
            message=sanitize_message(describe_validation(exc, ExtractArgs, "request"))))
    except PipelineError as exc:  # a schema that is not JSON Schema
        return ExtractResponse(ok=False, error=ErrorInfo(kind="invalid_request",
                                                         message=exc.message))
    warnings: list[str] = []
    try:
        settings = _settings(settings)
        if args.render is not None and args.render != settings.render:
            settings = settings.model_copy(update={"render": args.render})
        if args.schema_ is not None:
            settings = settings.model_copy(update={"fields_schema": args.schema_})
        if fields_model is not None:
            settings = settings.model_copy(update={"fields_model": fields_model})
        options = ExtractOptions(format=args.format or settings.format,
                                 max_chars=args.max_chars or settings.max_chars)
        policy = NetworkPolicy.from_settings(settings)  # literal addresses: before any provider
        by_url: dict[str, Record] = {}
        originals: dict[str, list[str]] = {}  # checked URL -> the spellings asked for
        for url in dict.fromkeys(args.urls):
            try:
                originals.setdefault(check_page_url(url, policy), []).append(url)
            except PipelineError as exc:
                by_url[url] = Record.failure(url, exc.to_info())
        targets = list(originals)  # each distinct URL is read (and compressed) once
        served_by = None
        if targets:
            want = args.compress if args.compress is not None else settings.compress
            extractor = open_extractor(settings, backend=backend, registry=registry)
            async with contextlib.AsyncExitStack() as stack:
                reading = _runtime_for(settings, runtime, stack)
                await stack.enter_async_context(extractor)
                warnings.extend(extractor.chain.warnings)
                # as in the batch: records not from our own handlers may lack a language
                foreign = extractor.chain.names != ["native"] or reading.cache.enabled
                context = StageContext(settings, foreign=foreign, max_chars=options.max_chars,
                                       compress=want, instruction=args.instruction
                                       or settings.instruction, compressor=compressor,
                                       warnings=warnings)
                # a caller's own provider object is opaque: its texts are not cached
                reader = await stack.enter_async_context(Reader(
                    extractor, reading, settings, format=options.format,
                    budget=FULL_TEXT_CHARS, stages=build_stages(context),
                    storing=extractor.chain.owned, warnings=warnings))
                try:
                    records = await reader.read(targets, max_chars=options.max_chars,
                                                offset=args.offset)
                except PipelineError as exc:
                    failed = [by_url.get(url) or Record.failure(url, exc.to_info())
                              for url in args.urls]
                    return ExtractResponse(ok=False, records=failed, warnings=warnings,
                                           error=exc.to_info())
                served_by = reader.served_by or "cache"
            for target, record in zip(targets, records, strict=True):
                by_url.update(dict.fromkeys(originals[target], record))
    except Exception as exc:  # cancellation and Ctrl-C are BaseExceptions: they pass
        return ExtractResponse(ok=False, warnings=warnings, error=_failure_info(exc))
    records = [by_url[url].model_copy(update={"url": url}) for url in args.urls]
    return ExtractResponse(ok=True, provider=served_by, records=records, warnings=warnings)


# --------------------------------------------------------------------------- sync twins

def _run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine from sync code. Inside a running event loop (an async function,
    Jupyter) ``asyncio.run`` would refuse, so the call runs on a fresh loop in a worker
    thread; the calling loop is blocked until it finishes — ``await`` the async API there."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def web_search_sync(query: str, **kwargs: Any) -> SearchResponse:
    """Blocking :func:`web_search`."""
    return _run_sync(lambda: web_search(query, **kwargs))


def web_extract_sync(urls: Sequence[str] | str, **kwargs: Any) -> ExtractResponse:
    """Blocking :func:`web_extract`."""
    return _run_sync(lambda: web_extract(urls, **kwargs))

"""Slices of the settings: what each part of the pipeline reads of the settings, and nothing more.

A part takes its slice, not the whole settings model (:mod:`pipeline.core.settings`): the type
says which fields the part depends on, and mypy holds it to them. The slices here are
read-only views (protocols) that a run's one settings object satisfies, so the composition
root (the command line, a run, the library's entry) hands the same object down, uncopied;
slices that are values of their own (:class:`~pipeline.batch.engine.EngineSettings`,
``handlers.HandlerOptions``, ``pipeline.fetch.hosts.HostGate``) are made there, once.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pipeline.core.models import OutputFormat


class VendorSettings(Protocol):
    """A vendor client's slice (:class:`pipeline.providers.http.VendorClient` and the
    providers built on it)."""

    @property
    def timeout(self) -> float: ...
    @property
    def retries(self) -> int: ...
    @property
    def retry_after_cap(self) -> float: ...
    @property
    def user_agent(self) -> str: ...
    @property
    def connect_timeout(self) -> float: ...
    @property
    def read_timeout(self) -> float: ...
    @property
    def proxy(self) -> str | None: ...
    @property
    def trust_env(self) -> bool: ...


class FetchSettings(VendorSettings, Protocol):
    """The fetcher's slice (:class:`pipeline.fetch.client.HttpFetcher`): the vendor client's
    timeouts, retries and proxy, and the fetcher's limits, address policy, headers and
    credentials."""

    @property
    def per_host(self) -> int: ...
    @property
    def crawl_delay_cap(self) -> float: ...
    @property
    def rate(self) -> float: ...
    @property
    def concurrency(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def max_redirects(self) -> int: ...
    @property
    def head(self) -> bool: ...
    @property
    def head_trust(self) -> int: ...
    @property
    def robots(self) -> bool: ...
    @property
    def allow_net(self) -> list[str]: ...
    @property
    def allow_private(self) -> bool: ...
    @property
    def allow_proxy_net(self) -> list[str]: ...
    @property
    def headers(self) -> dict[str, str]: ...
    @property
    def cookie_file(self) -> str | None: ...
    @property
    def credential_headers(self) -> list[str]: ...


class RenderSettings(FetchSettings, Protocol):
    """The browser renderer's slice (:mod:`pipeline.browser`): the fetcher's limits, which
    every request of a rendered page keeps, and the browser's own."""

    @property
    def render_concurrency(self) -> int: ...
    @property
    def browser_path(self) -> str | None: ...
    @property
    def render_wait(self) -> float: ...
    @property
    def render_max_bytes(self) -> int: ...
    @property
    def render_restart_pages(self) -> int: ...
    @property
    def render_max_memory_mb(self) -> int: ...


class ModelSettings(VendorSettings, Protocol):
    """A model endpoint's client (the fields model, the compressor's): the vendor client's
    slice and the vendor keys of the config file."""

    @property
    def provider_env(self) -> dict[str, str]: ...


class ExpandSettings(FetchSettings, Protocol):
    """Walking sitemaps and feeds on a private loop (:func:`pipeline.batch.input.sources.
    expanded`): the fetcher's slice, the document parser's time limit, and whether to report."""

    @property
    def handler_timeout(self) -> float: ...
    @property
    def quiet(self) -> bool: ...


class HandlerSettings(Protocol):
    """Which handlers a run loads (:func:`pipeline.extract.native.load_registry`): the custom
    ones, and whether the HTML handler needs readability's extra."""

    @property
    def handlers(self) -> list[str]: ...
    @property
    def html_extractor(self) -> Literal["builtin", "readability"]: ...


class TextSettings(HandlerSettings, Protocol):
    """What decides the text a page gives, beyond its bytes (the cache key's identity,
    :func:`pipeline.store.paging.text_identity`)."""

    @property
    def pdf_max_pages(self) -> int: ...
    @property
    def include_comments(self) -> bool: ...
    @property
    def structured_raw(self) -> bool: ...
    @property
    def render(self) -> Literal["never", "auto", "always"]: ...
    @property
    def fields_schema(self) -> str | None: ...


class NativeSettings(RenderSettings, TextSettings, Protocol):
    """Our own extractor's slice (:class:`pipeline.extract.native.NativeExtractor`): the
    fetcher's and the browser's, what decides a page's text, and the handler options it
    makes (``handlers.HandlerOptions``) with the call's defaults."""

    @property
    def handler_timeout(self) -> float: ...
    @property
    def format(self) -> OutputFormat: ...
    @property
    def max_chars(self) -> int: ...
    @property
    def pdf_time_limit(self) -> float: ...
    @property
    def detect_lang(self) -> bool: ...
    @property
    def links(self) -> bool: ...


class ProviderSettings(NativeSettings, ModelSettings, Protocol):
    """Choosing providers (:class:`pipeline.providers.registry.Registry`) and building them:
    the backend settings, the vendor keys, and what a provider's factory is handed — the
    vendor client's slice, and the native extractor's, the largest of the built-ins."""

    @property
    def backend(self) -> list[str]: ...
    @property
    def search_backend(self) -> list[str]: ...
    @property
    def extract_backend(self) -> list[str]: ...
    @property
    def crawl_backend(self) -> list[str]: ...


class CacheSettings(Protocol):
    """The full-text cache's place and limits (:func:`pipeline.store.cache.open_cache`)."""

    @property
    def cache(self) -> bool: ...
    @property
    def cache_dir(self) -> str | None: ...
    @property
    def cache_ttl(self) -> float: ...
    @property
    def cache_max_mb(self) -> int: ...


class StageSettings(ModelSettings, Protocol):
    """What the post-extraction stages read (:mod:`pipeline.read.stages`): the language
    filter, the fields model and the compressor, with the model endpoint's slice."""

    @property
    def languages(self) -> list[str]: ...
    @property
    def detect_lang(self) -> bool: ...
    @property
    def fields_model(self) -> bool: ...
    @property
    def fields_schema(self) -> str | None: ...
    @property
    def compress_floor(self) -> int: ...
    @property
    def compress_deadline(self) -> float: ...


class ReaderSettings(TextSettings, Protocol):
    """The reader's own slice (:class:`pipeline.read.reader.Reader`): the cache key's
    identity, how many pages of a call it reads at once, and the address policy a vendor's
    URL is held to."""

    @property
    def concurrency(self) -> int: ...
    @property
    def allow_net(self) -> list[str]: ...
    @property
    def allow_private(self) -> bool: ...


class ReadSettings(ProviderSettings, ReaderSettings, StageSettings, CacheSettings, Protocol):
    """Everything a reader is built from (:func:`pipeline.batch.extract_stage.batch_extract`,
    and the checks of a batch run before it opens, :func:`pipeline.batch.run_check.
    check_config`): the providers, the reader, its stages and its cache, whether to
    compress, and whether to report."""

    @property
    def compress(self) -> bool: ...
    @property
    def instruction(self) -> str | None: ...
    @property
    def quiet(self) -> bool: ...


class CorpusSettings(Protocol):
    """Duplicates and languages of a batch run, checked before it opens
    (:func:`pipeline.batch.run_check.check_corpus`)."""

    @property
    def languages(self) -> list[str]: ...
    @property
    def detect_lang(self) -> bool: ...
    @property
    def dedup(self) -> Literal["off", "exact", "near"]: ...
    @property
    def drop_duplicates(self) -> bool: ...


class RecordSettings(Protocol):
    """The settings whose value changes what a record says: a sharded run's manifest keeps
    them and a resumed run must keep them too (:mod:`pipeline.batch.output.output_dir`). In
    the order a manifest's differences are named."""

    @property
    def format(self) -> OutputFormat: ...
    @property
    def max_chars(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def include_comments(self) -> bool: ...
    @property
    def pdf_max_pages(self) -> int: ...
    @property
    def pdf_time_limit(self) -> float: ...
    @property
    def handlers(self) -> list[str]: ...
    @property
    def extract_backend(self) -> list[str]: ...
    @property
    def backend(self) -> list[str]: ...
    @property
    def compress(self) -> bool: ...
    @property
    def instruction(self) -> str | None: ...
    @property
    def compress_floor(self) -> int: ...
    @property
    def html_extractor(self) -> Literal["builtin", "readability"]: ...
    @property
    def structured_raw(self) -> bool: ...
    @property
    def detect_lang(self) -> bool: ...
    @property
    def languages(self) -> list[str]: ...
    @property
    def dedup(self) -> Literal["off", "exact", "near"]: ...


def fields_of(protocol: type) -> tuple[str, ...]:
    """The settings fields a slice names (its own and those of the slices it extends), in
    the order they are declared."""
    names: dict[str, None] = {}
    for klass in reversed(protocol.__mro__):
        if klass.__module__ == __name__:
            names.update((name, None) for name, member in vars(klass).items()
                         if isinstance(member, property))
    return tuple(names)

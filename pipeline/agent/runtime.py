"""The runtime a long-lived caller (the MCP server, an agent) shares among its calls: one
fetcher (one politeness budget per host, whatever the number of calls at once), one browser,
one full-text cache and one single flight (:class:`~pipeline.read.reader.ReadRuntime`).

Each :func:`~pipeline.agent.kernel.web_extract` call builds its own provider chain, and the
``native`` provider of the default registry opens a fetcher of its own: twenty concurrent
calls would each get the whole ``--per-host`` budget for the same host, start its rate limit
afresh and read its robots.txt again. :class:`SharedRuntime` opens one
:class:`~pipeline.fetch.client.HttpFetcher` for its life and offers a registry whose
``native`` provider fetches through it: connection and rate limits, a host's 429 pauses,
robots.txt and HEAD trust hold across every call. Pass the runtime as the
kernel's ``runtime=`` (:func:`~pipeline.agent.tools.web_tools` does): concurrent calls for
one page then read it once.

Its URLs are chosen by a model, which text on the web can steer: credentials (``--header
'Authorization: …'``, cookies, ``--credential-header``) go only to the hosts given with
``--credential-host``, never to a URL only because a call named it.

Calls that render (the server's ``--render`` or a call's ``render``) share one
:class:`~pipeline.browser.renderer.Renderer` too: one browser for the caller's life, started
by the first page that needs it, instead of a ~1 s launch per call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings
from pipeline.core.slices import ProviderSettings
from pipeline.extract.native import NativeExtractor, load_registry
from pipeline.fetch.client import HttpFetcher
from pipeline.fetch.credentials import CredentialScope
from pipeline.providers.registry import Registry, default_registry
from pipeline.read.reader import ReadRuntime
from pipeline.store.cache import TextCache

if TYPE_CHECKING:
    from pipeline.browser.renderer import Renderer


class SharedRuntime:
    """An async context manager: inside it, the ``native`` provider of :attr:`registry`
    fetches through one fetcher made from ``settings``. A call with other settings, or one
    made outside the context, gets a fetcher of its own as usual."""

    def __init__(self, settings: Settings, registry: Registry | None = None) -> None:
        self.settings = settings
        self._handlers = load_registry(settings)
        # the caller's URLs are a model's choice (remote text can steer it): credentials go
        # only to the hosts the user gave (--credential-host), as for a sitemap's URLs
        self._fetcher = HttpFetcher(settings, early_reject=self._handlers.rejects_early,
                                    credential_scope=CredentialScope.of(
                                        settings.credential_hosts))
        self._renderer: Renderer | None = None  # when a browser can be found (extra 'browser')
        # the cache opens with the context (a server built but never run holds no file)
        self.reading = ReadRuntime(TextCache(None))
        self._open = False
        base = registry or default_registry()
        self.registry = Registry(base.specs(), base.defaults, base.auto_detect)
        self._own_native = base.spec("native")
        self.registry.register(dataclasses.replace(
            self._own_native, factory=self._native,
            factories={**self._own_native.factories, "crawl": self._native_crawl}))

    @property
    def renderer(self) -> Renderer | None:
        """The shared :class:`~pipeline.browser.renderer.Renderer` (None: none can run here,
        or outside the context)."""
        return self._renderer

    def reads_like(self, settings: Settings) -> bool:
        """Whether a call with ``settings`` may use this runtime's cache and single flight
        (the same cache place and limits; keys hold the rest)."""
        cache_fields = ("cache", "cache_dir", "cache_ttl", "cache_max_mb")
        return self._open and all(getattr(settings, name) == getattr(self.settings, name)
                                  for name in cache_fields)

    def _native(self, settings: ProviderSettings, env: Mapping[str, str]) -> Any:
        # a call may choose its render mode; any other difference (or settings that are not
        # a whole Settings, only the providers' slice) gets a fetcher of its own
        same = isinstance(settings, Settings) and settings.model_copy(
            update={"render": self.settings.render}) == self.settings
        rendering = settings.render != "never"
        if not self._open or not same or (rendering and self._renderer is None):
            return self._own_native.build(settings, env)
        return NativeExtractor(settings, fetcher=self._fetcher, registry=self._handlers,
                               renderer=self._renderer if rendering else None)

    def _native_crawl(self, settings: ProviderSettings, env: Mapping[str, str]) -> Any:
        # a crawl spends the same per-host budget as every extract call: the provider is
        # handed the shared fetcher when it can take one (``share_fetcher``)
        provider = self._own_native.build(settings, env, "crawl")
        share = getattr(provider, "share_fetcher", None)
        if self._open and settings == self.settings and callable(share):
            share(self._fetcher)
        return provider

    async def _open_renderer(self) -> None:
        """The shared renderer, when this machine can render (else a rendering call builds
        its own extractor, which says what is missing). No browser starts here."""
        from pipeline.browser.renderer import Renderer

        try:
            renderer = Renderer(self.settings, gate=self._fetcher.gate,
                                credential_scope=self._fetcher.credential_scope)
        except PipelineError:
            return
        self._renderer = await renderer.__aenter__()

    async def __aenter__(self) -> SharedRuntime:
        self.reading = ReadRuntime.open(self.settings)
        try:
            await self._fetcher.__aenter__()
        except BaseException:
            self.reading.close()
            raise
        try:
            await self._open_renderer()
        except BaseException:
            await self._fetcher.__aexit__(None, None, None)
            self.reading.close()
            raise
        self._open = True
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._open = False
        renderer, self._renderer = self._renderer, None
        try:
            if renderer is not None:
                await renderer.__aexit__(*exc_info)
        finally:
            try:
                await self._fetcher.__aexit__(*exc_info)
            finally:
                self.reading.close()

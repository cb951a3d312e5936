"""Proxies, and the safety policy through them.

Where a request goes: through ``settings.proxy`` (http://, https:// — TLS to the proxy —, or
socks5:// via the optional ``aiohttp-socks``), else with ``trust_env`` through
``HTTP_PROXY``/``HTTPS_PROXY`` unless ``NO_PROXY`` names the host, else directly.

A proxy resolves the target's name itself, so the connector's
:class:`~pipeline.fetch.resolver.PolicyResolver` never sees the target's addresses. Instead,
before every proxied request, :meth:`ProxyRoutes.check_target` resolves the name here and
judges the answers by the same policy (an IP literal is judged by ``check_target`` of
:mod:`pipeline.fetch.urls`, as for every request); a name that does not resolve here is
refused too (fail closed). The proxy's own address is judged by the policy widened by
``allow_proxy_net``, once at start and whenever the connector resolves the proxy's name.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import aiohttp
from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.core.extras import install_hint
from pipeline.core.request_options import check_proxy_url
from pipeline.core.slices import FetchSettings
from pipeline.fetch.base import FetchError
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.resolver import AddressBlocked, PolicyResolver

SOCKS_SCHEMES = frozenset({"socks5", "socks5h"})
JUDGEMENT_TTL = 60.0  # seconds a target name's judgement is reused (the connector's DNS TTL)
MAX_JUDGEMENTS = 4096


def proxy_policy(settings: FetchSettings) -> NetworkPolicy:
    """The policy a proxy's own address must pass: the targets' one plus
    ``allow_proxy_net`` (cloud metadata addresses stay refused)."""
    return NetworkPolicy([*settings.allow_net, *settings.allow_proxy_net],
                         settings.allow_private)


def socks_connector(proxy: URL, address: str | None = None,
                    **options: Any) -> aiohttp.TCPConnector:
    """A connector that opens every connection through the socks5 proxy ``proxy`` (at
    ``address`` when given: the address judged beforehand), which resolves the names. Needs
    the optional ``aiohttp-socks``; ``config`` error without it."""
    try:
        from aiohttp_socks import ProxyConnector, ProxyType
    except ImportError:
        raise PipelineError("config", "socks proxies need the socks extra: "
                            f"{install_hint('socks')}") from None
    return ProxyConnector(host=address or proxy.raw_host or "", port=proxy.port or 1080,
                          proxy_type=ProxyType.SOCKS5, username=proxy.user,
                          password=proxy.password, rdns=True, **options)


def _env_proxies() -> tuple[dict[str, URL], dict[str, str]]:
    """(scheme → proxy URL, the raw environment table for NO_PROXY) from the environment."""
    table = urllib.request.getproxies_environment()
    proxies: dict[str, URL] = {}
    for scheme in ("http", "https"):
        raw = table.get(scheme)
        if not raw:
            continue
        text = raw if "://" in raw else f"http://{raw}"
        try:
            check_proxy_url(text)
        except ValueError as exc:
            raise PipelineError("config", f"{scheme.upper()}_PROXY: {exc}") from None
        url = URL(text)
        if url.scheme in SOCKS_SCHEMES:
            raise PipelineError("config", f"{scheme.upper()}_PROXY: a socks proxy only "
                                          "through --proxy")
        proxies[scheme] = url
    return proxies, table


def _literal_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class ProxyRoutes:
    """Which proxy each request takes, and the policy checks that come with proxies.

    ``resolver`` (the fetcher's inner resolver, or None for the system's) answers the
    lookups of :meth:`check_target` and of the proxy's own name.
    """

    def __init__(self, settings: FetchSettings, policy: NetworkPolicy,
                 resolver: aiohttp.abc.AbstractResolver | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.proxy: URL | None = URL(settings.proxy) if settings.proxy else None
        self._env: dict[str, URL] = {}
        self._env_table: dict[str, str] = {}
        if self.proxy is None and settings.trust_env:
            self._env, self._env_table = _env_proxies()
        self.socks = self.proxy is not None and self.proxy.scheme in SOCKS_SCHEMES
        self.proxy_policy = proxy_policy(settings)
        self._targets = PolicyResolver(policy, resolver, timeout=settings.connect_timeout)
        self._proxies = PolicyResolver(self.proxy_policy, resolver,
                                       timeout=settings.connect_timeout)
        self._judged: dict[str, tuple[float, str | None]] = {}
        self._pending: dict[str, asyncio.Future[str | None]] = {}
        self._clock = clock
        self._socks_address: str | None = None

    @property
    def enabled(self) -> bool:
        """Whether any request may go through a proxy."""
        return self.proxy is not None or bool(self._env)

    def proxy_hosts(self) -> dict[str, NetworkPolicy]:
        """Proxy host names and the policy their addresses are judged by (for the
        connector's resolver, which resolves them when it connects to an http(s) proxy)."""
        urls = [self.proxy] if self.proxy is not None else list(self._env.values())
        return {url.raw_host: self.proxy_policy for url in urls
                if url is not None and url.raw_host and not _literal_ip(url.raw_host)}

    def for_request(self, url: URL) -> URL | None:
        """The http(s) proxy of a request to ``url``; None for a direct request or when a
        socks connector carries every request."""
        if self.socks:
            return None
        if self.proxy is not None:
            return self.proxy
        if not self._env:
            return None
        proxy = self._env.get(url.scheme)
        if proxy is None or self._bypassed(url.raw_host or ""):
            return None
        return proxy

    def proxied(self, url: URL) -> bool:
        return self.socks or self.for_request(url) is not None

    def _bypassed(self, host: str) -> bool:
        # undocumented, so absent from typeshed, but part of urllib.request since Python 2
        return bool(urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
            host, self._env_table))

    async def start(self) -> None:
        """Judge every proxy's own address now: ``config`` error when the policy refuses it
        (a name that does not resolve yet is judged again when it is used)."""
        urls = [self.proxy] if self.proxy is not None else list(self._env.values())
        for url in urls:
            assert url is not None and url.raw_host is not None
            host = url.raw_host
            try:
                if _literal_ip(host):
                    self.proxy_policy.check(host)
                    address = host
                else:
                    answers = await self._proxies.resolve(host, url.port or 0)
                    address = answers[0]["host"]
            except (PipelineError, AddressBlocked) as exc:
                reason = exc.message if isinstance(exc, PipelineError) else exc.reason
                raise PipelineError("config", f"proxy {host} refused by the safety policy "
                                    f"({reason}); allow it with --allow-proxy-net CIDR") from None
            except OSError:
                if self.socks:
                    raise PipelineError("config", f"cannot resolve the proxy {host}") from None
                continue
            if self.socks:
                self._socks_address = address

    def connector(self, **options: Any) -> aiohttp.TCPConnector:
        """The connector for a socks proxy (every request through it), built after
        :meth:`start`. ``options`` are the TCPConnector's."""
        assert self.socks and self.proxy is not None and self._socks_address is not None
        options.pop("resolver", None)  # the proxy resolves; targets are judged beforehand
        return socks_connector(self.proxy, self._socks_address, **options)

    async def check_target(self, url: URL) -> None:
        """Before a proxied request: refuse a target name that resolves (here) to an address
        the policy refuses, or does not resolve at all. IP literals are judged elsewhere."""
        host = url.raw_host or ""
        if _literal_ip(host.strip("[]")):
            return
        reason = await self._judgement(host, url.port or 0)
        if reason is not None:
            raise FetchError("blocked", f"{reason} refused (host {host}, checked before the "
                                        "proxy)")

    async def _judgement(self, host: str, port: int) -> str | None:
        now = self._clock()
        known = self._judged.get(host)
        if known is not None and known[0] > now:
            return known[1]
        pending = self._pending.get(host)
        if pending is None:
            pending = asyncio.ensure_future(self._judge(host, port))
            self._pending[host] = pending
            pending.add_done_callback(lambda _: self._pending.pop(host, None))
        return await asyncio.shield(pending)

    async def _judge(self, host: str, port: int) -> str | None:
        try:
            await self._targets.resolve(host, port)
            reason = None
        except AddressBlocked as exc:
            reason = exc.reason
        except OSError:
            raise FetchError("network", f"DNS lookup failed for {host} (a name is resolved "
                                        "here before a proxy is asked)") from None
        if len(self._judged) >= MAX_JUDGEMENTS:
            self._judged.clear()
        self._judged[host] = (self._clock() + JUDGEMENT_TTL, reason)
        return reason

    async def close(self) -> None:
        await self._targets.close()
        await self._proxies.close()


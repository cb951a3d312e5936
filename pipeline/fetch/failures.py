"""Map whatever one HTTP request can throw to a short, sanitised :class:`FetchError`.

Messages are ours (host, cause), never the server's bytes; ``retryable`` marks failures worth
another attempt (connection trouble, timeouts, broken bodies, malformed responses — possibly
left over on a reused connection), not permanent ones (TLS, a name that does not resolve).
"""

from __future__ import annotations

import asyncio
import socket

import aiohttp
from aiohttp.http_exceptions import HttpProcessingError
from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.fetch.base import FetchError
from pipeline.fetch.resolver import AddressBlocked


def dns_retryable(exc: aiohttp.ClientConnectorDNSError) -> bool:
    """The one rule for a failed name lookup, for pages and vendor calls alike: worth another
    attempt only when the resolver calls the failure temporary (``EAI_AGAIN``, a lookup that
    timed out); a name that does not exist stays so."""
    return getattr(exc.os_error, "errno", None) == socket.EAI_AGAIN


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 10:
        if isinstance(current, kind):
            return current
        current = current.__cause__ or current.__context__
        seen += 1
    return None


def classify(exc: BaseException, url: URL, read_timeout: float) -> FetchError:
    """Turn any failure of one request into a short, sanitised :class:`FetchError`."""
    host = url.raw_host
    if isinstance(exc, FetchError):
        return exc
    if isinstance(exc, PipelineError):
        return FetchError(exc.kind, exc.message, retryable=exc.retryable)
    blocked = _cause(exc, AddressBlocked)
    if isinstance(blocked, AddressBlocked):
        hint = f"; {blocked.way_out}" if blocked.way_out else ""
        return FetchError("blocked", f"{blocked.reason} refused (host {host}{hint})")
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return FetchError("network", f"DNS lookup failed for {host}",
                          retryable=dns_retryable(exc))
    if isinstance(exc, aiohttp.ClientSSLError | aiohttp.ServerFingerprintMismatch):
        return FetchError("network", f"TLS error with {host}: {type(exc).__name__}")
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return FetchError("timeout", f"connect to {host} timed out", retryable=True)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return FetchError("timeout", f"no data from {host} for {read_timeout:g} s",
                          retryable=True)
    if isinstance(exc, asyncio.TimeoutError):
        return FetchError("timeout", f"response headers from {host} too slow", retryable=True)
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return FetchError("network", f"cannot connect to the proxy (for {host})", retryable=True)
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return FetchError("network", f"the proxy refused the request to {host} "
                                     f"(HTTP {exc.status})", retryable=exc.status >= 500)
    if type(exc).__module__.startswith("aiohttp_socks"):  # an optional extra: not imported
        return FetchError("network", f"the socks proxy failed for {host}: "
                                     f"{type(exc).__name__}", retryable=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.strerror or type(exc.os_error).__name__
        return FetchError("network", f"cannot connect to {host}: {reason}", retryable=True)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return FetchError("network", f"{host} closed the connection without a complete answer",
                          retryable=True)
    if isinstance(exc, aiohttp.ClientPayloadError):
        return FetchError("network", f"broken response body from {host} (truncated or bad "
                                     "transfer/content encoding)", retryable=True)
    if isinstance(exc, HttpProcessingError | aiohttp.ClientResponseError):
        # Retryable: on a kept-alive connection the garbage may be left over from the
        # previous answer (a server that sent a body after a HEAD); a retry gets a fresh one.
        return FetchError("network", f"malformed HTTP response from {host}", retryable=True)
    if isinstance(exc, aiohttp.ClientOSError | ConnectionError):
        return FetchError("network", f"connection to {host} failed", retryable=True)
    return FetchError("network", f"request to {host} failed: {type(exc).__name__}")

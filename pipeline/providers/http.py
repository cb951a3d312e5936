"""The one HTTP client every vendor provider uses: JSON (or text) requests over aiohttp with
timeouts, a body cap, tenacity retries honouring ``Retry-After``, and error mapping.

Every failure becomes :class:`VendorError` (a ``PipelineError('provider')``) whose message
names the vendor and the cause. Vendor endpoints are configured by the user, so they are
deliberately NOT subject to the URL-safety policy (a SearXNG on ``http://localhost:8080``
must work); the pages vendors report back are checked in :mod:`pipeline.providers.common`.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Self

import aiohttp
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt
from yarl import URL

from pipeline.core.errors import PipelineError, sanitize_message
from pipeline.core.slices import VendorSettings
from pipeline.fetch.credentials import merge_headers
from pipeline.fetch.failures import dns_retryable
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.proxy import SOCKS_SCHEMES, socks_connector
from pipeline.fetch.retry import RETRYABLE_STATUSES, parse_retry_after, wait_retry_after_or_backoff
from pipeline.fetch.transport import AiohttpTransport, Request, Response, Transport

MAX_VENDOR_BODY = 64 * 1024 * 1024  # vendor answers hold many pages at most; never unbounded
REASON_CHARS = 120  # a vendor's own words in our messages: enough to act on, never a page
_AUTH_STATUSES = frozenset({401, 403})


NETWORK_ERROR, TIMED_OUT = "network error", "timed out"  # a vendor not reached (no network?)


class VendorError(PipelineError):
    """A failed vendor call. ``fatal`` marks failures of the whole provider (bad key, no
    credit) as opposed to one URL; ``retry_after`` carries the server's hint."""

    def __init__(self, vendor: str, cause: str, *, retryable: bool = False,
                 retry_after: float | None = None, status: int | None = None,
                 fatal: bool = False) -> None:
        super().__init__("provider", f"{vendor}: {cause}", retryable=retryable)
        self.retry_after = retry_after
        self.status = status
        self.fatal = fatal


def join_url(base: str, path: str) -> str:
    """``scheme://host[:port][/prefix]`` + ``/vendor/path``, with exactly one slash between."""
    return base.rstrip("/") + "/" + path.lstrip("/")


def env_value(env: Mapping[str, str], *names: str) -> str | None:
    """The first non-blank value among ``names`` (vendors sometimes have two spellings)."""
    for name in names:
        value = (env.get(name) or "").strip()
        if value:
            return value
    return None


def vendor_reason(value: object, fallback: str = "") -> str:
    """A vendor's own explanation, safe and short for an error message (one line, no
    control characters, :data:`REASON_CHARS` at most); ``fallback`` when it is not text."""
    if isinstance(value, str) and value.strip():
        return sanitize_message(value, REASON_CHARS)
    return fallback


_REASON_KEYS = ("error", "message", "detail", "msg")


def error_detail(data: Any) -> str:
    """A vendor's short reason from a parsed error answer: ``{"error": "..."}``, or one
    level down as Brave (``{"error": {"detail": ...}}``) and Tavily
    (``{"detail": {"error": ...}}``) nest it; "" when there is none."""
    if not isinstance(data, dict):
        return ""
    for key in _REASON_KEYS:
        value = data.get(key)
        if isinstance(value, dict):
            value = next((value[k] for k in _REASON_KEYS
                          if isinstance(value.get(k), str) and value[k].strip()), None)
        if reason := vendor_reason(value):
            return reason
    return ""


def _vendor_detail(body: bytes) -> str:
    """A short reason from an error body, if the vendor sent a JSON one."""
    try:
        return error_detail(json.loads(body))
    except ValueError:
        return ""


def _numbers(value: str | None) -> list[float]:
    """``"1, 1419704"`` -> ``[1.0, 1419704.0]``; garbage entries are dropped."""
    out = []
    for part in (value or "").split(",")[:8]:
        try:
            out.append(float(part.strip()))
        except ValueError:
            continue
    return out


def rate_limit_reset(headers: Mapping[str, str]) -> float | None:
    """Seconds until the exhausted rate-limit window resets, from ``X-RateLimit-Reset``
    (one comma-separated entry per window, as Brave sends ``1, 1419704``) paired with
    ``X-RateLimit-Remaining``: the longest reset among windows with nothing left, else the
    shortest one; None without the header."""
    resets = _numbers(headers.get("X-RateLimit-Reset"))
    if not resets:
        return None
    remaining = _numbers(headers.get("X-RateLimit-Remaining"))
    exhausted = [reset for reset, left in zip(resets, remaining, strict=False) if left <= 0]
    return max(max(exhausted) if exhausted else min(resets), 0.0)


class VendorClient:
    """An aiohttp session for one vendor, created lazily, closed by :meth:`aclose`.

    ``status_causes`` lets a vendor explain a status its own way (SearXNG's 403). ``sleep``
    is injectable so tests can see the waits without waiting. ``total_timeout`` overrides
    the settings' per-request deadline (model calls take longer than page fetches).
    ``transport`` sends the requests instead of that session
    (:class:`~pipeline.fetch.transport.FakeTransport` answers without a network); its
    caller closes it.
    """

    def __init__(self, vendor: str, settings: VendorSettings, *,
                 status_causes: Mapping[int, str] | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 max_body: int = MAX_VENDOR_BODY, total_timeout: float | None = None,
                 transport: Transport | None = None) -> None:
        self.vendor = vendor
        self.total_timeout = total_timeout or settings.timeout
        self.settings = settings
        self.status_causes = dict(status_causes or {})
        self.max_body = max_body
        self._sleep = sleep
        self._transport: Transport | None = transport
        self._given_transport = transport

    def _get_transport(self) -> Transport:
        if self._transport is None:
            s = self.settings
            timeout = aiohttp.ClientTimeout(total=self.total_timeout, connect=s.connect_timeout,
                                            sock_read=s.read_timeout)
            proxy = URL(s.proxy) if s.proxy else None
            socks = proxy is not None and proxy.scheme in SOCKS_SCHEMES
            # --proxy / --trust-env carry vendor calls too (the endpoints are the user's own
            # choice: no policy check here, as for direct calls)
            self._transport = AiohttpTransport(aiohttp.ClientSession(
                timeout=timeout,
                connector=socks_connector(proxy) if socks and proxy is not None else None,
                proxy=None if socks else proxy, trust_env=s.trust_env and proxy is None))
        return self._transport

    async def aclose(self) -> None:
        """Close the session (a later request opens a new one)."""
        if self._transport is not None and self._transport is not self._given_transport:
            await self._transport.aclose()
            self._transport = None

    async def request_json(self, method: str, url: str, **kwargs: Any) -> Any:
        """Send a request and parse a JSON body; see :meth:`request` for the arguments."""
        body = await self.request(method, url, **kwargs)
        try:
            return json.loads(body)
        except ValueError as exc:
            raise VendorError(self.vendor, "unparseable response (not JSON)") from exc

    async def request(self, method: str, url: str, *, params: Mapping[str, Any] | None = None,
                      json_body: Any = None, data: Mapping[str, str] | None = None,
                      headers: Mapping[str, str] | None = None) -> bytes:
        """Send with retries (transient statuses, timeouts, network errors); return the body
        of a 2xx answer or raise :class:`VendorError`."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.retries + 1),
            wait=wait_retry_after_or_backoff(initial=0.25, maximum=4.0),
            retry=retry_if_exception(lambda e: isinstance(e, VendorError) and e.retryable),
            sleep=self._sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._once(method, url, params=params, json_body=json_body,
                                        data=data, headers=headers)
        raise AssertionError("unreachable")  # pragma: no cover - reraise=True always exits

    async def _once(self, method: str, url: str, *, params: Mapping[str, Any] | None,
                    json_body: Any, data: Mapping[str, str] | None,
                    headers: Mapping[str, str] | None) -> bytes:
        try:
            request = self._request(method, url, params=params, json_body=json_body, data=data,
                                    headers=headers)
        except ValueError as exc:  # not a URL yarl can parse
            raise VendorError(self.vendor, "invalid endpoint URL (check its *_URL setting)",
                              fatal=True) from exc
        transport = self._get_transport()
        try:
            resp = await transport.send(request)
            try:
                body = await self._read_capped(resp)
                resp.release()
            finally:
                resp.close()
            if 200 <= resp.status < 300:
                return body
            raise self._status_error(resp.status, resp.headers, body)
        except VendorError:
            raise
        except TimeoutError as exc:
            raise VendorError(self.vendor, TIMED_OUT, retryable=True) from exc
        except aiohttp.InvalidURL as exc:
            raise VendorError(self.vendor, "invalid endpoint URL (check its *_URL setting)",
                              fatal=True) from exc
        except aiohttp.ClientError as exc:
            cause = vendor_reason(str(exc), type(exc).__name__)
            retryable = (dns_retryable(exc) if isinstance(exc, aiohttp.ClientConnectorDNSError)
                         else True)
            raise VendorError(self.vendor, f"{NETWORK_ERROR}: {cause}",
                              retryable=retryable) from exc

    def _request(self, method: str, url: str, *, params: Mapping[str, Any] | None,
                 json_body: Any, data: Mapping[str, str] | None,
                 headers: Mapping[str, str] | None) -> Request:
        """The request on the wire: the query, the JSON or form body and their type, this
        client's User-Agent under the caller's headers (as aiohttp would build them)."""
        sent = merge_headers({"User-Agent": self.settings.user_agent}, headers or {})
        body, body_type = None, None
        if json_body is not None:
            body, body_type = json.dumps(json_body).encode(), "application/json"
        elif data is not None:
            body = urllib.parse.urlencode(data, doseq=True).encode()
            body_type = "application/x-www-form-urlencoded"
        if body_type is not None:  # header names match in any case, as aiohttp's do
            sent = merge_headers({"Content-Type": body_type}, sent)
        target = URL(url)
        if params:
            target = target.extend_query(params)
        return Request(method, target, sent, body=body, follow_redirects=True)

    async def _read_capped(self, resp: Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.chunks():
            size += len(chunk)
            if size > self.max_body:
                raise VendorError(self.vendor, f"response larger than {self.max_body} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _status_error(self, status: int, headers: Mapping[str, str],
                      body: bytes) -> VendorError:
        detail = _vendor_detail(body)
        suffix = f" ({detail})" if detail else ""
        if status in self.status_causes:
            return VendorError(self.vendor,
                               f"{self.status_causes[status]} (HTTP {status}){suffix}",
                               status=status, fatal=True)
        if status in _AUTH_STATUSES:
            return VendorError(self.vendor, f"invalid or expired key (HTTP {status}){suffix}",
                               status=status, fatal=True)
        if status == 402:
            return VendorError(self.vendor, f"payment required (HTTP 402){suffix}",
                               status=status, fatal=True)
        cap = self.settings.retry_after_cap
        hint = parse_retry_after(headers.get("Retry-After"), cap=cap)
        if status == 429:
            reset = rate_limit_reset(headers) if hint is None else None
            if reset is not None and reset > cap:  # a quota, not a burst: waiting won't do
                return VendorError(self.vendor, f"quota exhausted (HTTP 429, resets in "
                                   f"{reset:.0f} s){suffix}", status=status, fatal=True)
            return VendorError(self.vendor, f"rate limited (HTTP 429){suffix}", retryable=True,
                               retry_after=hint if reset is None else reset, status=status)
        retryable = status in RETRYABLE_STATUSES
        return VendorError(self.vendor, f"HTTP {status}{suffix}", retryable=retryable,
                           retry_after=hint if retryable else None, status=status)


class OwnsClient:
    """An async context manager that closes its :class:`VendorClient` (``self.http``) on
    exit: the vendor providers and the compressor."""

    http: VendorClient

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.http.aclose()

    async def aclose(self) -> None:
        """Close the vendor session (for callers that do not use ``async with``)."""
        await self.http.aclose()


class HttpProvider(OwnsClient):
    """Base of the vendor providers: owns a :class:`VendorClient`; an async context manager.

    A subclass names its environment variables instead of reading them itself:
    ``base_url_env`` (with ``default_base_url`` when the vendor has a public endpoint) gives
    ``self.base_url``, and the first non-blank of ``key_env`` gives ``self.key``. Without an
    override, the provider is configured when it has a key. ``client_options`` go to the
    :class:`VendorClient` (``transport=FakeTransport(...)`` answers without a network).
    """

    name: str = "vendor"
    base_url_env: str = ""
    default_base_url: str | None = None
    key_env: tuple[str, ...] = ()

    def __init__(self, settings: VendorSettings, env: Mapping[str, str], **client_options: Any):
        self.policy = NetworkPolicy.from_settings(settings)  # for the pages vendors report
        self.http = VendorClient(self.name, settings, **client_options)
        # "" when neither is set: such a provider is not configured (is_configured says so)
        self.base_url: str = env_value(env, self.base_url_env) or self.default_base_url or ""
        self.key = env_value(env, *self.key_env)

    def is_configured(self) -> bool:
        """Cheap and offline: whether the provider has what it needs to be called."""
        return bool(self.key)

    def bearer(self) -> dict[str, str]:
        """The ``Authorization: Bearer`` header for the key, or nothing without one."""
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

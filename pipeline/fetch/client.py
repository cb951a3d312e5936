"""The real fetcher: aiohttp with every guard of the fetch port.

Per URL: validate and normalise → [robots.txt] → HEAD guard (until the host has earned
:class:`~pipeline.fetch.head_trust.HeadTrust`; none for a conditional GET) → GET with retries.
Each request passes the per-host gate; redirects are followed here, one hop at a time, each
hop re-checked; literal IP hosts are judged before a request and resolved names by the
connector's :class:`~pipeline.fetch.resolver.PolicyResolver` (through a proxy, by
:class:`~pipeline.fetch.proxy.ProxyRoutes` before the request). Credentials go only to the
host a URL names (:mod:`pipeline.fetch.credentials`). The whole of it runs under one deadline.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver
from multidict import CIMultiDictProxy
from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.core.settings import defaults
from pipeline.core.slices import FetchSettings
from pipeline.fetch.archive import Exchange, ResponseArchive, Truncation
from pipeline.fetch.base import FetchError, FetchResult, Validators
from pipeline.fetch.credentials import (
    Credentials,
    CredentialScope,
    credential_names,
    merge_headers,
    same_host,
    split_headers,
)
from pipeline.fetch.failures import classify
from pipeline.fetch.head_trust import HeadTrust
from pipeline.fetch.hosts import HostGate, HostThrottled
from pipeline.fetch.inflate import BodyDecoder, decoder_for
from pipeline.fetch.media import is_binary_media_type, parse_content_type
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.proxy import ProxyRoutes
from pipeline.fetch.resolver import PolicyResolver
from pipeline.fetch.retry import RETRYABLE_STATUSES, parse_retry_after, retry_delay
from pipeline.fetch.robots import RobotsCache
from pipeline.fetch.transport import AiohttpTransport, Request, Response, Transport
from pipeline.fetch.urls import check_target, parse_url, resolve_location

ACCEPT = ("text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,"
          "application/pdf;q=0.8,application/json;q=0.8,*/*;q=0.5")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# What the HEAD guard exists to catch (seen from a GET, its host is HEADed again).
_REFUSALS = frozenset({"too_large", "unsupported_type"})
# A 429 without Retry-After still slows its host down this long.
DEFAULT_SLOWDOWN = 1.0
# HEAD answers that say the host does not do HEAD (its URLs then get the GET alone).
_NO_HEAD_STATUSES = frozenset({405, 501})
# Answers that have no body by definition: an archive keeps them whole without reading one.
_NO_BODY_STATUSES = frozenset({204, 304})
# Asked before each redirect hop with (the chain's first URL, the hop's URL): a reason not to
# follow it (a crawl's scope), which fails the URL as ``blocked``, or None.
RedirectGuard = Callable[[URL, URL], "str | None"]


@dataclass
class _Answer:
    """The final response of a redirect chain (body only for a 2xx GET)."""

    url: URL
    status: int
    headers: CIMultiDictProxy[str]
    media_type: str | None
    charset: str | None
    body: bytes | None = None


@dataclass
class _Call:
    """One fetch() call: its host key, its deadline (loop time), how many GET attempts it
    made, and how much waiting for its host's pauses may still be kept off its deadline."""

    host: str
    deadline: float
    attempts: int = 0
    pause_allowance: float = 0.0
    scope: asyncio.Timeout | None = None
    validators: Validators | None = None

    def hold(self, seconds: float) -> float:
        """The URL is about to wait ``seconds`` for its host's pause (a 429/Retry-After):
        move its deadline past the wait, as far as the allowance goes; returns the deadline.
        Waiting out a pause is not the URL's time, like waiting in its host's queue."""
        moved = min(seconds, self.pause_allowance)
        if moved > 0:
            self.pause_allowance -= moved
            self.deadline += moved
            if self.scope is not None and (when := self.scope.when()) is not None:
                self.scope.reschedule(when + moved)
        return self.deadline


def _host_key(url: URL) -> str:
    return f"{url.raw_host}:{url.port}"


def _content_length(headers: Mapping[str, str]) -> int | None:
    value = headers.get("Content-Length", "").strip()
    return int(value) if value.isdigit() and len(value) < 20 else None


class HttpFetcher:
    """Fetch URLs over HTTP(S) within the limits of ``settings`` (see the Fetcher port).

    ``early_reject(media_type)`` says a media type is not worth downloading (a HEAD or GET
    announcing it ends as ``unsupported_type``); None means the default,
    :func:`~pipeline.fetch.media.is_binary_media_type` (images, audio, video, fonts,
    archives); pass ``lambda _: False`` to download everything. ``resolver`` replaces the
    system DNS resolver (tests); its answers are still judged by the safety policy. ``gate``
    shares another fetcher's per-host politeness (two fetchers, one budget per host).
    ``transport`` sends the requests instead of the aiohttp one built from the settings
    (:class:`~pipeline.fetch.transport.FakeTransport` answers without a network); it then
    carries them as given: the proxy settings and the DNS answers' judgement are the built
    one's, every other guard stays here. The caller closes a transport it passes.
    ``archive`` is handed every GET exchange whose response arrived (see
    :mod:`pipeline.fetch.archive`: ``--warc-out``).
    ``credential_scope`` limits which URLs get the credentials (None: every URL fetched,
    each on its own host; see :mod:`pipeline.fetch.credentials`).
    """

    def __init__(self, settings: FetchSettings | None = None, *,
                 early_reject: Callable[[str], bool] | None = None,
                 robots: bool | None = None,
                 resolver: AbstractResolver | None = None,
                 gate: HostGate | None = None,
                 transport: Transport | None = None,
                 credential_scope: CredentialScope | None = None,
                 archive: ResponseArchive | None = None,
                 redirect_guard: RedirectGuard | None = None) -> None:
        self.settings = settings or defaults()
        self._redirect_guard = redirect_guard
        self._archive = archive
        self.policy = NetworkPolicy.from_settings(self.settings)
        self.early_reject = early_reject or is_binary_media_type
        self.gate = gate or HostGate(self.settings.per_host, self.settings.rate)
        self._head_trust = HeadTrust(self.settings.head_trust)
        self.robots_enabled = self.settings.robots if robots is None else robots
        self._resolver = resolver
        self._given_transport = transport
        self._transport: Transport | None = None
        self._headers: dict[str, str] = {}
        self._policy_resolver: PolicyResolver | None = None
        self._robots: RobotsCache | None = None
        self._routes: ProxyRoutes | None = None  # None: no proxy at all
        self._credentials: Credentials | None = None  # None: no credentials to send
        self._scope = credential_scope
        self._secret_names = credential_names(self.settings.credential_headers)  # redacted

    @property
    def credential_scope(self) -> CredentialScope | None:
        """Where credentials may go (None: every URL, on its own host); a renderer of this
        fetcher's pages asks it too."""
        return self._scope

    def guarding_redirects(self, guard: RedirectGuard) -> HttpFetcher:
        """This fetcher with ``guard`` judging each redirect hop; connections, per-host gate,
        robots and credentials stay shared (a crawl's scope on a fetcher it was handed). The
        owner of this fetcher opens and closes it."""
        view = copy.copy(self)
        view._redirect_guard = guard
        return view

    async def __aenter__(self) -> HttpFetcher:
        s = self.settings
        plain, _ = split_headers(s.headers, s.credential_headers)
        self._credentials = Credentials.from_settings(s)
        self._headers = merge_headers({"User-Agent": s.user_agent, "Accept": ACCEPT,
                                       "Accept-Encoding": "gzip, deflate, br"}, plain)
        if self._given_transport is not None:
            self._transport = self._given_transport
        else:
            self._transport = await self._aiohttp_transport()
        if self.robots_enabled:
            self._robots = RobotsCache(self._get_robots, self._set_crawl_delay,
                                       user_agent=s.user_agent, max_bytes=s.max_bytes)
        return self

    async def _aiohttp_transport(self) -> AiohttpTransport:
        """The real transport: proxy routes, the policy's resolver, one connection pool."""
        s = self.settings
        routes = ProxyRoutes(s, self.policy, self._resolver) if s.proxy or s.trust_env else None
        if routes is not None and routes.enabled:
            try:
                await routes.start()
            except BaseException:
                await routes.close()
                raise
            self._routes = routes
        self._policy_resolver = PolicyResolver(
            self.policy, self._resolver, timeout=s.connect_timeout,
            host_policies=self._routes.proxy_hosts() if self._routes is not None else None)
        options: dict[str, Any] = dict(
            limit=s.concurrency, limit_per_host=s.per_host, use_dns_cache=True,
            ttl_dns_cache=60, resolver=self._policy_resolver)
        connector = (self._routes.connector(**options)
                     if self._routes is not None and self._routes.socks
                     else aiohttp.TCPConnector(**options))
        return AiohttpTransport(aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),  # cookies: only --cookie-file's, per hop
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=s.connect_timeout,
                                          sock_read=s.read_timeout),
            # decoded in _final (pipeline.fetch.inflate), which notices a stream cut short
            auto_decompress=False, trust_env=False, raise_for_status=False,
        ))

    async def __aexit__(self, *exc_info: object) -> None:
        if self._transport is not None and self._transport is not self._given_transport:
            await self._transport.aclose()
        self._transport = None
        if self._policy_resolver is not None:  # a resolver passed in is not closed by aiohttp
            await self._policy_resolver.close()
            self._policy_resolver = None
        if self._routes is not None:
            await self._routes.close()
            self._routes = None

    async def fetch(self, url: str, *, validators: Validators | None = None) -> FetchResult:
        """Fetch one URL; raise only :class:`FetchError`, never later than the deadline.

        The deadline starts once the host admits the URL (see ``HostGate.admit``). With
        ``validators`` the GET is conditional (and no HEAD is sent): a ``304`` comes back as
        a result with an empty body.
        """
        if self._transport is None:
            raise FetchError("network", "fetcher not started (use 'async with')")
        try:
            target = parse_url(url)
            check_target(target, self.policy)
        except PipelineError as exc:
            raise FetchError(exc.kind, exc.message, retryable=exc.retryable) from None
        host = _host_key(target)
        async with self.gate.admit(host):
            return await self._fetch_admitted(url, target, host, validators)

    async def _fetch_admitted(self, raw: str, target: URL, host: str,
                              validators: Validators | None = None) -> FetchResult:
        timeout = self.settings.timeout
        loop = asyncio.get_running_loop()
        call = _Call(host, deadline=loop.time() + timeout,
                     pause_allowance=self.settings.retry_after_cap, validators=validators)
        try:
            # A timeout scope, not wait_for: no extra task per URL.
            async with asyncio.timeout(timeout) as call.scope:
                result = await self._fetch(raw, target, call)
            # what the deadline has left is the render's (--render): pauses waited out
            # moved the deadline, so they are not counted
            result.elapsed = timeout - (call.deadline - loop.time())
            return result
        except FetchError as exc:
            exc.attempts = max(1, call.attempts)
            raise
        except PipelineError as exc:
            raise FetchError(exc.kind, exc.message, retryable=exc.retryable,
                             attempts=max(1, call.attempts)) from None
        except TimeoutError:
            raise FetchError("timeout", f"no complete answer within {timeout:g} s",
                             retryable=True, attempts=max(1, call.attempts)) from None
        except Exception as exc:  # a bug or an exotic failure must still be a record
            raise FetchError("network", f"fetch failed: {type(exc).__name__}",
                             attempts=max(1, call.attempts)) from None

    async def _fetch(self, raw: str, target: URL, call: _Call) -> FetchResult:
        if self._robots is not None:
            await self._robots.check(target)
        try:
            if (self.settings.head and call.validators is None
                    and await self._head_trust.claim(call.host)):
                verdict = "refused"
                try:
                    verdict = await self._head_guard(target, call)
                finally:
                    self._head_trust.probed(call.host, verdict == "clean",
                                            failed=verdict == "failed")
            answer = await self._get_with_retries(target, call)
        except FetchError as exc:
            if exc.kind in _REFUSALS:
                self._head_trust.refused(call.host)
            raise
        return FetchResult(
            url=raw, final_url=str(answer.url), status=answer.status,
            media_type=answer.media_type, charset=answer.charset, body=answer.body or b"",
            headers={k.lower(): v for k, v in answer.headers.items()}, attempts=call.attempts,
        )

    async def _get_with_retries(self, target: URL, call: _Call) -> _Answer:
        """GET, retrying transient failures (the shared retry policy) while the next wait
        still ends before the deadline. A plain loop: most URLs succeed first time and
        should not pay for retry machinery."""
        loop = asyncio.get_running_loop()
        while True:
            call.attempts += 1
            try:
                return await self._get(target, call)
            except FetchError as exc:
                if not exc.retryable or call.attempts > self.settings.retries:
                    raise
                if exc.retry_after is not None:
                    # The host is paused: the next request waits that out at the host's
                    # gate, off this URL's deadline (see _Call.hold) — unless the pause
                    # outlasts all this URL may still wait.
                    if loop.time() + exc.retry_after > call.deadline + call.pause_allowance:
                        raise
                    delay = 0.0
                else:
                    delay = retry_delay(exc, call.attempts)
                    if loop.time() + delay >= call.deadline:
                        raise
            await asyncio.sleep(delay)

    async def _head_guard(self, target: URL, call: _Call) -> str:
        """Refuse early on what HEAD announces; any HEAD trouble just means "go on".
        Returns "clean" when the HEAD answered 2xx with nothing to refuse, "failed" when it
        failed or stalled (the host does not do HEAD), else "other"."""
        s = self.settings
        try:
            # The limit is on the request itself: waiting for the host's gate is not HEAD's.
            answer = await self.exchange("HEAD", target, max_bytes=0, deadline=call.deadline,
                                         hold=call.hold, header_limit=s.timeout / 3)
        except FetchError as exc:
            if exc.kind in ("blocked", "invalid_url"):
                raise
            return "failed" if exc.kind in ("timeout", "network") else "other"
        if answer.status == 429:
            self._slow_down(answer)
        if answer.status in _NO_HEAD_STATUSES:
            return "failed"
        if not 200 <= answer.status < 300:
            return "other"
        length = _content_length(answer.headers)
        if length is not None and length > s.max_bytes:
            raise FetchError("too_large", f"Content-Length {length} exceeds max_bytes "
                                          f"{s.max_bytes} (HEAD)", final_url=str(answer.url))
        self._reject_media_type(answer.media_type, answer.url)
        return "clean"

    def _reject_media_type(self, media_type: str | None, url: URL) -> None:
        if media_type and self.early_reject(media_type):
            raise FetchError("unsupported_type", f"no handler for {media_type}",
                             final_url=str(url))

    async def _get(self, target: URL, call: _Call) -> _Answer:
        validators = call.validators
        answer = await self.exchange("GET", target, max_bytes=self.settings.max_bytes,
                                     deadline=call.deadline, hold=call.hold,
                                     validators=validators)
        if 200 <= answer.status < 300 or (answer.status == 304 and validators is not None
                                          and str(answer.url) == validators.url):
            return answer
        error = FetchError("http_status", f"HTTP {answer.status}", status=answer.status,
                           final_url=str(answer.url),
                           retryable=answer.status in RETRYABLE_STATUSES)
        if answer.status in (429, 503):
            error.retry_after = self._slow_down(answer)
        raise error

    def _slow_down(self, answer: _Answer) -> float | None:
        """Hold back the host of a 429 (or a 503 with Retry-After); return the hint."""
        hint = parse_retry_after(answer.headers.get("Retry-After"),
                                 cap=self.settings.retry_after_cap)
        if answer.status == 429 or hint is not None:
            self.gate.slow_down(_host_key(answer.url), DEFAULT_SLOWDOWN if hint is None else hint)
        return hint

    async def _get_robots(self, url: URL, max_bytes: int) -> tuple[int, bytes | None]:
        """A robots.txt through the request path of pages (see :class:`RobotsCache`)."""
        answer = await self.exchange("GET", url, max_bytes=max_bytes)
        return answer.status, answer.body

    def _set_crawl_delay(self, url: URL, seconds: float) -> None:
        self.gate.set_interval(_host_key(url), min(seconds, self.settings.crawl_delay_cap))

    async def exchange(self, method: str, url: URL, *, max_bytes: int,
                       deadline: float | None = None,
                       validators: Validators | None = None,
                       hold: Callable[[float], float] | None = None,
                       header_limit: float | None = None) -> _Answer:
        """One request and its redirect chain; the body of a final 2xx GET, capped.

        A host that asked us to wait past ``deadline`` (loop time) fails at once; ``hold``
        may move the deadline first (see :meth:`HostGate.slot`). ``validators`` make the
        request to their URL conditional. Each request's headers must arrive within
        ``connect_timeout + read_timeout``, or ``header_limit`` if less.
        """
        s = self.settings
        limit = s.connect_timeout + s.read_timeout
        limit = limit if header_limit is None else min(limit, header_limit)
        seen = {str(url)}
        # None: no credentials in this chain (out of scope, or it left the first host)
        origin: URL | None = url if self._scope is None or self._scope.allows(url) else None
        first = url
        for hop in range(s.max_redirects + 1):
            check_target(url, self.policy)
            if hop and self._redirect_guard is not None and (
                    refusal := self._redirect_guard(first, url)) is not None:
                raise FetchError("blocked", refusal, final_url=str(url))
            if self._routes is not None and self._routes.proxied(url):
                await self._routes.check_target(url)
            if origin is not None and not same_host(url, origin):
                origin = None
            headers = self._hop_headers(url, origin is not None, validators)
            try:
                async with self.gate.slot(_host_key(url), deadline, hold):
                    answer, next_url, status = await self._hop(method, url, hop, max_bytes,
                                                               limit, headers)
            except HostThrottled as exc:
                error = FetchError("http_status", f"{url.raw_host} asked for a {exc.wait:.1f} s "
                                   "pause (429/Retry-After) beyond this URL's deadline",
                                   status=429, retryable=True, final_url=str(url))
                error.retry_after = exc.wait
                raise error from None
            if answer is not None:
                return answer
            if str(next_url) in seen:
                raise FetchError("http_status", "redirect loop", status=status,
                                 final_url=str(next_url))
            seen.add(str(next_url))
            url = next_url
        raise AssertionError("unreachable: the loop returns or raises")

    def _hop_headers(self, url: URL, on_origin: bool,
                     validators: Validators | None) -> Mapping[str, str]:
        """A hop's headers: the fetcher's own, then credentials while on the first host and
        the conditional headers at the validators' URL."""
        extra: dict[str, str] = {}
        if on_origin and self._credentials is not None:
            extra = self._credentials.headers_for(url) or {}
        if validators is not None and str(url) == validators.url:
            extra = {**extra, **validators.headers()}
        return merge_headers(self._headers, extra) if extra else self._headers

    async def _hop(self, method: str, url: URL, hop: int, max_bytes: int,
                   header_limit: float, headers: Mapping[str, str]
                   ) -> tuple[_Answer | None, URL, int]:
        """One request: (the final answer, _, _) or (None, where it redirects, status)."""
        s = self.settings
        assert self._transport is not None
        proxy = self._routes.for_request(url) if self._routes is not None else None
        request = Request(method, url, headers, proxy=proxy)
        sent = datetime.now(UTC) if self._archive is not None else None
        try:
            async with asyncio.timeout(header_limit):
                response = await self._transport.send(request)
        except Exception as exc:
            raise classify(exc, url, s.read_timeout) from None
        try:
            location = response.headers.get("Location")
            if response.status not in REDIRECT_STATUSES or location is None:
                answer = await self._final(response, request, sent, max_bytes)
                response.release()  # back to the pool only when fully read
                return answer, url, response.status
            self._keep_unread(request, sent, response)
            if hop == s.max_redirects:
                raise FetchError("http_status", f"more than {s.max_redirects} redirects",
                                 status=response.status, final_url=str(url))
            return None, resolve_location(url, location), response.status
        finally:
            response.close()  # no-op after release(); else drops the connection

    async def _final(self, response: Response, request: Request, sent: datetime | None,
                     max_bytes: int) -> _Answer:
        method, url = request.method, request.url
        media_type, charset = parse_content_type(response.headers.get("Content-Type"))
        answer = _Answer(url, response.status, response.headers, media_type, charset)
        if method != "GET" or not 200 <= response.status < 300:
            self._keep_unread(request, sent, response)
            return answer
        length = _content_length(response.headers)
        if length is not None and length > max_bytes:
            raise FetchError("too_large", f"Content-Length {length} exceeds max_bytes "
                                          f"{max_bytes}", final_url=str(url))
        self._reject_media_type(media_type, url)
        chunks: list[bytes] = []
        wire: list[bytes] | None = [] if sent is not None else None  # as received, archived
        size = 0
        received = 0
        cut: Truncation | None = "unspecified"  # why the archived body is short, if it is
        decoder: BodyDecoder | None = None
        kept = b""
        try:
            decoder = decoder_for(response.headers.get("Content-Encoding"))
            async for chunk in response.chunks():
                if decoder is not None:
                    if wire is not None:
                        wire.append(chunk)
                    # the wire bytes are capped too: trailing junk after a stream's end
                    received += len(chunk)
                    if received > max_bytes:
                        cut = "length"
                        raise FetchError("too_large", f"compressed body exceeds max_bytes "
                                                      f"{max_bytes}", final_url=str(url))
                    chunk = decoder.feed(chunk, max_bytes - size)
                chunks.append(chunk)
                if size + len(chunk) > max_bytes:
                    cut = "length"
                    raise FetchError("too_large", f"body exceeds max_bytes {max_bytes} "
                                                  "(after decompression)", final_url=str(url))
                size += len(chunk)
            cut = None
            if decoder is not None:
                decoder.finish()
        except FetchError as exc:
            exc.final_url = exc.final_url or str(url)
            raise
        except asyncio.CancelledError:  # the URL's deadline
            cut = "time"
            raise
        except Exception as exc:
            error = classify(exc, url, self.settings.read_timeout)
            cut = "time" if error.kind == "timeout" else "disconnect"
            raise error from None
        finally:
            if sent is not None:
                kept = b"".join(wire if wire is not None and decoder is not None else chunks)
                self._keep(request, sent, response, kept, cut)
        answer.body = kept if sent is not None and decoder is None else b"".join(chunks)
        return answer

    def _keep(self, request: Request, sent: datetime, response: Response, body: bytes,
              truncated: Truncation | None) -> None:
        """Hand one exchange to the archive (there is one: ``sent`` is set only then)."""
        assert self._archive is not None
        self._archive.keep(Exchange(
            method=request.method, url=str(request.url), request_headers=request.headers,
            status=response.status, reason=response.reason, version=response.version,
            headers=list(response.headers.items()), body=body, sent=sent,
            truncated=truncated, credentials=self._secret_names))

    def _keep_unread(self, request: Request, sent: datetime | None, response: Response) -> None:
        """Archive a GET response whose body the fetcher does not read (a redirect, an error
        page, a 304): its headers, and a truncation mark unless it has no body."""
        if sent is None or request.method != "GET":
            return
        empty = (response.status in _NO_BODY_STATUSES
                 or response.headers.get("Content-Length", "").strip() == "0")
        self._keep(request, sent, response, b"", None if empty else "unspecified")

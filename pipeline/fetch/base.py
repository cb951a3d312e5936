"""The fetch port: URL in, bounded bytes (or a typed error) out.

Implementations: :class:`pipeline.fetch.client.HttpFetcher` (the real one) and
:class:`FakeFetcher` (canned responses, for tests and for users who inject their own).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pipeline.core.errors import PipelineError
from pipeline.core.models import ErrorKind


@dataclass(frozen=True)
class Validators:
    """What a cached page's response said about its version, to ask its server whether it
    changed: ``If-None-Match`` (``etag``) and ``If-Modified-Since`` (``last_modified``), sent
    to ``url`` only (the cached page's final URL)."""

    url: str
    etag: str | None = None
    last_modified: str | None = None

    @classmethod
    def from_headers(cls, url: str, headers: Mapping[str, str]) -> Validators | None:
        """The validators of a response (lower-case ``headers``), or None if it has none."""
        etag = headers.get("etag") or None
        last_modified = headers.get("last-modified") or None
        if etag is None and last_modified is None:
            return None
        return cls(url, etag, last_modified)

    def headers(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass
class FetchResult:
    """A response that passed every guard: its body is at most ``max_bytes`` long. A fetch
    with validators may also end in a ``304`` (``not_modified``) with an empty body."""

    url: str  # as requested
    final_url: str  # after redirects
    status: int
    media_type: str | None  # lower-case, no parameters
    charset: str | None
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    attempts: int = 1
    elapsed: float = 0.0  # seconds of the URL's deadline spent (from its host's admission)

    @property
    def not_modified(self) -> bool:
        return self.status == 304


class FetchError(PipelineError):
    """A fetch failure; ``attempts`` and ``status``/``final_url`` when known.

    ``retry_after`` carries a server's Retry-After (seconds) to the retry policy.
    """

    retry_after: float | None = None

    def __init__(self, kind: ErrorKind, message: str, *, retryable: bool = False,
                 attempts: int = 1, status: int | None = None,
                 final_url: str | None = None) -> None:
        super().__init__(kind, message, retryable=retryable)
        self.attempts = attempts
        self.status = status
        self.final_url = final_url

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.kind, self.message, self.retryable, self.attempts, self.status,
                           self.final_url))


def _rebuild(kind: ErrorKind, message: str, retryable: bool, attempts: int, status: int | None,
             final_url: str | None) -> FetchError:
    return FetchError(kind, message, retryable=retryable, attempts=attempts, status=status,
                      final_url=final_url)


@runtime_checkable
class Fetcher(Protocol):
    """Contract of a fetcher.

    ``fetch(url)`` returns a :class:`FetchResult` or raises :class:`FetchError` (a
    ``PipelineError``) with one of the kinds ``invalid_url``, ``blocked``, ``robots``,
    ``too_large``, ``timeout``, ``http_status``, ``network``, ``unsupported_type``,
    ``cancelled``. It never raises anything else and never takes longer than the settings'
    per-URL deadline. With ``validators`` it may ask whether the page changed and return a
    ``304`` result (empty body); a fetcher may also ignore them and fetch the page. A
    fetcher is an async context manager owning its connections; use one per run and call
    ``fetch`` concurrently.
    """

    async def fetch(self, url: str, *, validators: Validators | None = None
                    ) -> FetchResult: ...

    async def __aenter__(self) -> Fetcher: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


class FakeFetcher:
    """A fetcher that answers from a table: ``{url: FetchResult | FetchError | bytes}``.

    ``bytes`` values become a 200 ``text/html`` response. Unknown URLs give a ``network``
    error. ``calls`` counts fetches per URL (useful to check de-duplication). It ignores
    validators (always the full answer).
    """

    def __init__(self, routes: Mapping[str, FetchResult | FetchError | bytes],
                 media_type: str = "text/html") -> None:
        self.routes = dict(routes)
        self.media_type = media_type
        self.calls: dict[str, int] = {}

    async def fetch(self, url: str, *, validators: Validators | None = None) -> FetchResult:
        self.calls[url] = self.calls.get(url, 0) + 1
        answer = self.routes.get(url)
        if answer is None:
            raise FetchError("network", f"no route for {url}")
        if isinstance(answer, FetchError):
            raise answer
        if isinstance(answer, bytes):
            return FetchResult(url=url, final_url=url, status=200, media_type=self.media_type,
                               charset=None, body=answer)
        return answer

    async def __aenter__(self) -> FakeFetcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

"""The user's request headers, split by what they may reach, and where credentials may go.

Plain headers (``--header 'Accept-Language: fr'``) go with every request. Credentials — an
``Authorization`` or ``Cookie`` header, any header marked with ``--credential-header NAME``,
and the cookies of ``--cookie-file`` — go only where the user sent the run, by two rules
that every request passes (HEAD, GET, robots.txt, a sitemap's documents):

1. **The chain's first URL is in the scope** (:class:`CredentialScope`): an origin the user
   named — a URL of the input list, a ``--sitemap``/``--feed`` URL — or a host given with
   ``--credential-host``. A URL that a sitemap, a feed or a page chose is not, unless it
   lies on one of those. A run without sitemaps or feeds has no scope: every URL is the
   user's.
2. **Each hop stays on that URL's host** (:func:`same_host`): a redirect to another host is
   followed without them, and so are the hops after it. An ``http`` → ``https`` upgrade on
   the same host name and default ports is the same host.

A browser rendering a page (or anything else that sends requests a page asked for) asks
the same two questions: :meth:`CredentialScope.allows` for the page, :func:`same_host`
for each request after it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.core.request_options import CREDENTIAL_HEADERS
from pipeline.core.slices import FetchSettings
from pipeline.fetch.cookies import Cookie, CookieFile
from pipeline.fetch.urls import parse_url


def _origin(url: URL) -> str:
    return f"{url.scheme}://{(url.raw_host or '').lower()}:{url.port}"


@dataclass
class CredentialScope:
    """The origins credentials may go to (rule 1 of the module docstring): ``hosts`` given
    by the user (``host``: any port; ``host:port``: that one), and the origins of the URLs
    :meth:`name` is told about (the run's roots and its list). Picklable: it travels to a
    sharded run's processes."""

    hosts: frozenset[str] = frozenset()
    origins: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, hosts: Iterable[str], named: Iterable[str] = ()) -> CredentialScope:
        scope = cls(frozenset(host.strip().lower() for host in hosts if host.strip()))
        for url in named:
            scope.name(url)
        return scope

    def name(self, url: str) -> None:
        """The user named ``url``: its origin is in the scope (a URL that cannot be
        fetched names nothing)."""
        with contextlib.suppress(PipelineError, ValueError):
            self.origins.add(_origin(parse_url(url)))

    def allows(self, url: URL) -> bool:
        """Whether a request chain that starts at ``url`` may carry credentials."""
        host = (url.raw_host or "").lower()
        return (_origin(url) in self.origins or host in self.hosts
                or f"{host}:{url.port}" in self.hosts)


def same_host(url: URL, origin: URL) -> bool:
    """Whether a redirect from ``origin`` to ``url`` stays on the host credentials were
    meant for: same host name and port, or the upgrade from http:80 to https:443."""
    if url.raw_host != origin.raw_host:
        return False
    if url.port == origin.port and url.scheme == origin.scheme:
        return True
    return (origin.scheme, origin.port, url.scheme, url.port) == ("http", 80, "https", 443)


class Credentials:
    """Per-hop ``Authorization``/``Cookie`` headers (see the module docstring)."""

    def __init__(self, headers: Mapping[str, str], cookies: CookieFile | None = None) -> None:
        self._headers = {k: v for k, v in headers.items() if k.lower() != "cookie"}
        self._cookie = next((v for k, v in headers.items() if k.lower() == "cookie"), None)
        self._cookies = cookies

    @classmethod
    def from_settings(cls, settings: FetchSettings) -> Credentials | None:
        """The credentials of ``--header`` and ``--cookie-file`` (None: there are none)."""
        _, secret = split_headers(settings.headers, settings.credential_headers)
        cookies = CookieFile.load(settings.cookie_file) if settings.cookie_file else None
        return cls(secret, cookies) if secret or cookies is not None else None

    def browser_cookies(self, url: URL) -> list[Cookie]:
        """The cookies a browser showing ``url`` may hold for its host, whatever their
        path: those of a ``Cookie`` header (path ``/``) and of the cookie file. The caller
        sets them for that host alone (host-only) and only while the page is on the host
        the URL names; ``Authorization`` never goes to a browser."""
        host = (url.raw_host or "").lower()
        found = []
        for part in (self._cookie or "").split(";"):
            name, sep, value = part.strip().partition("=")
            if sep and name:
                found.append(Cookie(host, False, "/", False, 0, name.strip(), value.strip()))
        if self._cookies is not None:
            found.extend(self._cookies.matching(url, any_path=True))
        return found

    def headers_for(self, url: URL) -> dict[str, str] | None:
        """The credential headers of a request to ``url`` (None: none). The caller sends
        them only while its redirect chain is still on its first host."""
        headers = dict(self._headers)
        from_file = self._cookies.header_for(url) if self._cookies is not None else None
        cookie = "; ".join(part for part in (self._cookie, from_file) if part)
        if cookie:
            headers["Cookie"] = cookie
        return headers or None


def credential_names(marked: Iterable[str] = ()) -> frozenset[str]:
    """The (lowercase) names of the headers that carry credentials: ``Authorization``,
    ``Cookie`` and the ``marked`` ones (``--credential-header``, any case)."""
    return CREDENTIAL_HEADERS | {name.lower() for name in marked}


def split_headers(headers: Mapping[str, str], marked: Iterable[str] = ()
                  ) -> tuple[dict[str, str], dict[str, str]]:
    """(plain headers, credential headers) of the user's extra headers; ``marked`` names
    more credential headers (any case)."""
    secrets = credential_names(marked)
    plain = {k: v for k, v in headers.items() if k.lower() not in secrets}
    secret = {k: v for k, v in headers.items() if k.lower() in secrets}
    return plain, secret


def merge_headers(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """``base`` with ``extra`` on top; a name in ``extra`` replaces ``base``'s in any case."""
    names = {name.lower() for name in extra}
    return {**{k: v for k, v in base.items() if k.lower() not in names}, **extra}

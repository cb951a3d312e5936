"""The user's request headers, split by what they may reach.

Plain headers (``--header 'Accept-Language: fr'``) go with every request. Credentials — an
``Authorization`` or ``Cookie`` header, and the cookies of ``--cookie-file`` — go only to the
host the URL names: each hop of a redirect chain that stays on that host gets them (the
cookies filtered by their own domain and path), a hop to another host gets none, and
neither do the hops after it. An ``http`` → ``https`` upgrade on the same host name and default
ports is the same host.
"""

from __future__ import annotations

from collections.abc import Mapping

from yarl import URL

from pipeline.core.request_options import CREDENTIAL_HEADERS
from pipeline.core.settings import Settings
from pipeline.fetch.cookies import Cookie, CookieFile


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
    def from_settings(cls, settings: Settings) -> Credentials | None:
        """The credentials of ``--header`` and ``--cookie-file`` (None: there are none)."""
        _, secret = split_headers(settings.headers)
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


def split_headers(headers: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(plain headers, credential headers) of the user's extra headers."""
    plain = {k: v for k, v in headers.items() if k.lower() not in CREDENTIAL_HEADERS}
    secret = {k: v for k, v in headers.items() if k.lower() in CREDENTIAL_HEADERS}
    return plain, secret


def merge_headers(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """``base`` with ``extra`` on top; a name in ``extra`` replaces ``base``'s in any case."""
    names = {name.lower() for name in extra}
    return {**{k: v for k, v in base.items() if k.lower() not in names}, **extra}

"""Which URLs a crawl may fetch: ``origin``, ``domain``, ``prefix`` or ``any``.

Judged on every discovered URL and again on every redirect hop. ``domain`` compares
registrable domains (``docs.example.co.uk`` and ``example.co.uk`` are one) through the
public-suffix list the ``publicsuffixlist`` package ships: nothing is downloaded.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from typing import Literal, get_args

from yarl import URL

ScopeMode = Literal["origin", "domain", "prefix", "any"]
SCOPES: tuple[str, ...] = get_args(ScopeMode)


@functools.cache
def _suffix_list() -> object:
    from publicsuffixlist import PublicSuffixList  # its bundled snapshot: no network

    return PublicSuffixList()


def registrable_domain(host: str) -> str:
    """``example.co.uk`` for ``a.b.example.co.uk``; an IP address, ``localhost`` or a bare
    public suffix is its own domain."""
    host = host.lower().rstrip(".")
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    found = _suffix_list().privatesuffix(host)  # type: ignore[attr-defined]
    return str(found) if found else host


def _origin(url: URL) -> tuple[str, str, int | None]:
    return (url.scheme.lower(), (url.raw_host or "").lower(), url.port)


def _prefix(path: str) -> str:
    """The start URL's directory: ``/docs/a.html`` → ``/docs``, ``/docs/`` and ``/docs`` →
    ``/docs`` (a last segment with a dot is a file), ``/`` → empty (the whole origin)."""
    head, _, last = path.rpartition("/")
    if "." in last:
        path = head
    return path.rstrip("/")


class Scope:
    """The scope of one crawl around its start URLs (taken after their own redirects)."""

    def __init__(self, mode: ScopeMode, starts: Iterable[str]) -> None:
        if mode not in SCOPES:
            raise ValueError(f"unknown scope {mode!r}")
        self.mode = mode
        parsed = [URL(start) for start in starts]
        self._origins = {_origin(url) for url in parsed}
        self._domains = {registrable_domain(url.raw_host or "") for url in parsed}
        self._prefixes = {(_origin(url), _prefix(url.path)) for url in parsed}

    def add(self, url: str) -> None:
        """Take ``url`` as a start too (where a start page's redirects ended)."""
        parsed = URL(url)
        self._origins.add(_origin(parsed))
        self._domains.add(registrable_domain(parsed.raw_host or ""))
        self._prefixes.add((_origin(parsed), _prefix(parsed.path)))

    def allows(self, url: str | URL) -> bool:
        """True when ``url`` (absolute http or https) is inside the scope."""
        try:
            parsed = url if isinstance(url, URL) else URL(url)
        except (ValueError, TypeError):
            return False
        if not parsed.absolute or parsed.scheme.lower() not in ("http", "https"):
            return False
        if self.mode == "any":
            return True
        if self.mode == "domain":
            return registrable_domain(parsed.raw_host or "") in self._domains
        origin = _origin(parsed)
        if self.mode == "origin":
            return origin in self._origins
        path = parsed.path
        return any(origin == where and (not prefix or path == prefix
                                        or path.startswith(prefix + "/"))
                   for where, prefix in self._prefixes)

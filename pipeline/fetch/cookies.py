"""Cookies from a Netscape ``cookies.txt`` (curl, wget, browser exports), read-only.

A cookie goes to a request when its domain, path, ``secure`` flag and expiry match (RFC 6265
rules: a host-only cookie to its host alone, a domain cookie to the domain and its
subdomains, never by suffix to an IP address). Nothing a server sends is stored: a run
sends the file's cookies and nothing else.

Written here rather than with :mod:`http.cookiejar`: its matcher walks every domain of the
jar per request (milliseconds per request with a browser-sized file:
``benchmarks/cookie_match.py``), it refuses a whole file for one ``example.com TRUE`` line,
and it never matches a dotless host such as ``localhost``. This index finds a host's cookies
by its own name and its parent domains.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from yarl import URL

from pipeline.core.errors import PipelineError

HTTP_ONLY_PREFIX = "#HttpOnly_"
_FIELDS = 7


@dataclass(frozen=True, slots=True)
class Cookie:
    """One line of a cookies file. ``domain`` is lower-case without a leading dot;
    ``expires`` is a Unix time, 0 for a session cookie; ``http_only`` when the line had
    the ``#HttpOnly_`` prefix (a browser must hide it from page scripts)."""

    domain: str
    subdomains: bool
    path: str
    secure: bool
    expires: int
    name: str
    value: str
    http_only: bool = False

    def pair(self) -> str:
        return f"{self.name}={self.value}" if self.name else self.value


def _flag(text: str, line: int) -> bool:
    upper = text.strip().upper()
    if upper not in ("TRUE", "FALSE"):
        raise ValueError(f"line {line}: expected TRUE or FALSE, got {text[:20]!r}")
    return upper == "TRUE"


def _domain(text: str) -> str:
    domain = text.strip().lower().lstrip(".")
    try:
        return domain.encode("idna").decode("ascii")
    except UnicodeError:
        return domain


def parse_line(text: str, line: int) -> Cookie | None:
    """The cookie on one line of a cookies file; None for a comment or a blank line."""
    text = text.rstrip("\r\n")
    http_only = text.startswith(HTTP_ONLY_PREFIX)
    if http_only:
        text = text[len(HTTP_ONLY_PREFIX):]
    elif not text.strip() or text.lstrip().startswith("#"):
        return None
    fields = text.split("\t")
    if len(fields) != _FIELDS:
        raise ValueError(f"line {line}: expected {_FIELDS} tab-separated fields, "
                         f"got {len(fields)}")
    domain, subdomains, path, secure, expires, name, value = fields
    if not domain.strip():
        raise ValueError(f"line {line}: empty domain")
    try:
        expiry = int(float(expires.strip() or 0))
    except ValueError:
        raise ValueError(f"line {line}: expiry is not a number") from None
    if any(ch in value or ch in name for ch in "\r\n;\x00"):
        raise ValueError(f"line {line}: cookie name or value has a forbidden character")
    return Cookie(
        domain=_domain(domain),
        subdomains=_flag(subdomains, line) or domain.strip().startswith("."),
        path=path.strip() or "/",
        secure=_flag(secure, line),
        expires=max(expiry, 0),
        name=name.strip(),
        value=value.strip(),
        http_only=http_only,
    )


def path_matches(request_path: str, cookie_path: str) -> bool:
    """RFC 6265 §5.1.4 path-match."""
    if request_path == cookie_path:
        return True
    return request_path.startswith(cookie_path) and (
        cookie_path.endswith("/") or request_path[len(cookie_path)] == "/")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class CookieFile:
    """The cookies of one file, indexed by domain; :meth:`header_for` gives a request's
    ``Cookie`` header. ``clock`` (Unix time) is injectable for tests."""

    def __init__(self, cookies: Iterable[Cookie], clock: Callable[[], float] = time.time
                 ) -> None:
        self._by_domain: dict[str, list[Cookie]] = {}
        for cookie in cookies:
            self._by_domain.setdefault(cookie.domain, []).append(cookie)
        for found in self._by_domain.values():
            found.sort(key=lambda c: -len(c.path))  # longer paths first (RFC 6265 §5.4)
        self._clock = clock

    def __len__(self) -> int:
        return sum(len(found) for found in self._by_domain.values())

    @classmethod
    def load(cls, path: str | Path, clock: Callable[[], float] = time.time) -> CookieFile:
        """Read a cookies file; ``config`` error (with the line) if it is unreadable or
        malformed. Cookies already expired are dropped."""
        try:
            text = Path(path).expanduser().read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise PipelineError("config", f"cannot read cookie file {path}: "
                                          f"{exc.strerror or exc}") from None
        cookies: list[Cookie] = []
        now = clock()
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                cookie = parse_line(line, number)
            except ValueError as exc:
                raise PipelineError("config", f"cookie file {path}: {exc}") from None
            if cookie is not None and not (cookie.expires and cookie.expires <= now):
                cookies.append(cookie)
        return cls(cookies, clock)

    def matching(self, url: URL, *, any_path: bool = False) -> list[Cookie]:
        """The cookies ``url`` gets, longest path first (``any_path``: those its host gets,
        whatever their path)."""
        host = (url.raw_host or "").lower().rstrip(".")
        path = url.raw_path or "/"
        https = url.scheme == "https"
        now = self._clock()
        found: list[Cookie] = []
        candidates = [(host, False)]
        if not _is_ip(host):
            labels = host.split(".")
            candidates += [(".".join(labels[i:]), True) for i in range(1, len(labels))]
        for domain, parent in candidates:
            for cookie in self._by_domain.get(domain, ()):
                if parent and not cookie.subdomains:
                    continue
                if cookie.secure and not https:
                    continue
                if cookie.expires and cookie.expires <= now:
                    continue
                if any_path or path_matches(path, cookie.path):
                    found.append(cookie)
        if len(candidates) > 1:
            found.sort(key=lambda c: -len(c.path))
        return found

    def header_for(self, url: URL) -> str | None:
        """The ``Cookie`` header value for a request to ``url``, or None."""
        found = self.matching(url)
        return "; ".join(cookie.pair() for cookie in found) if found else None

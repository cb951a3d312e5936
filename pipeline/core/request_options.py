"""Checks for the request options a user sets: extra headers and the proxy URL.

Used by :class:`pipeline.core.settings.Settings` validators, so a bad ``--header`` or ``--proxy`` is
a ``config`` error before any work; kept free of heavy imports (the command line loads the
settings before anything else).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
# Framing and hop-by-hop headers are the HTTP client's; proxy credentials go in the proxy URL
# (a header would reach the target); conditional headers belong to cache revalidation.
REFUSED_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
    "trailer", "proxy-connection", "proxy-authorization", "if-none-match", "if-modified-since",
})
# Headers that carry credentials: sent only while a redirect chain stays on its first host.
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie"})

PROXY_SCHEMES = {"http": 80, "https": 443, "socks5": 1080, "socks5h": 1080}


def _header(name: str, value: str) -> tuple[str, str]:
    name, value = name.strip(), value.strip()
    if not _TOKEN.fullmatch(name):
        raise ValueError(f"invalid header name {name[:40]!r}")
    if name.lower() in REFUSED_HEADERS:
        raise ValueError(f"header {name} cannot be set (the client or --proxy/--cache owns it)")
    if _BAD_VALUE.search(value):
        raise ValueError(f"header {name}: control character in value")
    return name, value


def _header_line(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if not colon:
        raise ValueError(f"header {line.strip()[:40]!r} is not 'Name: value'")
    return _header(name, value)


def parse_headers(value: Any) -> Any:
    """Extra request headers as a dict: from a mapping, a list of ``'Name: value'`` lines or
    one string of such lines (the environment). Names are tokens, values have no line
    breaks; a name given twice (in any case) keeps its last value."""
    if value is None:
        return {}
    pairs: Iterable[tuple[str, str]]
    if isinstance(value, Mapping):
        pairs = (_header(str(k), str(v)) for k, v in value.items())
    elif isinstance(value, str):
        pairs = (_header_line(line) for line in value.splitlines() if line.strip())
    elif isinstance(value, list | tuple):
        pairs = (_header_line(str(line)) for line in value)
    else:
        return value  # not ours to judge: pydantic reports the type
    headers: dict[str, str] = {}
    for name, text in pairs:
        for known in [k for k in headers if k.lower() == name.lower()]:
            del headers[known]
        headers[name] = text
    return headers


def check_proxy_url(url: str) -> str:
    """``url`` when it names a usable proxy (scheme, host, port); ValueError otherwise. The
    message never repeats credentials."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ValueError("proxy URL is not a URL (expected scheme://host:port)") from None
    scheme = parts.scheme.lower()
    if scheme not in PROXY_SCHEMES:
        raise ValueError(f"proxy scheme {scheme[:20]!r} not supported (use one of "
                         f"{', '.join(PROXY_SCHEMES)})")
    if not parts.hostname:
        raise ValueError("proxy URL has no host")
    if port == 0:
        raise ValueError("proxy URL has port 0")
    return url.strip()

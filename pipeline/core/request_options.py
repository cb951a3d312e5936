"""Checks for the request options a user sets: extra headers and the proxy URL.

Used by :mod:`pipeline.core.settings`' validators, so a bad ``--header`` or ``--proxy`` is
a ``config`` error before any work; kept free of heavy imports (the command line loads the
settings before anything else).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Controls, and the characters Python's str.splitlines() also breaks lines at.
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")
# Framing and hop-by-hop headers are the HTTP client's; proxy credentials go in the proxy URL
# (a header would reach the target); conditional headers belong to cache revalidation.
REFUSED_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
    "trailer", "proxy-connection", "proxy-authorization", "if-none-match", "if-modified-since",
})
# Headers that carry credentials: sent only while a redirect chain stays on its first host.
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie"})

PROXY_SCHEMES = {"http": 80, "https": 443, "socks5": 1080, "socks5h": 1080}


# A mistyped header may be a credential: messages name its position, never its text.
_NOT_SHOWN = "its text is not shown: it may hold a secret"


def _header(number: int, name: str, value: str) -> tuple[str, str]:
    name, value = name.strip(), value.strip()
    if not _TOKEN.fullmatch(name):
        raise ValueError(f"header {number}: invalid name before the colon ({_NOT_SHOWN})")
    if name.lower() in REFUSED_HEADERS:
        raise ValueError(f"header {name} cannot be set (the client or --proxy/--cache owns it)")
    if _BAD_VALUE.search(value):
        raise ValueError(f"header {name}: control character or line break in its value")
    return name, value


def _header_line(number: int, line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if not colon:
        raise ValueError(f"header {number} is not 'Name: value' ({_NOT_SHOWN})")
    return _header(number, name, value)


def parse_headers(value: Any) -> Any:
    """Extra request headers as a dict: from a mapping, a list of ``'Name: value'`` lines or
    one string of such lines (the environment: split at newlines only, CRLF taken, never at
    the other characters ``str.splitlines`` breaks at). Names are tokens, values have no line
    breaks; a name given twice (in any case) keeps its last value. A mistake is a
    ValueError naming the header by its position (1-based), never quoting it."""
    if value is None:
        return {}
    pairs: Iterable[tuple[str, str]]
    if isinstance(value, Mapping):
        pairs = (_header(n, str(k), str(v)) for n, (k, v) in enumerate(value.items(), 1))
    elif isinstance(value, str):
        lines = [line.removesuffix("\r") for line in value.split("\n")]
        pairs = (_header_line(n, line) for n, line in enumerate(
            (line for line in lines if line.strip()), 1))
    elif isinstance(value, list | tuple):
        pairs = (_header_line(n, str(line)) for n, line in enumerate(value, 1))
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

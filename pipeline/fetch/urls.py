"""Normalise and validate one URL line before anything touches the network.

Only absolute ``http``/``https`` URLs with a host pass. The host is IDNA-encoded; legacy IPv4
spellings (``0x7f000001``, ``2130706433``, ``0177.1``) are recognised and refused (``blocked``)
whatever address they mean; credentials and fragments are dropped and the path/query
percent-encoding is normalised (yarl).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import unquote

from yarl import URL

from pipeline.core.errors import PipelineError
from pipeline.fetch.policy import IPAddress, NetworkPolicy

MAX_URL_BYTES = 8 * 1024
ALLOWED_SCHEMES = frozenset({"http", "https"})
# Schemes refused as unsafe (``blocked``) rather than merely not understood (``invalid_url``).
REFUSED_SCHEMES = frozenset({
    "javascript", "vbscript", "file", "data", "ftp", "ftps", "sftp", "gopher", "ws", "wss",
    "mailto", "blob", "about", "chrome", "jar", "ldap", "dict", "smb", "ssh", "telnet", "tftp",
    "view-source", "filesystem", "netdoc", "php", "expect", "phar", "zip",
})

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NUMERIC_LABEL = re.compile(r"0[xX][0-9A-Fa-f]*|[0-9]+")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_DOTTED_QUAD = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_\-]{0,61}[a-z0-9_])?")


def _invalid(message: str) -> PipelineError:
    return PipelineError("invalid_url", message)


def _ipv4_number(part: str) -> int:
    if part == "":
        raise _invalid("empty part in numeric host")
    try:
        if part[:2] in ("0x", "0X"):
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part[0] == "0":
            return int(part, 8)
        return int(part)
    except ValueError as exc:
        raise _invalid("invalid number in numeric host") from exc


def parse_ipv4_host(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a numeric host means (WHATWG rules: 1-4 parts, decimal/octal/hex).

    None when the host is a domain name; ``invalid_url`` when it looks numeric but is not an
    address (e.g. ``1.2.3.4.5``, ``256.1.1.1``).
    """
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if not _NUMERIC_LABEL.fullmatch(parts[-1]):
        return None
    if len(parts) > 4:
        raise _invalid("numeric host with too many parts")
    numbers = [_ipv4_number(part) for part in parts]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise _invalid("numeric host out of range")
    value = numbers[-1]
    for position, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - position))
    return ipaddress.IPv4Address(value)


def _checked_domain(host: str) -> str:
    host = host.rstrip(".")
    labels = host.split(".")
    if not host or len(host) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise _invalid("invalid host name")
    return host


def _canonical_host(url: URL) -> URL:
    host = url.raw_host or ""
    if "%" in host and ":" not in host:
        # Percent-escapes in a host name (``%31%32%37.0.0.1``) mean the decoded name.
        try:
            url = url.with_host(unquote(host, errors="strict"))
        except (ValueError, UnicodeError) as exc:
            raise _invalid("invalid host name") from exc
        host = url.raw_host or ""
    if ":" in host:
        try:
            ipaddress.ip_address(host.replace("%25", "%"))
        except ValueError as exc:
            raise _invalid("invalid IPv6 host") from exc
        return url
    if _DOTTED_QUAD.fullmatch(host):
        return url  # already the canonical spelling of an IPv4 address
    ipv4 = parse_ipv4_host(host)
    if ipv4 is None:
        domain = _checked_domain(host.lower())
        return url if domain == host else url.with_host(domain)
    if str(ipv4) != host.rstrip("."):
        # Only an attacker spells an address 0x7f000001 or 0177.1: refuse whatever it means.
        raise PipelineError("blocked", f"non-canonical IPv4 address refused ({ipv4})")
    return url if str(ipv4) == host else url.with_host(str(ipv4))


def parse_url(raw: str) -> URL:
    """Validate and normalise one URL; raise ``invalid_url`` or ``blocked`` (refused scheme)."""
    if not isinstance(raw, str):
        raise _invalid("URL is not a string")
    return _parse_url(raw)


# The extractor normalises a URL and the fetcher parses the result again right after: a
# small memo makes the second parse free (the result is a pure function of the text).
@functools.lru_cache(maxsize=256)
def _parse_url(raw: str) -> URL:
    if len(raw) > MAX_URL_BYTES or len(raw.encode("utf-8", "surrogatepass")) > MAX_URL_BYTES:
        raise _invalid("URL longer than 8 KB")
    text = _TAB_NEWLINE.sub("", raw.strip())
    if not text:
        raise _invalid("empty URL")
    if _CONTROL.search(text):
        raise _invalid("control character in URL")
    match = _SCHEME.match(text)
    if match is None:
        raise _invalid("URL has no scheme (expected http:// or https://)")
    scheme = match.group(1).lower()
    if scheme not in ALLOWED_SCHEMES:
        if scheme in REFUSED_SCHEMES:
            raise PipelineError("blocked", f"scheme {scheme!r} refused (only http and https)")
        raise _invalid(f"unsupported scheme {scheme[:20]!r} (only http and https)")
    # Browsers read ``http:/host``, ``http:\\host`` and ``http:///host`` as ``http://host``.
    rest = text[match.end():].lstrip("/\\")
    try:
        url = URL(f"{scheme}://{rest}")
        if not url.raw_host:
            raise _invalid("URL has no host")
        url = _canonical_host(url)
        if not url.port:  # also makes yarl validate the port, which it does lazily
            raise _invalid("invalid port")
        if url.raw_user is not None or url.raw_password is not None:
            url = url.with_user(None)
        if url.raw_fragment:
            url = url.with_fragment(None)
        text = str(url)
        if url.raw_path == "/" and not str(url.with_query(None)).endswith("/"):
            query = url.raw_query_string
            text = str(url.with_path("/")) + (f"?{query}" if query else "")
        result = URL(text, encoded=True)
    except PipelineError:
        raise
    except (ValueError, UnicodeError, TypeError) as exc:
        raise _invalid("unparseable URL") from exc
    if len(str(result)) > MAX_URL_BYTES:
        raise _invalid("URL longer than 8 KB")
    return result


def normalize_url(raw: str) -> str:
    """The canonical text of a valid http(s) URL; ``invalid_url``/``blocked`` otherwise."""
    return str(parse_url(raw))


def literal_ip(url: URL) -> IPAddress | None:
    """The IP address a (normalised) URL names directly, or None for a domain name."""
    return _host_ip(url.raw_host or "")


@functools.lru_cache(maxsize=1024)
def _host_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.replace("%25", "%"))
    except ValueError:
        return None


def check_target(url: URL, policy: NetworkPolicy) -> None:
    """Refuse a URL whose host is a literal IP the policy refuses.

    Domain names are judged after resolution, by :class:`pipeline.fetch.resolver.PolicyResolver`.
    """
    ip = literal_ip(url)
    if ip is not None:
        policy.check(ip)


def resolve_location(base: URL, location: str | None) -> URL:
    """The absolute, normalised URL a ``Location`` header points to (relative or absolute)."""
    if location is None or not location.strip():
        raise _invalid("redirect without Location")
    if len(location) > MAX_URL_BYTES:
        raise _invalid("redirect Location longer than 8 KB")
    text = _TAB_NEWLINE.sub("", location.strip())
    if _SCHEME.match(text) is None:
        try:
            text = str(base.join(URL(text)))
        except (ValueError, UnicodeError, TypeError) as exc:
            raise _invalid("unparseable redirect Location") from exc
    return parse_url(text)

"""Shared mapping of untrusted vendor data: URL checks, vendor pages to records (the same
checks as our own pipeline: final URL, binary refusal, truncation), input ordering, and
search-operator helpers.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from handlers.decode import clean_text
from pipeline.core.errors import PipelineError, sanitize_message
from pipeline.core.models import ErrorInfo, ErrorKind, ExtractOptions, OutputFormat, Record
from pipeline.core.truncate import clip_metadata, clip_title, truncate
from pipeline.fetch.policy import NetworkPolicy
from pipeline.fetch.urls import check_target, parse_url
from pipeline.providers.base import SearchOptions
from pipeline.providers.http import VendorError, error_detail

MAX_URL_CHARS = 8192
_BINARY_SAMPLE = 4096
_BINARY_RATIO = 0.1
_TAG = re.compile(r"<[^>]{0,200}>")
_URL_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f]")


def check_url(url: object) -> str:
    """Return ``url`` if it is an absolute http(s) URL with a host; else raise
    ``PipelineError('invalid_url')``.

    Syntax only: the network policy (private addresses, DNS) is the fetcher's job.
    """
    if not isinstance(url, str) or not url.strip():
        raise PipelineError("invalid_url", "URL must be a non-empty string")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise PipelineError("invalid_url", f"URL longer than {MAX_URL_CHARS} characters")
    if _URL_FORBIDDEN.search(url):
        raise PipelineError("invalid_url", "URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a non-numeric or out-of-range port
    except ValueError as exc:
        raise PipelineError("invalid_url", f"malformed URL: {exc}") from exc
    del port
    if parts.scheme.lower() not in ("http", "https"):
        raise PipelineError("invalid_url", f"scheme {parts.scheme or '(none)'!r} is not http(s)")
    if not parts.hostname:
        raise PipelineError("invalid_url", "URL has no host")
    return url


def check_page_url(url: object, policy: NetworkPolicy) -> str:
    """A page URL held to the safety policy without resolving it: normalised, refused
    schemes and literal addresses the policy refuses are ``blocked``, bad syntax is
    ``invalid_url``. Domain names are judged when they are resolved — by our fetcher, or on
    the vendor's network for pages a vendor reads."""
    if not isinstance(url, str):
        raise PipelineError("invalid_url", "URL must be a string")
    parsed = parse_url(url)
    check_target(parsed, policy)
    return str(parsed)


def looks_binary(text: str) -> bool:
    """True for text that is really bytes: NULs, or many control/replacement characters."""
    sample = text[:_BINARY_SAMPLE]
    if not sample:
        return False
    if "\x00" in sample:
        return True
    odd = sum(1 for ch in sample
              if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f"))
    return odd / len(sample) > _BINARY_RATIO


def vendor_record(url: str, provider: str, options: ExtractOptions, policy: NetworkPolicy, *,
                  content: object, final_url: object = None, title: object = None,
                  status: object = None, content_type: object = None,
                  metadata: Mapping[str, Any] | None = None,
                  fmt: OutputFormat | None = None) -> Record:
    """One record from a vendor's page, held to our own rules: the final URL re-checked by
    the safety ``policy``, no binary payloads, no empty pages, content truncated to
    ``options.max_chars``."""
    meta = clip_metadata({k: v for k, v in (metadata or {}).items() if v not in (None, "", [], {})})
    meta["provider"] = provider
    base = {"handler": provider, "metadata": meta,
            "status": status if isinstance(status, int) else None,
            "content_type": content_type if isinstance(content_type, str) else None}
    try:
        final = check_page_url(final_url, policy) if final_url else url
    except PipelineError as exc:
        kind: ErrorKind = "blocked" if exc.kind == "blocked" else "invalid_result"
        info = ErrorInfo(kind=kind, message=f"{provider}: final URL refused: {exc.message}")
        return Record.failure(url, info, **base)
    if not isinstance(content, str):
        return Record.failure(url, ErrorInfo(kind="invalid_result",
                              message=f"{provider}: no text content in the answer"),
                              final_url=final, **base)
    if looks_binary(content):
        return Record.failure(url, ErrorInfo(kind="unsupported_type",
                              message=f"{provider}: binary payload refused"),
                              final_url=final, **base)
    text = clean_text(content).strip()
    if not text:
        return Record.failure(url, ErrorInfo(kind="empty",
                              message=f"{provider}: the page has no readable content"),
                              final_url=final, **base)
    cut = truncate(text, options.max_chars, markdown=(fmt or options.format) == "markdown")
    clean_title = clean_text(title).strip() if isinstance(title, str) else None
    return Record(url=url, ok=True, final_url=final, title=clip_title(clean_title) or None,
                  content=cut.text, format=fmt or options.format, truncated=cut.truncated,
                  next_offset=cut.next_offset, chars=len(cut.text), **base)


def failed_record(url: str, provider: str, cause: str, *, kind: ErrorKind = "provider",
                  retryable: bool = False) -> Record:
    """A per-URL vendor failure as a record (the message sanitised: causes may quote the
    vendor)."""
    info = ErrorInfo(kind=kind, message=sanitize_message(f"{provider}: {cause}"),
                     retryable=retryable)
    return Record.failure(url, info, handler=provider, metadata={"provider": provider})


def in_input_order(urls: Sequence[str], by_url: Mapping[str, Record],
                   provider: str) -> list[Record]:
    """Exactly one record per input URL, in input order; URLs the vendor left out fail."""
    out = []
    for url in urls:
        record = by_url.get(url)
        if record is None:
            record = failed_record(url, provider, "no result for this URL in the answer")
        out.append(record.model_copy(deep=True))
    return out


def url_key(url: object) -> str | None:
    """A URL as vendors may echo it back (scheme and host case, a trailing slash, a
    fragment dropped), for matching their rows to the URLs we asked for; None for
    anything that is not text."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def url_matcher(urls: Iterable[str]) -> Callable[[object], str | None]:
    """``match(found)``: which of ``urls`` a URL in a vendor's answer stands for — the same
    string, else the same :func:`url_key` (first such URL); None for any other."""
    urls = list(urls)
    exact = set(urls)
    keyed: dict[str | None, str] = {}
    for url in urls:
        keyed.setdefault(url_key(url), url)
    keyed.pop(None, None)

    def match(found: object) -> str | None:
        if isinstance(found, str) and found in exact:
            return found
        return keyed.get(url_key(found))

    return match


def first_text(value: object) -> str | None:
    """A text field that vendors may send as a string or a list of strings (Firecrawl's
    page metadata): the first non-blank string, else None."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    return value if isinstance(value, str) and value.strip() else None


def strip_tags(text: object) -> object:
    """Plain text from a vendor snippet with inline HTML (``<strong>``, entities)."""
    return html.unescape(_TAG.sub("", text)) if isinstance(text, str) else text


def rename_rows(items: Iterable[Any], **keys: str | tuple[str, ...]) -> list[Any]:
    """Vendor rows with fields renamed to :class:`~pipeline.core.models.SearchResult`'s
    (``snippet="content"``; a tuple lists fallbacks). Anything that is not an object passes
    through unchanged, for the kernel to refuse."""
    def pick(row: dict[str, Any], names: str | tuple[str, ...]) -> Any:
        names = (names,) if isinstance(names, str) else names
        return next((row[name] for name in names if row.get(name) is not None), None)

    return [{ours: pick(row, theirs) for ours, theirs in keys.items()}
            if isinstance(row, dict) else row for row in items]


def capped_count(asked: int | None, cap: int, warnings: list[str]) -> int | None:
    """``asked`` (a result count) held to a vendor's per-query ``cap``, with a warning when
    it had to be cut; None when the caller left the count to the vendor."""
    if not asked:
        return None
    if asked > cap:
        warnings.append(f"at most {cap} results per query; asked for {asked}")
    return min(asked, cap)


def present(**fields: Any) -> dict[str, Any]:
    """The request fields that carry a value, so a vendor only sees what was asked for."""
    return {name: value for name, value in fields.items() if value not in (None, "", [])}


def unsupported(options: SearchOptions, *names: str) -> list[str]:
    """A warning for each option among ``names`` that the caller set but the vendor cannot
    honour."""
    return [f"{name} is not supported; ignored" for name in names if getattr(options, name)]


def site_query(query: str, include: Iterable[str], exclude: Iterable[str]) -> str:
    """Express domain filters as ``site:`` operators, for engines without a filter field."""
    include = [d for d in include if d]
    parts = [query]
    if len(include) == 1:
        parts.append(f"site:{include[0]}")
    elif include:
        parts.append("(" + " OR ".join(f"site:{d}" for d in include) + ")")
    parts.extend(f"-site:{d}" for d in exclude if d)
    return " ".join(parts)


def dig(data: Any, *keys: str) -> Any:
    """``data[k1][k2]...`` or None when any level is missing or not a mapping."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def results_list(vendor: str, data: Any, *path: str) -> list[Any]:
    """The list at ``data[path...]``. A missing key means no results (vendors omit empty
    arrays) unless the answer carries an error message instead; an answer that is not an
    object, or a non-list there, is a provider error."""
    if not isinstance(data, dict):
        raise VendorError(vendor, "unexpected answer shape (not a JSON object)", fatal=True)
    if path and path[0] not in data and (reason := error_detail(data)):
        raise VendorError(vendor, f"error answer: {reason}")  # a 200 that says it failed
    value: Any = data
    for key in path:
        if value is None:
            return []
        if not isinstance(value, dict):
            raise VendorError(vendor, f"unexpected answer shape at {key!r}", fatal=True)
        value = value.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise VendorError(vendor, f"unexpected answer shape ({'.'.join(path)} is not a list)",
                          fatal=True)
    return value


async def per_url(urls: Sequence[str], read_one: Callable[[str], Awaitable[Record]],
                  provider: str, *, limit: int) -> list[Record]:
    """Read each URL with its own vendor call, at most ``limit`` at once, in input order.

    A per-URL vendor failure becomes that URL's record; a ``fatal`` one (bad key, no credit,
    malformed answer) fails the whole provider so a fallback can take over.
    """
    gate = asyncio.Semaphore(limit)

    async def one(url: str) -> Record:
        async with gate:
            try:
                return await read_one(url)
            except VendorError as exc:
                if exc.fatal:
                    raise
                return failed_record(url, provider, exc.message.removeprefix(f"{provider}: "),
                                     retryable=exc.retryable)

    tasks = [asyncio.ensure_future(one(url)) for url in urls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:  # a fatal failure: stop the calls still running
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def glob_regex(pattern: str) -> str:
    """A crawl glob (docs/crawl.md: ``*`` within a path segment, ``**`` across them, ``?``
    one character, ``[...]`` a set) as the path regular expression vendors take; a pattern
    without a leading ``/`` may match from any segment's start."""
    out = ["^"] if pattern.startswith("/") else ["^(?:.*/)?"]
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append(".")
        elif char == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out) + "$"


def path_filter(include: Sequence[str], exclude: Sequence[str]) -> Callable[[str], bool]:
    """``keep(url)``: whether a URL's path and query pass the crawl globs (for vendors
    whose map takes no filters: they are applied to the URLs it answers)."""
    takes = [re.compile(glob_regex(p)) for p in include]
    drops = [re.compile(glob_regex(p)) for p in exclude]

    def keep(url: str) -> bool:
        parts = urlsplit(url)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        if takes and not any(t.match(target) for t in takes):
            return False
        return not any(d.match(target) for d in drops)

    return keep

"""Crawler traps, each guard named (``trap:<rule>`` in the skip ledger).

* ``repeated_segment``: one path segment three times (``/a/b/a/b/a``: relative-link loops);
* ``too_deep``: more than 20 path segments;
* ``too_long``: a URL over 2,083 characters;
* ``same_content``: a URL pattern (digits folded, query values dropped) whose pages keep
  coming back with text already seen under it — calendars, facet combinations, session ids.
  After ``SAME_LIMIT`` such repeats the pattern is stopped. What it saw is a page's URL and
  text digest (:meth:`TrapGuard.observe` returns it): a resumed crawl replays the digests
  its frontier log holds (:meth:`TrapGuard.observe_digest`), so a pattern stopped before
  the stop stays stopped.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, OrderedDict

from yarl import URL

MAX_SEGMENT_REPEATS = 3
MAX_SEGMENTS = 20
MAX_URL_CHARS = 2083
SAME_LIMIT = 3  # pages of one pattern repeating text seen under it, before it is stopped
HASHES_PER_PATTERN = 64  # text hashes kept per pattern
PATTERNS_KEPT = 10_000  # patterns remembered (least recently seen go first)
_DIGITS = re.compile(r"\d+")

TRAP_RULES = ("repeated_segment", "too_deep", "too_long", "same_content")


def url_pattern(url: str | URL) -> str:
    """The URL with digit runs folded to ``0`` and query values dropped:
    ``/cal/2024/05?view=day`` → ``host/cal/0/0?view``."""
    parsed = url if isinstance(url, URL) else URL(url)
    keys = sorted({key for key in parsed.query})
    path = _DIGITS.sub("0", parsed.raw_path)
    return f"{(parsed.raw_host or '').lower()}{path}" + (f"?{'&'.join(keys)}" if keys else "")


def shape_trap(url: str) -> str | None:
    """The rule a URL's shape breaks (length, depth, a repeated segment), or None."""
    if len(url) > MAX_URL_CHARS:
        return "too_long"
    segments = [segment for segment in URL(url).raw_path.split("/") if segment]
    if len(segments) > MAX_SEGMENTS:
        return "too_deep"
    if segments and Counter(segments).most_common(1)[0][1] >= MAX_SEGMENT_REPEATS:
        return "repeated_segment"
    return None


class TrapGuard:
    """The trap rules of one crawl: :meth:`check` before a URL is queued, :meth:`observe`
    each fetched page's text."""

    def __init__(self) -> None:
        self._hashes: OrderedDict[str, set[bytes]] = OrderedDict()
        self._repeats: Counter[str] = Counter()
        self._stopped: set[str] = set()

    def check(self, url: str) -> str | None:
        """``trap:<rule>`` for a URL not to fetch, or None."""
        if (rule := shape_trap(url)) is not None:
            return f"trap:{rule}"
        if self._stopped and url_pattern(url) in self._stopped:
            return "trap:same_content"
        return None

    def observe(self, url: str, text: str) -> bytes:
        """A fetched page's extracted text, under its URL's pattern; returns the text's
        digest (what :meth:`observe_digest` takes again on resume)."""
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        self.observe_digest(url, digest)
        return digest

    def observe_digest(self, url: str, digest: bytes) -> None:
        """A fetched page's text digest, under its URL's pattern."""
        pattern = url_pattern(url)
        hashes = self._hashes.get(pattern)
        if hashes is None:
            hashes = self._hashes[pattern] = set()
            if len(self._hashes) > PATTERNS_KEPT:
                self._hashes.popitem(last=False)
        else:
            self._hashes.move_to_end(pattern)
        if digest in hashes:
            self._repeats[pattern] += 1
            if self._repeats[pattern] >= SAME_LIMIT:
                self._stopped.add(pattern)
        elif len(hashes) < HASHES_PER_PATTERN:
            hashes.add(digest)

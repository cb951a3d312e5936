"""The skip ledger (``--skipped FILE``): every URL a crawl did not fetch, and why.

One JSON line per skip — ``url``, ``reason``, ``parent``, ``depth`` — and counts by reason
for the summary, kept with or without a file. Reasons: ``out_of_scope``, ``robots``,
``excluded``, ``depth``, ``budget``, ``nofollow``, ``duplicate`` and ``trap:<rule>``
(:mod:`pipeline.crawl.traps`).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import IO

REASONS = ("out_of_scope", "robots", "excluded", "depth", "budget", "nofollow", "duplicate")


class Ledger:
    """Counts skips by reason and, given a text stream, writes each as a JSON line."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream
        self.counts: Counter[str] = Counter()

    def skip(self, url: str, reason: str, parent: str | None, depth: int) -> None:
        self.counts[reason] += 1
        if self._stream is not None:
            self._stream.write(json.dumps({"url": url, "reason": reason, "parent": parent,
                                           "depth": depth}, ensure_ascii=False) + "\n")

    def describe(self) -> str:
        """``skipped 12 (out_of_scope 9, robots 3)``, or an empty string."""
        total = sum(self.counts.values())
        if not total:
            return ""
        parts = ", ".join(f"{reason} {count}" for reason, count in self.counts.most_common())
        return f"skipped {total} ({parts})"

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

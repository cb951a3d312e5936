"""The progress bar on stderr, and summaries of several shards added into one."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable

from pipeline.batch.engine import Summary
from pipeline.core.models import Record


class ProgressBar:
    """A tqdm bar on stderr — only when ``enabled`` (a terminal, no --quiet)."""

    def __init__(self, total: int | None, enabled: bool) -> None:
        self._bar = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="url", file=sys.stderr, dynamic_ncols=True,
                             smoothing=0.1)

    def update(self, record: Record, summary: Summary) -> None:
        """The engine's ``on_record``: one more record."""
        self.advance(1, summary)

    def advance(self, records: int, summary: Summary) -> None:
        if self._bar is not None:
            filtered = f" filtered={summary.filtered}" if summary.filtered else ""
            self._bar.set_postfix_str(
                f"ok={summary.ok} errors={summary.failures}{filtered}", refresh=False
            )
            self._bar.update(records)

    def shrink(self, records: int) -> None:
        """``records`` of the total turned out to be done already (a resumed shard)."""
        if self._bar is not None and self._bar.total is not None:
            self._bar.total = max(0, self._bar.total - records)
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def combine(summaries: Iterable[Summary], started: float) -> Summary:
    """The shards' summaries as one run's, timed from ``started`` (``time.monotonic``)."""
    total = Summary(started=started)
    for summary in summaries:
        total.absorb(summary)
    total.elapsed = time.monotonic() - started
    return total

"""The shared retry policy (fetching and provider calls): which failures are transient, how
long to wait (exponential backoff with full jitter, or the server's ``Retry-After`` up to a
cap), parsed defensively.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from tenacity import RetryCallState
from tenacity.wait import wait_base

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def parse_retry_after(
    value: str | None, *, cap: float, now: datetime | None = None
) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date).

    Garbage gives None; negative, past or absurd values are clamped into ``[0, cap]``.
    """
    if value is None:
        return None
    value = value.strip()
    if not value or len(value) > 64:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), cap)


class RetryAfterHint(Exception):
    """Mixin-style marker: an exception carrying ``retry_after`` seconds (or None)."""

    retry_after: float | None = None


def retry_delay(exc: BaseException | None, attempt: int, *, initial: float = 0.5,
                maximum: float = 8.0) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based): what the server
    asked for (``exc.retry_after``), else full-jitter exponential backoff up to ``maximum``."""
    hinted = getattr(exc, "retry_after", None)
    if isinstance(hinted, (int, float)) and hinted >= 0:
        return float(hinted)
    return random.uniform(0, min(maximum, initial * 2 ** min(attempt - 1, 62)))


class wait_retry_after_or_backoff(wait_base):
    """:func:`retry_delay` as a tenacity wait strategy."""

    def __init__(self, initial: float = 0.5, maximum: float = 8.0) -> None:
        self._initial = initial
        self._maximum = maximum

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        return retry_delay(exc, retry_state.attempt_number, initial=self._initial,
                           maximum=self._maximum)

"""The shared retry policy: Retry-After parsing (defensive) and the wait it feeds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from tenacity import RetryCallState

from pipeline.fetch import FetchError
from pipeline.fetch.retry import RETRYABLE_STATUSES, parse_retry_after, wait_retry_after_or_backoff

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("value, expected", [
    ("3", 3.0), (" 7 ", 7.0), ("0", 0.0), ("-5", 0.0), ("99999999", 30.0), ("1e308", 30.0),
    (format_datetime(NOW + timedelta(seconds=12), usegmt=True), 12.0),
    (format_datetime(NOW - timedelta(days=1), usegmt=True), 0.0),
    (format_datetime(NOW + timedelta(days=400), usegmt=True), 30.0),
    (None, None), ("", None), ("soon", None), ("nan", None), ("1" * 100, None),
    ("Mon, 99 Foo 2026 99:99:99 GMT", None),
])
def test_parse_retry_after(value, expected):
    assert parse_retry_after(value, cap=30.0, now=NOW) == expected


def test_retryable_statuses():
    assert {408, 429, 500, 502, 503, 504} == RETRYABLE_STATUSES
    assert 404 not in RETRYABLE_STATUSES and 501 not in RETRYABLE_STATUSES


def _state_after(exc: BaseException, attempt: int) -> RetryCallState:
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_wait_prefers_the_servers_hint():
    error = FetchError("http_status", "HTTP 429", status=429)
    error.retry_after = 4.0
    assert wait_retry_after_or_backoff()(_state_after(error, 1)) == 4.0


def test_wait_without_hint_is_full_jitter_backoff_within_bounds():
    wait = wait_retry_after_or_backoff(initial=0.5, maximum=8.0)
    error = FetchError("network", "reset")
    delays = [wait(_state_after(error, attempt)) for attempt in range(1, 8) for _ in range(20)]
    assert all(0 <= delay <= 8.0 for delay in delays)
    assert len(set(delays)) > 1  # jittered, not a fixed schedule

"""The outcome invariant of the public models: ``error`` is set exactly when ``ok`` is false,
and an ok record has content. Checked on construction, so ``failed_with`` needs no None
check at the call site."""

import json

import pytest
from pydantic import ValidationError

from pipeline import ErrorInfo, ExtractResponse, Record, SearchResponse

ERROR = ErrorInfo(kind="timeout", message="30 s", retryable=True)


def test_failed_record_without_error_is_refused():
    with pytest.raises(ValidationError, match="a failed record carries an error"):
        Record(url="https://a.test/", ok=False)
    with pytest.raises(ValidationError, match="a failed record carries an error"):
        Record(url="https://a.test/")  # ok defaults to false


def test_ok_record_with_error_is_refused():
    with pytest.raises(ValidationError, match="an ok record carries no error"):
        Record(url="https://a.test/", ok=True, content="text", error=ERROR)


def test_ok_record_without_content_is_refused():
    with pytest.raises(ValidationError, match="an ok record carries content"):
        Record(url="https://a.test/", ok=True)


def test_failed_with_reads_the_error_of_a_failed_record_only():
    failed = Record.failure("https://a.test/", ERROR, index=3)
    assert failed.failed_with is ERROR
    ok = Record(url="https://a.test/", ok=True, content="")
    with pytest.raises(ValueError, match="check ok first"):
        ok.failed_with  # noqa: B018 - the property raises


def test_record_json_line_is_unchanged_by_the_check():
    failed = Record.failure("https://a.test/", ERROR, index=3)
    line = json.loads(failed.to_json())
    assert list(line) == [
        "url", "index", "ok", "final_url", "status", "content_type", "handler", "title",
        "content", "format", "metadata", "truncated", "next_offset", "compressed", "chars",
        "bytes", "attempts", "elapsed_ms", "cache", "rendered", "input", "source", "duplicate_of",
        "error"]
    assert line["ok"] is False and line["error"] == {"kind": "timeout", "message": "30 s",
                                                     "retryable": True}
    assert Record.model_validate_json(failed.to_json()) == failed


def test_a_json_line_breaking_the_invariant_is_refused():
    line = Record(url="https://a.test/", ok=True, content="x").model_dump()
    line["ok"] = False
    with pytest.raises(ValidationError):
        Record.model_validate(line)


@pytest.mark.parametrize("make", [
    lambda **kw: SearchResponse(query="q", **kw),
    lambda **kw: ExtractResponse(**kw),
], ids=["search", "extract"])
def test_responses_carry_an_error_exactly_when_failed(make):
    with pytest.raises(ValidationError, match="carries an error"):
        make(ok=False)
    with pytest.raises(ValidationError, match="carries no error"):
        make(ok=True, error=ERROR)
    failed = make(ok=False, error=ERROR)
    assert failed.failed_with is ERROR
    with pytest.raises(ValueError, match="check ok first"):
        make(ok=True).failed_with  # noqa: B018 - the property raises

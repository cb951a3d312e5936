"""The text and JSON handlers, and how the registry picks them."""

from __future__ import annotations

import json

import pytest

from handlers import HandlerContext, default_registry
from handlers.json import MAX_DEPTH
from handlers.json import handler as json_handler
from handlers.text import handler as text_handler
from pipeline.core.errors import PipelineError


def ctx(media_type, format="markdown", charset=None):
    return HandlerContext(url="http://example.test/", media_type=media_type, format=format,
                          charset=charset)


@pytest.mark.parametrize(
    ("media_type", "body", "expected"),
    [
        ("text/plain", b"hello", "text"),
        ("text/csv", b"a,b\n1,2\n", "text"),
        ("text/markdown", b"# T\n", "text"),
        ("application/json", b'{"a": 1}', "json"),
        ("application/ld+json", b'{"@context": "x"}', "json"),
        ("text/json", b"[1, 2]", "json"),
        (None, b'{"a": [1, 2, 3]}', "json"),
        ("application/octet-stream", b"just some words\n", "text"),
        ("text/plain", b"[1, 2, 3]", "text"),  # the label holds: the bytes do not contradict it
    ],
)
def test_registry_selection(media_type, body, expected):
    assert default_registry().select(media_type, body[:1024]).name == expected


def test_binary_bytes_are_not_text():
    assert not text_handler.sniff(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert not text_handler.sniff(b"<!DOCTYPE html><html><p>hi</p>")
    with pytest.raises(PipelineError) as caught:
        default_registry().select("image/png", b"\x89PNG\r\n\x1a\n\x00\x00")
    assert caught.value.kind == "unsupported_type"
    with pytest.raises(PipelineError) as caught:
        text_handler.handle(b"\x00\x01\x02\x03" * 100, ctx("text/plain"))
    assert caught.value.kind == "decode"


def test_text_is_decoded_cleaned_and_titled_from_markdown():
    body = "# Café notes\r\n\r\nLine\x00 two\n".encode("cp1252")
    doc = text_handler.handle(body, ctx("text/markdown", charset="windows-1252"))
    assert doc.title == "Café notes"
    assert doc.content == "# Café notes\n\nLine two"
    assert text_handler.handle(b"plain", ctx("text/plain")).title is None


def test_json_is_pretty_printed_in_a_fence_for_markdown_only():
    body = b'{"title": "T", "items": [1, {"b": null}]}'
    markdown = json_handler.handle(body, ctx("application/json"))
    pretty = json.dumps(json.loads(body), indent=2)
    assert markdown.content == f"```json\n{pretty}\n```" and markdown.title == "T"
    assert json_handler.handle(body, ctx("application/json", format="text")).content == pretty


@pytest.mark.parametrize("body", [b'{"a": }', b"[1, 2", b"", b'{"a": 1} trailing'])
def test_malformed_json_is_a_decode_error(body):
    with pytest.raises(PipelineError) as caught:
        json_handler.handle(body, ctx("application/json"))
    assert caught.value.kind == "decode"


def test_json_depth_guard():
    fine = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert json_handler.handle(fine, ctx("application/json")).content
    for depth in (MAX_DEPTH + 1, 100_000):  # the second would blow the parser's recursion
        with pytest.raises(PipelineError, match="nested deeper") as caught:
            json_handler.handle(b"[" * depth + b"]" * depth, ctx("application/json"))
        assert caught.value.kind == "decode"


def test_json_sniff_accepts_a_long_document_cut_by_the_window():
    body = json.dumps([{"key": "value " * 50}] * 20).encode()
    assert json_handler.sniff(body[:1024])
    assert not json_handler.sniff(b"[citation needed] is a phrase")
    assert not json_handler.sniff(b"plain words")


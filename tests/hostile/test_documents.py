"""Pathological HTML straight into the HTML handler: nesting must cost linear time and never
exhaust the stack (in batch mode either would only cost a worker; in the library, a thread)."""

from __future__ import annotations

import pytest

from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext


def _handle(body: bytes, format: str = "markdown"):
    ctx = HandlerContext(url="http://x.test/", final_url="http://x.test/",
                         media_type="text/html", charset=None, format=format, options={})
    return HTML_HANDLER.handle(body, ctx)


@pytest.mark.parametrize("format", ["markdown", "text"])
def test_nested_tables_render_once(format):
    # each table's rows used to be rendered again by every enclosing table: 2^depth work
    body = b"<html><body>" + b"<table><tr><td>cell words here " * 40 + b"</body></html>"
    doc = _handle(body, format)
    assert doc.content.count("cell words here") == 40


@pytest.mark.parametrize("tag", [b"blockquote", b"em", b"ul><li", b"div", b"a href=/x"])
def test_deep_nesting_keeps_the_words(tag):
    body = (b"<html><body><article>" + b"<%s>deep words " % tag * 3000
            + b"</article></body></html>")
    doc = _handle(body)
    assert doc.content.count("deep words") >= 100  # the parser itself stops at depth 256

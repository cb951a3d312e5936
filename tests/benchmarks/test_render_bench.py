"""benchmarks/render.py builds its JS-app pages right: the body hidden from a fetcher, kept
whole for the browser, and ``--render auto`` would render both kinds (no browser needed)."""

import json

import pytest

from benchmarks.render import variants
from handlers import HandlerContext, registry_for
from pipeline.browser.shells import render_reason
from pipeline.core.errors import PipelineError

PAGE = (b"<!doctype html><html><head><title>Tides</title><script src='/a.js'></script>"
        b"<link rel=stylesheet href='/s.css'><style>p{}</style></head><body><article><p>"
        + b"The tide comes in twice a day. " * 40 + b"</p><img src='/i.png'></article>"
        b"<script>track()</script></body></html>")


def test_versions_strip_what_cannot_load_and_move_the_body():
    found = variants(PAGE, "abc")
    assert found is not None
    static, app, island, data = found["s"], found["a"], found["i"], found["d"]
    for kind in (static, app, island):
        assert b"<script src" not in kind and b"<link" not in kind and b"<img" not in kind
    assert static.count(b"The tide comes in") == 40
    assert b"The tide" not in app and b"/d/abc" in app
    assert json.loads(data)["html"].count("The tide comes in") == 40
    assert json.loads(island.split(b'type="application/json">')[1].split(b"</script>")[0]
                      )["html"].count("The tide comes in") == 40
    assert variants(b"<html>no body</html>", "x") is None


@pytest.mark.parametrize("kind", ["a", "i"])
def test_auto_would_render_both_js_app_versions(kind):
    body = variants(PAGE, "abc")[kind]
    handler = registry_for(()).select("text/html", body[:1024])
    try:
        content = handler.handle(body, HandlerContext(url="http://127.0.0.1/",
                                                      media_type="text/html")).content
    except PipelineError as exc:
        assert render_reason(body, error=exc) is not None
    else:
        assert render_reason(body, content_chars=len(content)) is not None

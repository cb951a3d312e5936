"""A long-lived caller (the MCP server's ``SharedRuntime``) keeps one browser for its life:
calls that render share it, whether the server or the call chose to render."""

from __future__ import annotations

from pipeline.agent.kernel import web_extract
from pipeline.agent.runtime import SharedRuntime
from pipeline.core.settings import Settings
from tests.support.pages import html_site, serve

SHELL = """<html><head><title>Shell</title></head><body><div id="root"></div><script>
setTimeout(() => { document.getElementById('root').innerHTML =
  '<article><h1>Herons</h1><p>' + 'Herons wait in the shallows for fish. '.repeat(30) +
  '</p></article>'; }, 50);
</script></body></html>"""


async def test_calls_that_render_share_one_browser(chromium):
    settings = Settings(allow_net=["127.0.0.1/32"], render="never", cache=False, head=False,
                        rate=1000, timeout=30, render_wait=5.0)
    async with serve(html_site(SHELL)) as base, SharedRuntime(settings) as shared:
        assert shared.renderer is not None and shared.renderer.launches == 0  # none yet
        answers = [await web_extract([f"{base}/a{n}", f"{base}/b{n}"], render="always",
                                     settings=settings, registry=shared.registry)
                   for n in range(3)]
        plain = await web_extract(f"{base}/plain", settings=settings, registry=shared.registry)
        launches = shared.renderer.launches
    for answer in answers:
        assert answer.ok and [r.rendered for r in answer.records] == [True, True]
        assert all("shallows" in r.content for r in answer.records)
    assert plain.records[0].rendered is False  # the server's default: never
    assert launches == 1

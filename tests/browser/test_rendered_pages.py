"""Pages rendered by a real headless Chromium against loopback servers, through the whole
extract path (fetch → auto's choice → render → handler → record). One browser serves every
test here (the ``shared_renderer`` fixture)."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web

from pipeline.browser.renderer import Source
from pipeline.core.settings import Settings
from pipeline.extract.native import NativeExtractor
from pipeline.fetch.client import HttpFetcher
from pipeline.fetch.credentials import CredentialScope
from tests.browser.conftest import ALLOWED, BLOCKED, ConnectionCounter, render_settings, serve
from tests.support.resolvers import FakeResolver

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(120)]

ARTICLE = "".join(f"<p>Paragraph {i} of the rendered story tells the reader something new "
                  "about the harbour, the tides and the boats that wait for them.</p>"
                  for i in range(8))
SENTENCE = "Paragraph 5 of the rendered story"
SHELL = """<!doctype html><html><head><title>App</title></head>
<body><div id="root"></div><script>{script}</script></body></html>"""


def shell(script: str) -> str:
    return SHELL.replace("{script}", script)


def app_of(pages: dict[str, str | bytes], **answers: web.Response) -> web.Application:
    """Pages by path (HTML), plus ready answers (JSON, redirects) by path."""
    app = web.Application()
    for path, body in pages.items():
        async def page(request: web.Request, body: str | bytes = body) -> web.Response:
            return web.Response(body=body if isinstance(body, bytes) else body.encode(),
                                content_type="text/html")

        app.router.add_get(path, page)
    for path, answer in answers.items():
        async def reply(request: web.Request, answer: web.Response = answer) -> web.Response:
            return web.Response(body=answer.body, status=answer.status,
                                headers=answer.headers)

        app.router.add_get("/" + path, reply)
    return app


async def extract(renderer, settings: Settings, url: str, resolver: FakeResolver | None = None):
    renderer.settings = settings
    async with HttpFetcher(settings, resolver=resolver) as fetcher, NativeExtractor(
            settings, fetcher=fetcher, renderer=renderer) as extractor:
        return await extractor.extract_one(url)


async def extract_shell(using, script: str):
    """The record of an app shell running ``script``, with ``--render auto``."""
    settings = render_settings()
    async with serve(app_of({"/": shell(script)})) as port:
        return await extract(using(settings), settings, f"http://{ALLOWED}:{port}/")


async def test_auto_renders_content_a_timer_inserts(using):
    record = await extract_shell(using, "setTimeout(() => { document.getElementById('root')"
                                 f".innerHTML = {json.dumps(ARTICLE)}; }}, 400);")
    assert record.ok, record.error
    assert record.rendered is True
    assert SENTENCE in record.content


async def test_auto_renders_content_from_a_fetch(using):
    settings = render_settings()
    page = shell("fetch('/api/story').then(r => r.json()).then(d => "
                 "{ document.getElementById('root').innerHTML = d.html; });")
    data = web.json_response({"html": ARTICLE})
    async with serve(app_of({"/": page}, **{"api/story": data})) as port:
        record = await extract(using(settings), settings, f"http://{ALLOWED}:{port}/")
    assert record.ok, record.error
    assert record.rendered and SENTENCE in record.content
    assert record.bytes > len(page)  # the fetch's answer counts too


async def test_auto_renders_a_data_island(using):
    settings = render_settings()
    island = json.dumps({"props": {"html": ARTICLE}}).replace("</", "<\\/")
    page = ("<!doctype html><html><head><title>Island</title></head><body><div id=app></div>"
            f'<script id="__NEXT_DATA__" type="application/json">{island}</script>'
            "<script>const d = JSON.parse(document.getElementById('__NEXT_DATA__')"
            ".textContent); document.getElementById('app').innerHTML = d.props.html;</script>"
            "</body></html>")
    async with serve(app_of({"/": page})) as port:
        record = await extract(using(settings), settings, f"http://{ALLOWED}:{port}/")
    assert record.ok, record.error
    assert record.rendered and SENTENCE in record.content


async def test_a_page_that_never_settles_is_read_at_the_cap(using):
    settings = render_settings(render_wait=1.5)
    page = shell(f"document.getElementById('root').innerHTML = {json.dumps(ARTICLE)};"
                 "let n = 0; setInterval(() => { document.title = 'tick ' + (++n); "
                 "document.body.append(document.createElement('i')); }, 20);")
    async with serve(app_of({"/": page})) as port:
        renderer = using(settings)
        url = f"http://{ALLOWED}:{port}/"
        rendered = await renderer.render(Source(url, url, page.encode(), "text/html", "utf-8"),
                                         budget_seconds=15)
        record = await extract(renderer, settings.model_copy(update={"render": "always"}), url)
    assert rendered.settled is False
    assert SENTENCE.encode() in rendered.html
    assert record.ok and record.rendered and SENTENCE in record.content


async def test_a_page_whose_document_never_finishes_loading_is_read_at_the_cap(using):
    settings = render_settings(render_wait=1.5)
    stop = asyncio.Event()

    async def never(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await stop.wait()  # the script never arrives: the parser waits for it
        return response

    page = (f"<!doctype html><html><body><article>{ARTICLE}</article>"
            "<script src='/never.js'></script><p>after the script</p></body></html>")
    app = app_of({"/": page})
    app.router.add_get("/never.js", never)
    async with serve(app) as port:
        url = f"http://{ALLOWED}:{port}/"
        rendered = await using(settings).render(
            Source(url, url, page.encode(), "text/html", "utf-8"), budget_seconds=15)
        stop.set()
    assert rendered.settled is False
    assert SENTENCE.encode() in rendered.html
    assert b"after the script" not in rendered.html  # still waiting on the script when read


async def test_a_dialog_is_dismissed_and_the_page_goes_on(using):
    record = await extract_shell(using, "alert('hello'); confirm('sure?'); document."
                                 f"getElementById('root').innerHTML = {json.dumps(ARTICLE)};")
    assert record.ok and record.rendered and SENTENCE in record.content


async def test_a_page_that_downloads_more_than_the_cap_is_too_large(using):
    settings = render_settings(render_max_bytes=300_000)
    page = shell("fetch('/api/huge').then(r => r.text()).then(t => "
                 "{ document.getElementById('root').textContent = t.slice(0, 100); });")
    huge = web.Response(body=b"z" * 2_000_000, content_type="text/plain")
    async with serve(app_of({"/": page}, **{"api/huge": huge})) as port:
        record = await extract(using(settings), settings, f"http://{ALLOWED}:{port}/")
    assert not record.ok
    assert record.failed_with.kind == "too_large"
    assert "300000" in record.failed_with.message


async def test_the_policy_page_reaches_the_blocked_port_zero_times(using):
    """A redirect to a blocked port, a WebSocket, a worker's fetch, a preconnect, an image,
    a page fetch and a form post: every one is tried, none connects."""
    settings = render_settings(render="always")
    async with ConnectionCounter() as blocked:
        target = f"http://{BLOCKED}:{blocked.port}"
        page = f"""<!doctype html><html><head><title>Policy</title>
<link rel=preconnect href="{target}"><link rel=dns-prefetch href="{target}">
<link rel=stylesheet href="/to-blocked?what=css"></head>
<body><article>{ARTICLE}</article><img src="{target}/image.png">
<script src="/to-blocked?what=script"></script>
<iframe name=sink></iframe>
<form id=f method=post action="{target}/form" target=sink><input name=a value=b></form>
<script>
fetch("{target}/fetch").catch(() => 0);
try {{ new WebSocket("ws://{BLOCKED}:{blocked.port}/socket"); }} catch (e) {{}}
new Worker(URL.createObjectURL(new Blob(['fetch("{target}/worker").catch(() => 0)'])));
document.getElementById('f').submit();
</script></body></html>"""
        to_blocked = web.Response(status=302, headers={"Location": f"{target}/redirected"})
        async with serve(app_of({"/": page}, **{"to-blocked": to_blocked})) as port:
            renderer = using(settings)
            url = f"http://{ALLOWED}:{port}/"
            rendered = await renderer.render(
                Source(url, url, page.encode(), "text/html", "utf-8"), budget_seconds=15)
    assert blocked.connections == 0
    # every kind of request was made and refused at the proxy (the redirect hops were
    # followed to it): the preconnect and the image may be refused before the proxy
    assert rendered.refused >= 5
    assert SENTENCE.encode() in rendered.html


async def test_auto_leaves_static_pages_and_challenges_alone(using):
    settings = render_settings()
    article = f"<!doctype html><html><head><title>Static</title></head><body>{ARTICLE}</body>"
    challenge = ("<!doctype html><html><head><title>Just a moment...</title></head><body>"
                 "<div class='cf-browser-verification'>Checking your browser</div>"
                 "<script>var x = 1;</script></body></html>")
    pages = {"/static": article, "/challenge": challenge}
    json_body = web.json_response({"a": 1})
    async with serve(app_of(pages, **{"data.json": json_body})) as port:
        renderer = using(settings)
        static = await extract(renderer, settings, f"http://{ALLOWED}:{port}/static")
        wall = await extract(renderer, settings, f"http://{ALLOWED}:{port}/challenge")
        always = settings.model_copy(update={"render": "always"})
        data = await extract(renderer, always, f"http://{ALLOWED}:{port}/data.json")
        rendered_static = await extract(renderer, always, f"http://{ALLOWED}:{port}/static")
    assert static.ok and static.rendered is False
    assert not wall.ok and wall.failed_with.kind == "challenge" and wall.rendered is False
    assert data.ok and data.rendered is False  # never JSON, even with always
    assert rendered_static.ok and rendered_static.rendered is True
    assert SENTENCE in rendered_static.content


@pytest.mark.parametrize("named", [True, False], ids=["named origin", "discovered URL"])
async def test_cookies_go_to_the_pages_host_only_and_authorization_never(using, tmp_path,
                                                                        monkeypatch, named):
    cookies = tmp_path / "cookies.txt"
    cookies.write_text(".site.test\tTRUE\t/\tFALSE\t0\tsession\tsecret-cookie\n")
    settings = render_settings(render="always", cookie_file=str(cookies),
                               headers={"Authorization": "Bearer secret-token"})
    seen: list[tuple[str, str, str]] = []

    async def recorder(request: web.Request) -> web.Response:
        seen.append((request.host.split(":")[0], request.headers.get("Cookie", ""),
                     request.headers.get("Authorization", "")))
        return web.Response(text="ok", content_type="text/plain",
                            headers={"Access-Control-Allow-Origin": "*"})

    cdn = web.Application()
    cdn.router.add_get("/lib.js", recorder)
    async with serve(cdn, "127.0.0.3") as cdn_port:
        page = shell(f"fetch('/api').then(r => r.text()).then(t => "
                     f"{{ document.getElementById('root').innerHTML = {json.dumps(ARTICLE)}; }});")
        page = page.replace("<body>", f"<body><script src='http://cdn.site.test:{cdn_port}"
                                      "/lib.js'></script>")
        own = app_of({"/": page})
        own.router.add_get("/api", recorder)
        async with serve(own) as own_port:
            url = f"http://site.test:{own_port}/"
            # the URL's origin named by the user, or only another one (a URL a sitemap chose)
            scope = CredentialScope.of([], [url if named else "http://elsewhere.test/"])
            renderer = using(settings)
            monkeypatch.setattr(renderer, "credential_scope", scope)
            resolver = FakeResolver({"site.test": [ALLOWED], "cdn.site.test": ["127.0.0.3"]})
            record = await extract(renderer, settings, url, resolver)
    assert record.ok and record.rendered, record.error
    by_host = {host: (cookie, auth) for host, cookie, auth in seen}
    assert by_host["site.test"] == ("session=secret-cookie" if named else "", "")
    assert by_host["cdn.site.test"] == ("", "")


@pytest.mark.parametrize("max_redirects", [10, 0])
async def test_navigations_the_page_starts_wait_for_their_hosts_slot(using, monkeypatch,
                                                                     max_redirects):
    settings = render_settings(render="always", max_redirects=max_redirects)
    first = shell("setTimeout(() => { location.href = '/next'; }, 50);")
    second = f"<!doctype html><html><body><article>{ARTICLE}</article></body></html>"
    renderer = using(settings)
    slots: list[str] = []
    real_slot = renderer.gate.slot

    def counting_slot(host, *args, **kwargs):
        slots.append(host)
        return real_slot(host, *args, **kwargs)

    monkeypatch.setattr(renderer.gate, "slot", counting_slot)
    async with serve(app_of({"/": first, "/next": second})) as port:
        url = f"http://{ALLOWED}:{port}/"
        rendered = await renderer.render(Source(url, url, first.encode(), "text/html",
                                                "utf-8"), budget_seconds=20)
    if max_redirects:
        assert slots == [f"{ALLOWED}:{port}"]  # the page's own navigation, paced
        assert rendered.final_url.endswith("/next") and SENTENCE.encode() in rendered.html
    else:  # no navigation allowed: the page stays where it was
        assert slots == []
        assert rendered.final_url == url and SENTENCE.encode() not in rendered.html

"""What a rendered page's record says, and what the browser may send: the policy for the
page's own navigations, their real status, and credentials exactly where the fetcher sends
them (issue 33, item 10 a, c, d). Real Chromium against loopback servers, one shared
browser (the ``shared_renderer`` fixture)."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from pipeline.fetch.credentials import CredentialScope
from tests.browser.conftest import ALLOWED, BLOCKED, ConnectionCounter, render_settings, serve
from tests.browser.test_rendered_pages import ARTICLE, SENTENCE, app_of, extract, shell

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(120)]


def going_to(path: str) -> str:
    """An app shell that sends itself to ``path`` once it has run."""
    return shell(f"document.getElementById('root').innerHTML = {json.dumps(ARTICLE)};"
                 f"setTimeout(() => {{ location.href = {json.dumps(path)}; }}, 50);")


@pytest.mark.parametrize("how", ["through an allowed 302", "straight"])
async def test_a_navigation_to_a_refused_address_is_a_blocked_record(using, how):
    settings = render_settings(render="always")
    async with ConnectionCounter() as blocked:
        target = f"http://{BLOCKED}:{blocked.port}/inside"
        hop = web.Response(status=302, headers={"Location": target})
        page = going_to("/hop" if how != "straight" else target)
        async with serve(app_of({"/": page}, hop=hop)) as port:
            record = await extract(using(settings), settings, f"http://{ALLOWED}:{port}/")
    assert blocked.connections == 0
    assert not record.ok and record.failed_with.kind == "blocked", record
    assert record.final_url == target
    assert "safety policy" not in (record.content or "")


async def test_a_navigation_keeps_the_status_of_the_page_it_reached(using):
    settings = render_settings(render="always")
    missing = web.Response(status=404, body=b"<html><body><p>No such page here.</p></body>"
                                            b"</html>", content_type="text/html")
    article = f"<!doctype html><html><body><article>{ARTICLE}</article></body></html>"
    async with serve(app_of({"/": going_to("/missing"), "/to-article": going_to("/article"),
                             "/article": article}, missing=missing)) as port:
        renderer = using(settings)
        gone = await extract(renderer, settings, f"http://{ALLOWED}:{port}/")
        found = await extract(renderer, settings, f"http://{ALLOWED}:{port}/to-article")
    # the fetcher's rule for a 404: an http_status failure with its status and address
    assert not gone.ok and gone.failed_with.kind == "http_status", gone
    assert gone.status == 404 and gone.final_url == f"http://{ALLOWED}:{port}/missing"
    assert found.ok and found.status == 200 and SENTENCE in found.content
    assert found.final_url == f"http://{ALLOWED}:{port}/article"


def recording(seen: list[tuple[int, str]], port_of: dict[str, int]) -> web.Application:
    """A server that records (its port, the Cookie header) of every request."""
    async def record(request: web.Request) -> web.Response:
        seen.append((port_of["port"], request.headers.get("Cookie", "")))
        return web.Response(text="var loaded = 1;", content_type="text/javascript",
                            headers={"Access-Control-Allow-Origin": "*"})

    app = web.Application()
    app.router.add_get("/{name:.*}", record)
    return app


async def cookie_run(using, tmp_path, monkeypatch, scope: str | None):
    """A page on one port of 127.0.0.1 that loads a script from, and fetches, another port,
    and shows ``document.cookie``; the user's cookie file is host-only for 127.0.0.1 (one
    cookie HttpOnly); ``scope``: a ``--credential-host`` naming the page's port (None: no
    scope, every URL is the user's). Its record and what the other port received."""
    cookies = tmp_path / "cookies.txt"
    cookies.write_text(f"{ALLOWED}\tFALSE\t/\tFALSE\t0\tshown\tvisible-value\n"
                       f"#HttpOnly_{ALLOWED}\tFALSE\t/\tFALSE\t0\thidden\tsecret-value\n")
    settings = render_settings(render="always", cookie_file=str(cookies))
    seen: list[tuple[int, str]] = []
    other: dict[str, int] = {}
    async with serve(recording(seen, other)) as other_port:
        other["port"] = other_port
        script = (f"document.getElementById('root').innerHTML = {json.dumps(ARTICLE)}"
                  " + '<p id=jar>' + document.cookie + '</p>';"
                  f"fetch('http://{ALLOWED}:{other_port}/api', {{credentials: 'include'}})"
                  ".catch(() => 0);")
        page = shell(script).replace(
            "<body>", f"<body><script src='http://{ALLOWED}:{other_port}/lib.js'></script>")
        async with serve(app_of({"/": page})) as own_port:
            renderer = using(settings)
            if scope is not None:  # the MCP server's --credential-host, with its port
                monkeypatch.setattr(renderer, "credential_scope",
                                    CredentialScope.of([scope.format(port=own_port)]))
            record = await extract(renderer, settings, f"http://{ALLOWED}:{own_port}/")
    assert record.ok and record.rendered, record.error
    return record, seen


@pytest.mark.parametrize("scope", [None, f"{ALLOWED}:{{port}}"],
                         ids=["every URL", "--credential-host with the port"])
async def test_a_host_only_cookie_goes_to_its_port_alone(using, tmp_path, monkeypatch, scope):
    record, seen = await cookie_run(using, tmp_path, monkeypatch, scope)
    assert len(seen) == 2 and all(cookie == "" for _, cookie in seen), seen
    assert "shown=visible-value" in record.content  # the page's own port has it


async def test_an_http_only_cookie_stays_hidden_from_page_scripts(using, tmp_path,
                                                                   monkeypatch):
    record, _ = await cookie_run(using, tmp_path, monkeypatch, None)
    assert "shown=visible-value" in record.content
    assert "secret-value" not in record.content

"""Conditional GETs: validators go to their URL only, a 304 is an answer, no HEAD first."""

from __future__ import annotations

import pytest
from aiohttp import web

from pipeline.fetch import FetchError, HttpFetcher
from pipeline.fetch.base import Validators

pytestmark = [pytest.mark.usefixtures("connect_log"), pytest.mark.patient]

ETAG = '"v1"'
MODIFIED = "Wed, 01 Jan 2025 00:00:00 GMT"


def conditional_app() -> tuple[web.Application, list[tuple[str, str, dict[str, str]]]]:
    """/page has an ETag and a Last-Modified and answers 304 when either matches; /moved
    redirects to /page; /plain has no validators and ignores conditional headers."""
    seen: list[tuple[str, str, dict[str, str]]] = []

    async def route(request: web.Request) -> web.StreamResponse:
        seen.append((request.method, request.path,
                     {k.lower(): v for k, v in request.headers.items()}))
        if request.path == "/moved":
            raise web.HTTPFound("/page")
        if request.path == "/plain":
            return web.Response(text="plain", content_type="text/plain")
        headers = {"ETag": ETAG, "Last-Modified": MODIFIED}
        if (request.headers.get("If-None-Match") == ETAG
                or request.headers.get("If-Modified-Since") == MODIFIED):
            return web.Response(status=304, headers=headers)
        return web.Response(text="the page", content_type="text/plain", headers=headers)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    return app, seen


async def test_validators_come_back_as_a_304_without_a_head(make_settings, app_server):
    app, seen = conditional_app()
    async with app_server(app) as base, HttpFetcher(make_settings()) as fetcher:
        first = await fetcher.fetch(base + "/page")
        checks = Validators.from_headers(first.final_url, first.headers)
        again = await fetcher.fetch(base + "/page", validators=checks)
    assert first.status == 200 and first.body == b"the page"
    assert checks == Validators(base + "/page", ETAG, MODIFIED)
    assert again.not_modified and again.body == b"" and again.final_url == base + "/page"
    assert [(method, path) for method, path, _ in seen] == [
        ("HEAD", "/page"), ("GET", "/page"), ("GET", "/page")]
    conditional = seen[2][2]
    assert conditional["if-none-match"] == ETAG
    assert conditional["if-modified-since"] == MODIFIED


async def test_last_modified_alone_is_enough(make_settings, app_server):
    app, seen = conditional_app()
    async with app_server(app) as base, HttpFetcher(make_settings(head=False)) as fetcher:
        result = await fetcher.fetch(base + "/page",
                                     validators=Validators(base + "/page", None, MODIFIED))
    assert result.not_modified
    assert "if-none-match" not in seen[0][2]


async def test_validators_go_to_their_own_url_only(make_settings, app_server):
    app, seen = conditional_app()
    async with app_server(app) as base, HttpFetcher(make_settings(head=False)) as fetcher:
        result = await fetcher.fetch(base + "/moved",
                                     validators=Validators(base + "/page", ETAG))
    assert result.not_modified and result.final_url == base + "/page"
    assert [path for _, path, _ in seen] == ["/moved", "/page"]
    assert "if-none-match" not in seen[0][2] and seen[1][2]["if-none-match"] == ETAG


async def test_a_server_that_ignores_them_sends_the_page(make_settings, app_server):
    app, _ = conditional_app()
    async with app_server(app) as base, HttpFetcher(make_settings(head=False)) as fetcher:
        result = await fetcher.fetch(base + "/plain",
                                     validators=Validators(base + "/plain", ETAG))
    assert result.status == 200 and result.body == b"plain"
    assert Validators.from_headers(result.final_url, result.headers) is None


def always_304_app() -> web.Application:
    async def always_304(request: web.Request) -> web.Response:
        return web.Response(status=304)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", always_304)
    return app


@pytest.mark.parametrize("validators", [None, Validators("{base}/page", ETAG)])
async def test_a_304_that_answers_no_validators_of_its_url_is_an_error(
        make_settings, app_server, validators):
    async with app_server(always_304_app()) as base, \
            HttpFetcher(make_settings(head=False)) as fetcher:
        if validators is not None:
            validators = Validators(validators.url.format(base=base), validators.etag)
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(base + "/other", validators=validators)
    assert (caught.value.kind, caught.value.status) == ("http_status", 304)

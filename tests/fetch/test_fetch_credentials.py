"""Extra headers, credentials and cookie files: sent where they belong, never across a
redirect to another host."""

from __future__ import annotations

import pytest
from aiohttp import web

from pipeline.fetch import HttpFetcher
from tests.fetch.test_fetch_resolver import FakeResolver

pytestmark = [pytest.mark.usefixtures("connect_log"), pytest.mark.patient]


def recording_app(name: str, seen: list[tuple[str, str, dict[str, str]]],
                  redirects: dict[str, str] | None = None) -> web.Application:
    """Records (server name, path, headers) of every GET; ``redirects`` maps a path to the
    Location it answers with a 302."""

    async def route(request: web.Request) -> web.Response:
        if request.method == "GET":
            seen.append((name, request.path, {k.lower(): v for k, v in request.headers.items()}))
        if redirects and request.path in redirects:
            raise web.HTTPFound(redirects[request.path])
        return web.Response(text=f"{name} {request.path}", content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", route)
    return app


def cookie_file(tmp_path, *lines: str):
    path = tmp_path / "cookies.txt"
    path.write_text("# Netscape HTTP Cookie File\n" + "\n".join(lines) + "\n")
    return str(path)


async def test_extra_headers_are_sent_and_replace_defaults(make_settings, app_server):
    seen: list = []
    async with app_server(recording_app("a", seen)) as base:
        settings = make_settings(headers=["X-Token: abc", "user-agent: my-crawler/2",
                                          "Accept-Language: fr, en;q=0.5"], head=False)
        async with HttpFetcher(settings) as fetcher:
            await fetcher.fetch(base + "/")
    headers = seen[0][2]
    assert headers["x-token"] == "abc"
    assert headers["accept-language"] == "fr, en;q=0.5"
    assert headers["user-agent"] == "my-crawler/2"


async def test_credentials_follow_a_redirect_on_the_same_host_only(
        make_settings, app_server, tmp_path):
    seen: list = []
    async with app_server(recording_app("second", seen)) as second:
        redirects = {"/start": "/again", "/again": second + "/landing"}
        async with app_server(recording_app("first", seen, redirects)) as first:
            cookies = cookie_file(tmp_path, "127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tsecret1")
            settings = make_settings(headers=["Authorization: Bearer T", "X-Plain: 1"],
                                     cookie_file=cookies, head=False)
            async with HttpFetcher(settings) as fetcher:
                result = await fetcher.fetch(first + "/start")
    assert result.final_url == second + "/landing"
    assert [(name, path) for name, path, _ in seen] == [
        ("first", "/start"), ("first", "/again"), ("second", "/landing")]
    for _, _, headers in seen[:2]:  # the first host: every hop gets them
        assert headers["authorization"] == "Bearer T" and headers["cookie"] == "sid=secret1"
    landing = seen[2][2]  # another port is another host: nothing but the plain header
    assert "authorization" not in landing and "cookie" not in landing
    assert landing["x-plain"] == "1"


async def test_a_cookie_is_dropped_on_a_redirect_to_another_host_name(
        make_settings, app_server, tmp_path):
    """first.test and other.test are two names for 127.0.0.1; the cookie file has a cookie
    for each, and neither crosses: the chain left first.test, so other.test gets none."""
    seen: list = []
    resolver = FakeResolver({"first.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    async with app_server(recording_app("server", seen)) as base:
        port = base.rsplit(":", 1)[1]
        async with app_server(recording_app("redirector", seen, {
                "/go": f"http://other.test:{port}/there"})) as redirector:
            start = redirector.replace("127.0.0.1", "first.test") + "/go"
            cookies = cookie_file(tmp_path,
                                  "first.test\tFALSE\t/\tFALSE\t0\tmine\t1",
                                  "other.test\tFALSE\t/\tFALSE\t0\ttheirs\t2")
            settings = make_settings(cookie_file=cookies, head=False,
                                     headers=["Cookie: extra=3"])
            async with HttpFetcher(settings, resolver=resolver) as fetcher:
                await fetcher.fetch(start)
                await fetcher.fetch(f"http://other.test:{port}/direct")
    first, crossed, direct = (headers for _, _, headers in seen)
    assert first["cookie"] == "extra=3; mine=1"
    assert "cookie" not in crossed
    assert direct["cookie"] == "extra=3; theirs=2"  # its own cookie, asked for directly


async def test_cookies_follow_their_domain_path_and_secure_flag(make_settings, app_server,
                                                                 tmp_path):
    seen: list = []
    resolver = FakeResolver({"www.example.test": ["127.0.0.1"], "example.test": ["127.0.0.1"],
                             "elsewhere.test": ["127.0.0.1"]})
    async with app_server(recording_app("s", seen)) as base:
        port = base.rsplit(":", 1)[1]
        cookies = cookie_file(
            tmp_path,
            ".example.test\tTRUE\t/\tFALSE\t0\tdomain\t1",
            "example.test\tFALSE\t/\tFALSE\t0\thostonly\t2",
            "#HttpOnly_example.test\tFALSE\t/docs\tFALSE\t0\tdocs\t3",
            "example.test\tFALSE\t/\tTRUE\t0\tsecure\t4",
            "example.test\tFALSE\t/\tFALSE\t1000\texpired\t5",
        )
        settings = make_settings(cookie_file=cookies, head=False)
        async with HttpFetcher(settings, resolver=resolver) as fetcher:
            for url in (f"http://example.test:{port}/docs/a", f"http://example.test:{port}/",
                        f"http://www.example.test:{port}/docs",
                        f"http://elsewhere.test:{port}/"):
                await fetcher.fetch(url)
    cookies_sent = [headers.get("cookie") for _, _, headers in seen]
    assert cookies_sent == ["docs=3; domain=1; hostonly=2", "domain=1; hostonly=2", "domain=1",
                            None]


async def test_no_cookie_jar_by_default(make_settings, app_server):
    seen: list = []

    async def set_cookie(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Cookie"))
        response = web.Response(text="hi")
        response.set_cookie("planted", "x")
        return response

    app = web.Application()
    app.router.add_get("/{tail:.*}", set_cookie)
    async with app_server(app) as base, HttpFetcher(make_settings(head=False)) as fetcher:
        await fetcher.fetch(base + "/1")
        await fetcher.fetch(base + "/2")
    assert seen == [None, None]


def test_the_credential_scope_holds_named_origins_and_given_hosts():
    from yarl import URL

    from pipeline.fetch.credentials import CredentialScope

    scope = CredentialScope.of(["Api.Test", "cdn.test:8443"], ["https://site.test/map.xml"])
    scope.name("not a url")  # names nothing
    allowed = ["https://site.test/page", "https://api.test/x", "http://api.test:81/x",
               "https://cdn.test:8443/x"]
    refused = ["http://site.test/page", "https://site.test:444/x", "https://cdn.test/x",
               "https://evil.test/x", "https://sub.site.test/x"]
    assert [scope.allows(URL(url)) for url in allowed] == [True] * len(allowed)
    assert [scope.allows(URL(url)) for url in refused] == [False] * len(refused)

"""Proxies: requests go through them, and the safety policy still holds (targets judged
before the request, the proxy's own address judged too)."""

from __future__ import annotations

import pytest
from aiohttp import web

from pipeline.core.errors import PipelineError
from pipeline.fetch import FetchError, HttpFetcher
from tests.fetch.test_fetch_resolver import FakeResolver
from tests.support.forward_proxy import forward_proxy

pytestmark = [pytest.mark.usefixtures("connect_log"), pytest.mark.patient]


def echo_app() -> web.Application:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=f"{request.host} {request.path}", content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", echo)
    return app


async def test_requests_go_through_the_proxy(make_settings, app_server):
    async with app_server(echo_app()) as base, forward_proxy() as proxy:
        settings = make_settings(proxy=proxy.url, head=False)
        async with HttpFetcher(settings) as fetcher:
            result = await fetcher.fetch(f"{base}/page")
    assert result.status == 200 and result.body.endswith(b" /page")
    assert [(s.method, s.target) for s in proxy.seen] == [("GET", f"{base}/page")]


async def test_a_name_goes_to_the_proxy_which_resolves_it(make_settings, app_server):
    """We judge site.test by our own lookup, then hand the name to the proxy."""
    resolver = FakeResolver({"site.test": ["127.0.0.1"]})
    async with app_server(echo_app()) as base, \
            forward_proxy(hosts={"site.test": "127.0.0.1"}) as proxy:
        url = base.replace("127.0.0.1", "site.test") + "/named"
        settings = make_settings(proxy=proxy.url, head=False)
        async with HttpFetcher(settings, resolver=resolver) as fetcher:
            result = await fetcher.fetch(url)
    assert result.body.startswith(b"site.test:") and result.body.endswith(b" /named")
    assert [s.target for s in proxy.seen] == [url]
    assert resolver.asked == ["site.test"]


@pytest.mark.parametrize("target, table, kind", [
    ("http://127.0.0.1:{port}/", {}, "blocked"),  # an IP literal the policy refuses
    ("http://intranet.test:{port}/", {"intranet.test": ["10.0.0.5"]}, "blocked"),
    ("http://meta.test/", {"meta.test": ["169.254.169.254"]}, "blocked"),
    ("http://nowhere.test/", {}, "network"),  # not resolvable here: refused, fail closed
])
async def test_a_target_the_policy_refuses_never_reaches_the_proxy(
        make_settings, app_server, target, table, kind):
    async with app_server(echo_app()) as base, forward_proxy(
            hosts={"intranet.test": "127.0.0.1", "meta.test": "127.0.0.1",
                   "nowhere.test": "127.0.0.1"}) as proxy:
        port = base.rsplit(":", 1)[1]
        # The proxy itself is allowed, its targets are judged by the default policy.
        settings = make_settings(proxy=proxy.url, allow_net=[], allow_proxy_net=["127.0.0.1"],
                                 head=False, retries=0)
        async with HttpFetcher(settings, resolver=FakeResolver(table)) as fetcher:
            with pytest.raises(FetchError) as caught:
                await fetcher.fetch(target.format(port=port))
    assert caught.value.kind == kind
    assert proxy.seen == []


async def test_a_redirect_to_a_refused_target_stops_before_the_proxy(make_settings, app_server):
    async def hop(request: web.Request) -> web.Response:
        raise web.HTTPFound("http://inside.test/admin")

    app = web.Application()
    app.router.add_get("/", hop)
    resolver = FakeResolver({"outside.test": ["127.0.0.1"], "inside.test": ["192.168.1.1"]})
    async with app_server(app) as base, forward_proxy(
            hosts={"outside.test": "127.0.0.1", "inside.test": "127.0.0.1"}) as proxy:
        url = base.replace("127.0.0.1", "outside.test") + "/"
        settings = make_settings(proxy=proxy.url, head=False, retries=0)
        async with HttpFetcher(settings, resolver=resolver) as fetcher:
            with pytest.raises(FetchError) as caught:
                await fetcher.fetch(url)
    assert caught.value.kind == "blocked" and "inside.test" in caught.value.message
    assert [s.target for s in proxy.seen] == [url]


async def test_the_proxy_address_must_pass_the_policy_or_be_allowed(make_settings):
    async with forward_proxy() as proxy:
        refused = make_settings(proxy=proxy.url, allow_net=[])
        with pytest.raises(PipelineError) as caught:
            async with HttpFetcher(refused):
                pass
        assert caught.value.kind == "config" and "--allow-proxy-net" in caught.value.message
        metadata = make_settings(proxy="http://169.254.169.254:80",
                                 allow_proxy_net=["169.254.0.0/16"])
        with pytest.raises(PipelineError):
            async with HttpFetcher(metadata):
                pass


async def test_a_proxy_name_is_judged_when_the_connector_resolves_it(make_settings, app_server):
    resolver = FakeResolver({"proxy.test": ["127.0.0.1"]})
    async with app_server(echo_app()) as base, forward_proxy() as proxy:
        named = proxy.url.replace("127.0.0.1", "proxy.test")
        settings = make_settings(proxy=named, allow_net=["127.0.0.1/32"], head=False)
        async with HttpFetcher(settings, resolver=resolver) as fetcher:
            await fetcher.fetch(base + "/a")
        # the same name, now answering a private address the policy refuses
        resolver.table["proxy.test"] = ["10.1.2.3"]
        with pytest.raises(PipelineError) as caught:
            async with HttpFetcher(settings, resolver=resolver):
                pass
    assert "10.1.2.3" in caught.value.message
    assert [s.target for s in proxy.seen] == [base + "/a"]


async def test_proxy_credentials_reach_the_proxy_only(make_settings, app_server):
    seen_headers: list[dict] = []

    async def page(request: web.Request) -> web.Response:
        seen_headers.append(dict(request.headers))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", page)
    async with app_server(app) as base, forward_proxy() as proxy:
        with_user = proxy.url.replace("://", "://user:s%3Acret@")
        settings = make_settings(proxy=with_user, head=False)
        async with HttpFetcher(settings) as fetcher:
            await fetcher.fetch(base + "/")
    assert proxy.seen[0].headers["proxy-authorization"] == "Basic dXNlcjpzOmNyZXQ="
    assert not any(k.lower() == "proxy-authorization" for k in seen_headers[0])


async def test_trust_env_uses_http_proxy_and_no_proxy(make_settings, app_server, monkeypatch):
    async with app_server(echo_app()) as base, forward_proxy() as proxy:
        for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "HTTPS_PROXY",
                     "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        async with HttpFetcher(make_settings(head=False)) as fetcher:  # not trusted: direct
            await fetcher.fetch(base + "/direct")
        async with HttpFetcher(make_settings(head=False, trust_env=True)) as fetcher:
            await fetcher.fetch(base + "/proxied")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        async with HttpFetcher(make_settings(head=False, trust_env=True)) as fetcher:
            await fetcher.fetch(base + "/bypassed")
    assert [s.target for s in proxy.seen] == [base + "/proxied"]


async def test_socks5_proxy(make_settings, app_server):
    pytest.importorskip("aiohttp_socks", reason="the socks extra is not installed")
    resolver = FakeResolver({"site.test": ["127.0.0.1"], "private.test": ["10.0.0.1"]})
    async with app_server(echo_app()) as base, forward_proxy(
            "socks5", hosts={"site.test": "127.0.0.1", "private.test": "127.0.0.1"}) as proxy:
        port = base.rsplit(":", 1)[1]
        settings = make_settings(proxy=proxy.url, head=False, retries=0)
        async with HttpFetcher(settings, resolver=resolver) as fetcher:
            result = await fetcher.fetch(f"http://site.test:{port}/s")
            with pytest.raises(FetchError) as caught:
                await fetcher.fetch(f"http://private.test:{port}/s")
    assert result.body.endswith(b" /s")
    assert caught.value.kind == "blocked"
    assert [s.target for s in proxy.seen] == [f"site.test:{port}"]  # the proxy resolves it


async def test_proxy_failures_are_network_errors_naming_the_proxy(make_settings, app_server):
    async with forward_proxy() as proxy:
        closed = proxy.url  # stopped below: nothing listens there any more
    async with app_server(echo_app()) as base:
        settings = make_settings(proxy=closed, head=False, retries=0)
        async with HttpFetcher(settings) as fetcher:
            with pytest.raises(FetchError) as caught:
                await fetcher.fetch(base + "/")
    assert caught.value.kind == "network" and "proxy" in caught.value.message


async def test_a_socks_proxy_refusing_the_target_is_a_network_error(make_settings, app_server):
    pytest.importorskip("aiohttp_socks", reason="the socks extra is not installed")
    async with app_server(echo_app()) as base, forward_proxy("socks5", hosts={}) as proxy:
        resolver = FakeResolver({"unknown.test": ["127.0.0.1"]})
        url = base.replace("127.0.0.1", "unknown.test")
        settings = make_settings(proxy=proxy.url, head=False, retries=0)
        async with HttpFetcher(settings, resolver=resolver) as fetcher:
            with pytest.raises(FetchError) as caught:
                await fetcher.fetch(url)
    assert caught.value.kind == "network" and "socks proxy" in caught.value.message

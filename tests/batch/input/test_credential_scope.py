"""Credentials go only where the user sent the run: a sitemap on one loopback port lists
pages (and a child sitemap) on another port, whose server logs every request's headers.
Its author, not the user, chose that port: it gets no Authorization, Cookie, cookie-file
cookie or marked header — by HEAD or GET, in a plain or a sharded run — unless the user
names it (``--credential-host``, or a URL of the list)."""

from __future__ import annotations

import contextlib

import pytest
from aiohttp import web

from tests.batch.input.sitemap_site import index, urlset
from tests.cli.test_end_to_end import run_cli
from tests.support.pages import serve
from tests.support.records import read_records

SECRETS = ("authorization", "cookie", "x-api-key")
FLAGS = ["--header", "Authorization: Bearer SECRET", "--header", "X-Api-Key: KEY",
         "--credential-header", "X-Api-Key", "--allow-net", "127.0.0.1/32", "--rate", "1000",
         "--workers", "1", "--retries", "0", "--quiet"]


def logging_site(log: list[tuple[str, str, dict[str, str]]], documents: dict[str, bytes],
                 redirects: dict[str, str] | None = None) -> web.Application:
    """Serves ``documents`` (XML), ``redirects`` (path: where to) and text pages; logs
    (method, path, headers)."""
    async def handle(request: web.Request) -> web.Response:
        log.append((request.method, request.path,
                    {k.lower(): v for k, v in request.headers.items()}))
        if redirects and request.path in redirects:
            raise web.HTTPFound(redirects[request.path])
        if request.path in documents:
            return web.Response(body=documents[request.path], content_type="application/xml")
        return web.Response(text=f"Page {request.path}. Some words.", content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


@contextlib.asynccontextmanager
async def two_ports():
    """The user's site (its sitemap lists pages on both ports, and a child sitemap on the
    other port) and the other port's server; each one's log."""
    mine: list = []
    other: list = []
    documents: dict[str, bytes] = {}
    other_documents: dict[str, bytes] = {}
    async with serve(logging_site(mine, documents)) as base, \
            serve(logging_site(other, other_documents)) as elsewhere:
        documents["/map.xml"] = index([f"{base}/pages.xml", f"{elsewhere}/more.xml"])
        documents["/pages.xml"] = urlset([f"{base}/a", f"{elsewhere}/b"])
        other_documents["/more.xml"] = urlset([f"{elsewhere}/c"])
        yield base, elsewhere, mine, other


def _cookie_file(tmp_path) -> str:
    path = tmp_path / "cookies.txt"
    path.write_text("127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tCOOKIE\n")  # any port: RFC 6265
    return str(path)


def _with_secrets(log) -> list[tuple[str, str]]:
    return [(method, path) for method, path, headers in log
            if any(name in headers for name in SECRETS)]


@pytest.mark.parametrize("sharded", [False, True], ids=["plain", "processes"])
async def test_urls_a_sitemap_chose_get_no_credentials(tmp_path, sharded):
    out = tmp_path / ("out" if sharded else "out.jsonl")
    async with two_ports() as (base, _, mine, other):
        code, stderr = await run_cli(
            "--sitemap", f"{base}/map.xml", "-o", str(out), "--cookie-file",
            _cookie_file(tmp_path), *FLAGS, *(["--processes", "2"] if sharded else []))
    assert code == 0, stderr
    assert {path for _, path, _ in other} >= {"/more.xml", "/b", "/c"}  # they were fetched
    assert _with_secrets(other) == []
    # the user's own origin got them all, on the sitemaps and the page, HEAD and GET
    got = {path: headers for method, path, headers in mine if method == "GET"}
    for path in ("/map.xml", "/pages.xml", "/a"):
        assert got[path]["authorization"] == "Bearer SECRET"
        assert got[path]["x-api-key"] == "KEY" and "sid=COOKIE" in got[path]["cookie"]
    records = read_records(out / "part-00000-of-00002.jsonl") + read_records(
        out / "part-00001-of-00002.jsonl") if sharded else read_records(out)
    assert len(records) == 3


async def test_a_credential_host_or_a_listed_url_names_the_other_origin(tmp_path):
    async with two_ports() as (base, elsewhere, _, other):
        port = elsewhere.rsplit(":", 1)[1]
        code, stderr = await run_cli("--sitemap", f"{base}/map.xml", "-o",
                                     str(tmp_path / "a.jsonl"), "--credential-host",
                                     f"127.0.0.1:{port}", *FLAGS)
        assert code == 0, stderr
        assert {path for _, path in _with_secrets(other)} >= {"/more.xml", "/b", "/c"}
        other.clear()
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{elsewhere}/listed\n")
        code, stderr = await run_cli(str(urls), "--sitemap", f"{base}/map.xml", "-o",
                                     str(tmp_path / "b.jsonl"), *FLAGS)
    assert code == 0, stderr
    # the list named the other origin: its pages get them, whoever found them
    assert {path for _, path in _with_secrets(other)} >= {"/listed", "/b"}

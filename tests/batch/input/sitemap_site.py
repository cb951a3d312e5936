"""A site of sitemaps and feeds for the tests, served on 127.0.0.1: an index with a gzip'd
child, a loop back to itself, a missing child and a nested chain; RSS, Atom and JSON feeds;
text pages that name themselves."""

from __future__ import annotations

import gzip
from collections import Counter

from aiohttp import web

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
IMAGE_NS = 'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'


def urlset(locs: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{loc}</loc><lastmod>2024-01-01</lastmod></url>"
                      for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{entries}</urlset>'.encode()


def index(locs: list[str]) -> bytes:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?><sitemapindex {NS}>{entries}</sitemapindex>'.encode()


def rss(links: list[str]) -> bytes:
    items = "".join(f"<item><title>Item {n}</title><link>{link}</link>"
                    f"<description>About &lt;b&gt;{n}&lt;/b&gt;</description></item>"
                    for n, link in enumerate(links))
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>'
            f"<link>https://news.test/</link>{items}</channel></rss>").encode()


def atom(links: list[str]) -> bytes:
    entries = "".join(f'<entry><title>E{n}</title><id>urn:e:{n}</id>'
                      f'<link rel="alternate" href="{link}"/>'
                      f'<link rel="enclosure" href="{link}.mp3"/></entry>'
                      for n, link in enumerate(links))
    return (f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>A</title><id>urn:a</id>{entries}</feed>").encode()


def sitemap_site(base_of: dict[str, str], extra: dict[str, tuple[bytes, str]] | None = None
                 ) -> tuple[web.Application, Counter]:
    """The app; ``base_of['base']`` is filled in with its base URL once it serves (links are
    absolute, as sitemaps' are); ``extra`` documents (path: body, media type) may be added
    while it runs. Counts GETs per path."""
    gets: Counter = Counter()

    def documents() -> dict[str, tuple[bytes, str]]:
        base = base_of["base"]
        pages = [f"{base}/page/{n}" for n in range(1, 6)]
        entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in
                          [*pages, pages[0], "/page/6", "javascript:alert(1)"])
        entries += (f"<url><loc>{base}/page/7</loc><image:image><image:loc>{base}/photo.jpg"
                    "</image:loc></image:image></url>")
        first = f'<?xml version="1.0"?><urlset {NS} {IMAGE_NS}>{entries}</urlset>'.encode()
        second = urlset([f"{base}/page/{n}" for n in (8, 9, 10, 3)])
        return {
            "/index.xml": (index([f"{base}/pages-1.xml", f"{base}/pages-2.xml.gz",
                                  f"{base}/index.xml", f"{base}/missing.xml"]),
                           "application/xml"),
            "/pages-1.xml": (first, "application/xml"),
            "/pages-2.xml.gz": (gzip.compress(second), "application/gzip"),
            "/nested.xml": (index([f"{base}/nested-2.xml"]), "text/xml"),
            "/nested-2.xml": (index([f"{base}/nested-3.xml"]), "text/xml"),
            "/nested-3.xml": (urlset([f"{base}/page/11"]), "text/xml"),
            "/bomb.xml.gz": (gzip.compress(urlset([f"{base}/page/{n}" for n in range(5000)])),
                             "application/x-gzip"),
            "/plain.txt": (f"{base}/page/12\n\n{base}/page/13\n".encode(), "text/plain"),
            "/robots.txt": (f"User-agent: *\nDisallow: /private\nSitemap: {base}/pages-1.xml\n"
                            .encode(), "text/plain"),
            "/private.xml": (urlset([f"{base}/page/14"]), "application/xml"),
            "/feed.rss": (rss([f"{base}/page/20", f"{base}/page/21", "page/22"]),
                          "application/rss+xml"),
            "/feed.atom": (atom([f"{base}/page/23", f"{base}/page/24"]), "application/atom+xml"),
            "/feed.json": (b'{"version": "https://jsonfeed.org/version/1.1", "title": "J", '
                           b'"items": [{"id": "1", "url": "' + f"{base}/page/25".encode()
                           + b'"}, {"id": "2", "external_url": "' + f"{base}/page/26".encode()
                           + b'"}]}', "application/feed+json"),
            "/not-a-sitemap.html": (b"<html><body><p>Hello</p></body></html>", "text/html"),
        }

    async def handle(request: web.Request) -> web.Response:
        if request.method == "GET":
            gets[request.path] += 1
        if request.path.startswith("/page/"):
            name = request.path.rsplit("/", 1)[1]
            return web.Response(text=f"Page {name}. Some words here.", content_type="text/plain")
        found = (extra or {}).get(request.path) or documents().get(request.path)
        if found is None:
            raise web.HTTPNotFound()
        body, media_type = found
        return web.Response(body=body, content_type=media_type)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app, gets

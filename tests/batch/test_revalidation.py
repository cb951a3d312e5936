"""``--cache DIR`` past ``--cache-ttl``: one conditional GET per page with validators, a 304
serves the cached record, and the closing line counts hits, revalidations and fetches."""

from __future__ import annotations

from collections import Counter

from aiohttp import web

from tests.cli.test_end_to_end import LOOPBACK, run_cli
from tests.support.pages import serve
from tests.support.records import read_records

MODIFIED = "Wed, 01 Jan 2025 00:00:00 GMT"


def versioned_site() -> tuple[web.Application, Counter, dict[str, int]]:
    """/etag/* (ETag), /dated/* (Last-Modified) and /changing (a new ETag each time) answer
    304 to a matching conditional GET; /plain/* has no validators. Counts requests by
    (method, path, conditional?)."""
    requests: Counter = Counter()
    version = {"changing": 0}

    async def page(request: web.Request) -> web.Response:
        conditional = "If-None-Match" in request.headers or "If-Modified-Since" in request.headers
        requests[(request.method, request.path, conditional)] += 1
        kind = request.path.split("/")[1]
        headers: dict[str, str] = {}
        if kind == "etag":
            headers["ETag"] = f'"{request.path}"'
        elif kind == "dated":
            headers["Last-Modified"] = MODIFIED
        elif kind == "changing":
            version["changing"] += 1
            headers["ETag"] = f'"v{version["changing"]}"'
        if (request.headers.get("If-None-Match") == headers.get("ETag", "-")
                or request.headers.get("If-Modified-Since") == headers.get("Last-Modified", "-")):
            return web.Response(status=304, headers=headers)
        text = f"Text of {request.path}, version {version['changing']}. " * 5
        return web.Response(text=text, content_type="text/plain", headers=headers)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    return app, requests, version


async def test_a_rerun_past_the_ttl_revalidates(tmp_path):
    app, requests, _ = versioned_site()
    cache = tmp_path / "cache"
    paths = ["/etag/a", "/etag/b", "/dated/c", "/plain/d", "/changing"]
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text("".join(f"{base}{path}\n" for path in paths))
        runs, summaries = [], []
        # first run; then a re-run with every entry stale; then one within the TTL
        for n, ttl in enumerate(["3600", "0.001", "3600"]):
            out = tmp_path / f"out{n}.jsonl"
            code, stderr = await run_cli(str(urls), "-o", str(out), "--cache", str(cache),
                                         "--cache-ttl", ttl, "--workers", "1", "--retries", "0",
                                         *LOOPBACK)
            assert code == 0, stderr
            runs.append({r["url"][len(base):]: r for r in read_records(out)})
            summaries.append(stderr.strip().splitlines()[-1])
            if n == 0:
                requests.clear()  # from here on: what the re-runs cost
    first, second, third = runs
    assert all(r["ok"] and r["cache"] is None for r in first.values())
    assert "cache: 0 hits, 0 revalidated, 5 fetched" in summaries[0]

    assert {p: second[p]["cache"] for p in paths} == {
        "/etag/a": "revalidated", "/etag/b": "revalidated", "/dated/c": "revalidated",
        "/plain/d": None, "/changing": None}
    for path in ("/etag/a", "/etag/b", "/dated/c"):
        assert second[path]["content"] == first[path]["content"]
    assert second["/changing"]["content"] != first["/changing"]["content"]
    assert "cache: 0 hits, 3 revalidated, 2 fetched" in summaries[1]
    # one conditional GET per URL with stored validators, no HEAD before it; the page
    # without validators is fetched as any new page is (HEAD guard, then GET)
    assert requests == Counter({
        ("GET", "/etag/a", True): 1, ("GET", "/etag/b", True): 1, ("GET", "/dated/c", True): 1,
        ("GET", "/changing", True): 1, ("HEAD", "/plain/d", False): 1,
        ("GET", "/plain/d", False): 1})

    assert all(r["cache"] == "hit" and r["attempts"] == 0 for r in third.values())
    assert third["/changing"]["content"] == second["/changing"]["content"]
    assert "cache: 5 hits, 0 revalidated, 0 fetched" in summaries[2]

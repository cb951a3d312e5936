"""End to end: the MCP server as a subprocess, driven by the SDK's own stdio client.

A page and a SearXNG-shaped search API are served on 127.0.0.1 by aiohttp; the server is
started with ``--allow-net 127.0.0.1/32`` so it may fetch from them. Set
``PIPELINE_MCP_TRANSCRIPT=FILE`` to save the exchange as markdown.
"""

import os
import re
import sys
from pathlib import Path

import pytest
from aiohttp import web
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
PARAGRAPHS = [
    f"Paragraph {i} of the field guide explains how herons fish in shallow water, "
    f"waiting without moving until prey comes close enough to strike. Fact {i}."
    for i in range(1, 31)
]
PAGE = (
    "<!doctype html><html lang=en><head><title>Herons: a field guide</title></head><body>"
    "<nav><a href=/>Home</a> <a href=/about>About</a></nav><main><article>"
    "<h1>Herons: a field guide</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    + "</article></main><footer>Copyright nobody</footer></body></html>"
)


@pytest.fixture
async def site():
    hits = {"page": 0, "search": 0}

    async def page(request):
        if request.method == "GET":  # the fetcher may send a HEAD first
            hits["page"] += 1
        return web.Response(text=PAGE, content_type="text/html")

    async def search(request):
        hits["search"] += 1
        query = request.query.get("q", "")
        return web.json_response({
            "query": query,
            "results": [
                {"title": f"Result {i} for {query}", "url": f"https://example.org/{i}",
                 "content": f"Snippet {i} about {query}.", "engine": "fake"}
                for i in range(1, 4)
            ],
        })

    app = web.Application()
    app.router.add_get("/herons", page)
    app.router.add_get("/search", search)
    runner = web.AppRunner(app)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = tcp._server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}", hits
    await runner.cleanup()


def numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"Paragraph (\d+) of", text)]


def server_params(base: str, cache_dir: Path) -> StdioServerParameters:
    env = {
        "PYTHONPATH": str(REPO),
        "SEARXNG_URL": base,
        "PIPELINE_CONFIG": "",
        "HOME": str(cache_dir),  # nothing of the user's leaks in, nothing of ours leaks out
    }
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "pipeline", "mcp", "--allow-net", "127.0.0.1/32",
              "--search-backend", "searxng", "--max-chars", "800",
              "--cache", str(cache_dir / "cache")],
        env=env,
        cwd=str(REPO),
    )


async def test_mcp_server_over_stdio(site, tmp_path):
    base, hits = site
    transcript: list[str] = []

    async def call(client, name, arguments):
        result = await client.call_tool(name, arguments)
        text = "\n".join(part.text for part in result.content)
        transcript.append(f"### call {name} {arguments}\n\nisError={result.is_error}\n\n"
                          f"```\n{text}\n```\n")
        return result, text

    async with Client(server_params(base, tmp_path), read_timeout_seconds=60) as client:
        tools = (await client.list_tools()).tools
        transcript.append("### tools/list\n\n" + "\n".join(
            f"- {t.name}: {sorted(t.input_schema['properties'])}" for t in tools) + "\n")
        assert sorted(t.name for t in tools) == ["web_extract", "web_search"]
        extract_schema = next(t for t in tools if t.name == "web_extract").input_schema
        assert "offset" in extract_schema["properties"]
        assert "backend" not in extract_schema["properties"]

        url = f"{base}/herons"
        result, text = await call(client, "web_extract", {"urls": [url]})
        assert not result.is_error
        assert "Herons: a field guide" in text and f"Source: {url}" in text
        assert "Paragraph 1 of the field guide" in text
        assert "Copyright nobody" not in text
        assert text.count("</untrusted-web-content") == 1
        assert "offset=" in text  # 30 paragraphs do not fit in 800 characters
        offset = int(text.split("offset=")[1].split()[0].rstrip(".)"))

        result, more = await call(client, "web_extract", {"urls": [url], "offset": offset})
        assert not result.is_error
        assert min(numbers(more)) == max(numbers(text)) + 1  # the next window, no overlap
        assert hits["page"] == 1  # served from the cache, not fetched again

        result, found = await call(client, "web_search", {"query": "herons", "max_results": 2})
        assert not result.is_error
        assert "[Result 1 for herons](https://example.org/1)" in found
        assert "https://example.org/3" not in found
        assert hits["search"] == 1

        result, single = await call(client, "web_extract", {"urls": url})  # a bare string
        assert not result.is_error and f"Source: {url}" in single

        result, refused = await call(client, "web_extract", {"urls": ["file:///etc/passwd"]})
        assert result.is_error and "root:" not in refused

    saved = os.environ.get("PIPELINE_MCP_TRANSCRIPT")
    if saved:
        Path(saved).write_text("\n".join(transcript))

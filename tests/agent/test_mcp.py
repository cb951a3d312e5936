"""End to end: the MCP server as a subprocess, driven by the SDK's own stdio client.

A page and a SearXNG-shaped search API are served on 127.0.0.1 by aiohttp; the server is
started with ``--allow-net 127.0.0.1/32`` so it may fetch from them. Set
``PIPELINE_MCP_TRANSCRIPT=FILE`` to save the exchange as markdown.
"""

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest
from aiohttp import web
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
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
        assert sorted(t.name for t in tools) == ["web_crawl", "web_extract", "web_map",
                                                 "web_search"]
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
        # 30 paragraphs do not fit in 800 characters: the hint is a call, followed as written
        hint = re.search(r"call web_extract with (\{.*\})\.\)$", text)
        assert hint, text[-300:]
        result, more = await call(client, "web_extract", json.loads(hint.group(1)))
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


async def _answer_list(*lines: bytes, expected: int, limit: float = 60) -> list[dict]:
    """Send raw lines (bytes, as written) to ``python -m pipeline mcp`` after the handshake;
    the answer to the handshake, then the first ``expected`` answers to them, in order."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pipeline", "mcp", "--no-cache", cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO), "PIPELINE_CONFIG": ""},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, limit=1 << 24)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}
    proc.stdin.write(json.dumps(init).encode() + b"\n"
                     + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                     + b"".join(line + b"\n" for line in lines))
    await proc.stdin.drain()
    answers: list[dict] = []
    try:
        async with asyncio.timeout(limit):
            while len(answers) < expected + 1:
                raw = await proc.stdout.readline()
                assert raw, (await proc.stderr.read()).decode()[-2000:]
                answers.append(json.loads(raw))
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 30)
    return answers


async def _frames(*lines: str, limit: float = 60, unanswered: int = 0) -> dict[int, dict]:
    """Send raw JSON-RPC lines to ``python -m pipeline mcp``; its answers by id (every line
    is answered but ``unanswered`` of them: notifications)."""
    answers = await _answer_list(*(line.encode() for line in lines),
                                 expected=len(lines) - unanswered, limit=limit)
    return {answer["id"]: answer for answer in answers}


def _call(call_id: int, name: str, arguments: str) -> str:
    """A tools/call frame with ``arguments`` as raw JSON text (escapes kept as written)."""
    return (f'{{"jsonrpc":"2.0","id":{call_id},"method":"tools/call",'
            f'"params":{{"name":"{name}","arguments":{arguments}}}}}')


async def test_every_raw_call_gets_an_answer_and_errors_quote_urls_clipped():
    huge = ["http://127.0.0.1:1/" + "a" * 60_000 + f"/{i}" for i in range(100)]
    answers = await _frames(
        # a lone surrogate: refused by the SDK's strict JSON parser (loopback: blocked)
        _call(1, "web_extract", '{"urls":["http://127.0.0.1:1/\\ud800"]}'),
        _call(2, "web_search", '{"query":"\\udc00' + "q" * 3000 + '"}'),  # over 2,000 chars
        _call(3, "\\ud83d", "{}"),  # a lone high surrogate as a tool's name
        _call(4, "web_extract", json.dumps({"urls": huge})),
    )
    assert sorted(answers) == [0, 1, 2, 3, 4]
    for call_id in (1, 2, 3, 4):
        result = answers[call_id]["result"]
        assert result["isError"] and len(result["content"]) == 1
    assert "http://127.0.0.1:1/\ufffd" in answers[1]["result"]["content"][0]["text"]
    assert "query" in answers[2]["result"]["content"][0]["text"]
    assert "There is no tool named" in answers[3]["result"]["content"][0]["text"]
    text = answers[4]["result"]["content"][0]["text"]
    assert text.count("Reading http://127.0.0.1:1/aaa") == 100
    assert len(text) < 100 * 500  # each URL quoted clipped, not 6 MB of them


async def test_every_malformed_request_with_an_id_gets_an_error_answer():
    """Frames the SDK cannot turn into a message were dropped: the client waited for ever."""
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    answers = await _frames(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"str"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":' + deep + "}",
        _call(3, "web_search", deep),  # arguments nested 5,000 deep
        '{"jsonrpc":"2.0","method":"tools/call","params":' + deep + ',"id":"four"}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1,2]}',
        '{"jsonrpc":"2.0","id":6,"method":7}',
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":',  # cut short
        '{"jsonrpc":"2.0","id":{"not":"an id"},"method":"tools/call","params":"str"}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}',
        '{"jsonrpc":"2.0","id":9,"method":"ping"}',  # still served after all that
        unanswered=1)  # the notification
    assert sorted(answers, key=str) == [0, 1, 2, 3, 5, 6, 7, 9, None, "four"]
    for call_id in (1, 2, 3, 5, 6, "four", None):
        assert answers[call_id]["error"]["code"] == -32600, answers[call_id]
    assert answers[7]["error"]["code"] == -32700  # not JSON at all
    assert "params must be an object" in answers[1]["error"]["message"]
    assert "nested too deeply" in answers[2]["error"]["message"]
    assert answers[9]["result"] == {}


async def test_every_frame_that_is_no_message_is_answered_with_a_null_id():
    """Frames the server dropped without a word: no JSON, bad UTF-8, a batch, an id that is
    null, an object or an array (the SDK took them for notifications), no id at all."""
    frames = [
        (b"not json", -32700),
        (b"\xff\xfe\x80 bad utf-8", -32700),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600),
        (b"[]", -32600),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":"no id"}', -32600),
        (b'"a string"', -32600),
    ]
    answers = await _answer_list(*(frame for frame, _ in frames),
                                 b'{"jsonrpc":"2.0","id":"\xff","method":"ping"}',  # bad UTF-8 id
                                 b"",  # a blank line is no frame
                                 b'{"jsonrpc":"2.0","id":9,"method":"ping"}',
                                 expected=len(frames) + 2)
    answers = answers[1:]  # past the handshake
    for (frame, code), answer in zip(frames, answers, strict=False):
        assert answer["id"] is None and answer["error"]["code"] == code, (frame, answer)
    assert answers[-2] == {"jsonrpc": "2.0", "id": "\ufffd", "result": {}}
    assert answers[-1] == {"jsonrpc": "2.0", "id": 9, "result": {}}
    assert "batch" in answers[6]["error"]["message"]

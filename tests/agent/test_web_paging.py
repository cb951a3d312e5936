"""web_extract(offset=) and the tools over the real kernel, against a page on 127.0.0.1."""

import json
import re
from collections import Counter

from aiohttp import web

import pipeline
from pipeline.agent.tools import FLAVORS, agent_tools, run_tool, tool_definitions
from pipeline.core.settings import Settings
from pipeline.core.truncate import MARKER
from tests.support.pages import serve

TEXT = "\n\n".join(f"Section {i}. " + "Herons wait in the shallows. " * 6 for i in range(30))


def site() -> tuple[web.Application, Counter]:
    gets: Counter = Counter()

    async def page(request: web.Request) -> web.Response:
        if request.method == "GET":
            gets[request.path] += 1
        return web.Response(text=TEXT, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/{name}", page)
    return app, gets


def loopback(tmp_path, **extra) -> Settings:
    return Settings(allow_net=["127.0.0.1/32"], cache_dir=str(tmp_path / "cache"), **extra)


async def test_offset_reads_every_window_with_one_fetch(tmp_path):
    app, gets = site()
    settings = loopback(tmp_path)
    async with serve(app) as base:
        url = f"{base}/long"
        windows, offset = [], 0
        while offset is not None:
            response = await pipeline.web_extract([url], max_chars=600, offset=offset,
                                                  settings=settings)
            [record] = response.records
            assert record.ok and len(record.content) <= 600
            assert response.provider == ("native" if not windows else "cache")
            windows.append(record.content.removesuffix(MARKER))
            offset = record.next_offset
    assert gets["/long"] == 1
    assert len(windows) > 3
    assert " ".join(windows).split() == TEXT.split()


async def test_without_cache_offset_still_works_but_refetches(tmp_path):
    app, gets = site()
    settings = loopback(tmp_path, cache=False)
    async with serve(app) as base:
        first = await pipeline.web_extract([f"{base}/p"], max_chars=600, settings=settings)
        offset = first.records[0].next_offset
        second = await pipeline.web_extract([f"{base}/p"], max_chars=600, offset=offset,
                                            settings=settings)
    assert second.records[0].content.startswith("Section ")
    assert second.records[0].content not in first.records[0].content
    assert gets["/p"] == 2


def test_web_tool_definitions_come_from_the_kernel_models():
    for flavor in FLAVORS:
        search, extract, *_ = tool_definitions(flavor)
        text = str(extract)
        assert "offset" in text and "compress" not in text and "instruction" not in text
        assert "max_results" in str(search)
    chat = tool_definitions("openai_chat", strict=True)
    params = chat[1]["function"]["parameters"]
    assert sorted(params["required"]) == sorted(params["properties"])


def test_extract_schema_advertises_an_array_of_urls_only():
    # a bare string is accepted leniently, but the schema stays a plain array everywhere
    for flavor in FLAVORS:
        for strict in (False, True):
            definition = tool_definitions(flavor, strict=strict)[1]
            definition = definition.get("function", definition)
            schema = next(definition[k] for k in ("parameters", "input_schema", "inputSchema")
                          if k in definition)
            urls = schema["properties"]["urls"]
            assert urls["type"] == "array" and urls["items"]["type"] == "string"
            assert "anyOf" not in urls


async def test_tool_call_with_one_url_string(tmp_path):
    app, _ = site()
    settings = loopback(tmp_path)
    async with serve(app) as base:
        one = await run_tool("web_extract", {"urls": f"{base}/s"}, settings=settings,
                             untrusted=False)
        listed = await run_tool("web_extract", {"urls": [f"{base}/s"]}, settings=settings,
                                untrusted=False)
        as_openai_sends_it = await run_tool(  # tool_call.function.arguments is JSON text
            "web_extract", json.dumps({"urls": [f"{base}/s"]}), settings=settings,
            untrusted=False)
    assert one == listed == as_openai_sends_it and "Herons wait" in one


async def test_run_tool_and_agent_tools_cap_max_chars(tmp_path):
    app, _ = site()
    settings = loopback(tmp_path, max_chars=300)
    async with serve(app) as base:
        text = await run_tool("web_extract", {"urls": [f"{base}/x"], "max_chars": 5000},
                              settings=settings, untrusted=False)
        search, extract, *_ = agent_tools(settings=settings, untrusted=False)
        same = await extract(urls=[f"{base}/x"])
    assert text == same
    content = text.split("\n\n", 1)[1].split("\n\n(Truncated")[0]
    assert len(content) <= 300 and '"offset": ' in text  # the operator's budget wins
    assert search.__name__ == "web_search" and extract.__name__ == "web_extract"
    assert (await run_tool("nope", {})).startswith("There is no tool named 'nope'")


READ_ON = re.compile(r"\(Truncated: to read on, call web_extract with (\{.*\})\.\)$")


async def test_the_read_on_hint_followed_literally_reads_the_next_window(tmp_path):
    """The hint a cut page ends with is a call the tool accepts, as written."""
    app, gets = site()
    settings = loopback(tmp_path, max_chars=600)
    windows: list[str] = []
    async with serve(app) as base:
        arguments: dict | None = {"urls": [f"{base}/follow"], "format": "text"}
        while arguments is not None:
            text = await run_tool("web_extract", arguments, settings=settings,
                                  untrusted=False)
            assert not text.startswith("The web_extract call failed"), text
            hint = READ_ON.search(text)
            windows.append(text.split("\n\n", 1)[1].split("\n\n(Truncated")[0])
            arguments = json.loads(hint.group(1)) if hint else None
    assert gets["/follow"] == 1 and len(windows) > 3
    assert " ".join(w.removesuffix(MARKER) for w in windows).split() == TEXT.split()


async def test_every_window_of_a_json_page_is_valid_markdown(tmp_path):
    """A cut inside the ```json fence closes it, and the next window opens it again."""
    from markdown_it import MarkdownIt

    body = json.dumps({f"key{i}": f"value number {i}" for i in range(60)})

    async def data(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/data.json", data)
    settings = loopback(tmp_path)
    windows, offset = [], 0
    async with serve(app) as base:
        while offset is not None:
            response = await pipeline.web_extract([f"{base}/data.json"], max_chars=300,
                                                  offset=offset, settings=settings)
            [record] = response.records
            assert record.ok and len(record.content) <= 300
            windows.append(record.content)
            offset = record.next_offset
    assert len(windows) > 3
    for text in windows:
        blocks = MarkdownIt("commonmark").parse(text)
        assert blocks[0].type == "fence" and blocks[0].info == "json", text
        if text.endswith(MARKER):  # the marker is text after the closed fence, not code
            assert blocks[-2].content == MARKER.strip(), text
    code = " ".join(MarkdownIt("commonmark").parse(text)[0].content for text in windows)
    assert code.split() == json.dumps(json.loads(body), indent=2).split()  # nothing lost


async def test_a_refused_local_page_says_how_to_allow_it_and_settings_do(tmp_path):
    app, _ = site()
    async with serve(app) as base:
        refused = await pipeline.web_extract(f"{base}/p", settings=Settings(cache=False))
        allowed = await pipeline.web_extract(
            f"{base}/p", settings=Settings(allow_net=["127.0.0.1/32"], cache=False))
    [record] = refused.records
    assert record.error.kind == "blocked"
    assert "--allow-net 127.0.0.1/32 or --allow-private; settings allow_net, allow_private" \
        in record.error.message
    assert allowed.records[0].ok

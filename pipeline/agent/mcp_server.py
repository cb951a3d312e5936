"""The MCP server: serves ``web_search``, ``web_extract``, ``web_crawl`` and ``web_map`` over
stdio with the official ``mcp`` SDK (the ``[mcp]`` extra); ``python -m pipeline mcp``
(:mod:`pipeline.cli.mcp`) runs it.

It runs the library's own kernel with the same settings (flags > ``PIPELINE_*`` environment >
config file) and the same safety policy. Answers are markdown rendered for a model, wrapped
in the untrusted-content envelope unless ``--no-envelope``. Stdout carries the protocol only;
logs go to stderr.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from pipeline.agent.tools import ToolSpec, answer, unknown_tool
from pipeline.core.settings import Settings

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

SERVER_NAME = "extract-pipeline"
INSTRUCTIONS = (
    "web_search finds pages (title, URL, snippet); web_extract reads pages as clean markdown. "
    "A cut page gives a next offset: call web_extract again with that offset to read on. "
    "web_map lists a site's URLs; web_crawl reads up to 50 pages of one site in one call."
)

log = logging.getLogger(__name__)


def build_server(
    specs: Sequence[ToolSpec], settings: Settings | None = None, *, untrusted: bool = True,
    holds: Sequence[AbstractAsyncContextManager[Any]] = (),
) -> Server[Any]:
    """A low-level MCP ``Server`` exposing ``specs``; raises ``ModuleNotFoundError`` when the
    SDK is missing. Tool failures are answers (``isError``), never protocol errors. ``holds``
    are entered when the server starts serving and left when it stops (what its calls
    share: :func:`web_server`'s fetcher)."""
    from mcp import types
    from mcp.server.lowlevel import Server

    by_name = {spec.name: spec for spec in specs}
    listed = [
        types.Tool.model_validate(
            {
                **spec.definition("mcp"),
                "annotations": {"readOnlyHint": True, "openWorldHint": True},
            }
        )
        for spec in specs
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = by_name.get(params.name)
        try:
            if spec is None:
                text, failed = unknown_tool(params.name, by_name), True
            else:
                text, failed = await answer(spec, params.arguments, settings,
                                            untrusted=untrusted)
        except Exception as exc:  # every call gets an answer, even after a bug of ours
            log.exception("tool call failed")
            text, failed = f"The call failed: internal error ({type(exc).__name__}).", True
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=failed
        )

    @contextlib.asynccontextmanager
    async def lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with contextlib.AsyncExitStack() as stack:
            for held in holds:
                await stack.enter_async_context(held)
            yield {}

    from pipeline import __version__

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def web_server(settings: Settings, *, untrusted: bool = True) -> Server[Any]:
    """The server of ``python -m pipeline mcp``: the web tools with
    ``settings``, every call fetching through the server's one
    :class:`~pipeline.agent.runtime.SharedRuntime` (per-host limits, rate, pauses and
    robots.txt are the server's, not each call's)."""
    from pipeline.agent.runtime import SharedRuntime
    from pipeline.agent.tools import web_tools

    shared = SharedRuntime(settings)
    return build_server(web_tools(runtime=shared), settings, untrusted=untrusted,
                        holds=[shared])


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[BinaryIO]:
    """This process's stdin, for the protocol alone: while serving, fd 0 points at the null
    device (so handlers and children read EOF, as the SDK's own claim does) and is restored
    after. The duplicate is never closed: a worker thread may still block reading it."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin/stdout until the client hangs up. The
    transport reads stdin through :class:`~pipeline.agent.mcp_frames.Lines`, so every frame
    it cannot make a message of is answered (:class:`~pipeline.agent.mcp_frames.LenientFrames`)."""
    import anyio
    from mcp.server.stdio import stdio_server

    from pipeline.agent.mcp_frames import LenientFrames, Lines

    with _claimed_stdin() as raw:
        # bad UTF-8 is read as U+FFFD, as the transport's own reader does
        lines = Lines(anyio.wrap_file(io.TextIOWrapper(raw, encoding="utf-8", errors="replace")))
        async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
            await server.run(LenientFrames(read_stream, write_stream, lines), write_stream,
                             server.create_initialization_options())

"""The MCP server: ``python -m pipeline mcp [settings flags]`` serves ``web_search`` and
``web_extract`` over stdio with the official ``mcp`` SDK (the ``[mcp]`` extra).

It runs the library's own kernel with the same settings (flags > ``PIPELINE_*`` environment >
config file) and the same safety policy. Answers are markdown rendered for a model, wrapped
in the untrusted-content envelope unless ``--no-envelope``. Stdout carries the protocol only;
logs go to stderr.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings
from pipeline.tools import ToolSpec, answer, unknown_tool

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

SERVER_NAME = "extract-pipeline"
MISSING_EXTRA = (
    "the MCP server needs the official MCP SDK: pip install 'extract-pipeline[mcp]'"
)
INSTRUCTIONS = (
    "web_search finds pages (title, URL, snippet); web_extract reads pages as clean markdown. "
    "A cut page gives a next offset: call web_extract again with that offset to read on."
)
EXIT_USAGE = 2

log = logging.getLogger(__name__)


def build_server(
    specs: Sequence[ToolSpec], settings: Settings | None = None, *, untrusted: bool = True
) -> Server[Any]:
    """A low-level MCP ``Server`` exposing ``specs``; raises ``ModuleNotFoundError`` when the
    SDK is missing. Tool failures are answers (``isError``), never protocol errors."""
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

    from pipeline import __version__

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin/stdout until the client hangs up."""
    from mcp.server.stdio import stdio_server

    from pipeline.mcp_frames import LenientFrames

    async with stdio_server() as (read_stream, write_stream):
        await server.run(LenientFrames(read_stream), write_stream,
                         server.create_initialization_options())


def build_parser() -> argparse.ArgumentParser:
    """The ``mcp`` command's arguments: the batch command's settings flags plus its own."""
    from pipeline.cli import add_settings_arguments, command_parser

    parser = command_parser(
        "mcp",
        description="Serve web_search and web_extract to MCP clients over stdio.",
        epilog="Takes the batch command's settings flags; they override PIPELINE_* "
        "environment variables, which override the config file.",
    )
    add_settings_arguments(parser, batch=False)
    parser.add_argument(
        "--search-backend", dest="search_backend", action="append", default=None,
        metavar="NAME", help="repeatable; search provider(s) in order of preference",
    )
    parser.add_argument(
        "--no-envelope",
        dest="envelope",
        action="store_false",
        help="do not wrap web text in the untrusted-content envelope",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pipeline mcp``; returns the exit status."""
    try:
        import anyio
        import mcp.server.lowlevel  # noqa: F401  (fail early with a clear message)
    except ModuleNotFoundError:
        print(f"extract-pipeline mcp: error: {MISSING_EXTRA}", file=sys.stderr)
        return EXIT_USAGE
    from pipeline.cli import parse_command, settings_from_args
    from pipeline.tools import web_tools

    args = parse_command(build_parser(), sys.argv[1:] if argv is None else argv)
    if isinstance(args, int):
        return args
    try:
        settings = settings_from_args(args)
    except PipelineError as exc:
        print(f"extract-pipeline mcp: error: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server = build_server(web_tools(), settings, untrusted=args.envelope)
    try:
        anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        return 130
    return 0

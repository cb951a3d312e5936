"""``python -m pipeline mcp [settings flags]``: the MCP server (:mod:`pipeline.agent.mcp_server`)
on stdio, with the batch command's settings flags."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from pipeline.cli.command import (
    EXIT_USAGE,
    CommaList,
    add_settings_arguments,
    command_parser,
    parse_command,
    settings_from_args,
)
from pipeline.core.errors import PipelineError
from pipeline.core.extras import install_hint

MISSING_EXTRA = f"the MCP server needs the official MCP SDK: {install_hint('mcp')}"


def build_parser() -> argparse.ArgumentParser:
    """The ``mcp`` command's arguments: the batch command's settings flags plus its own."""
    parser = command_parser(
        "mcp",
        description="Serve web_search, web_extract, web_crawl and web_map to MCP clients over "
        "stdio.",
        epilog="Takes the batch command's settings flags; they override PIPELINE_* "
        "environment variables, which override the config file.",
    )
    add_settings_arguments(parser, batch=False)
    parser.add_argument(
        "--search-backend", dest="search_backend", action=CommaList, default=None,
        metavar="NAME", help="repeatable or A,B; search provider(s) in order of preference",
    )
    parser.add_argument(
        "--crawl-backend", dest="crawl_backend", action=CommaList, default=None,
        metavar="NAME", help="repeatable or A,B; crawl provider(s) of web_crawl and web_map "
        "(default: the native crawler)",
    )
    parser.add_argument(
        "--crawl-deadline", dest="crawl_deadline", type=float, default=None, metavar="SECONDS",
        help="seconds one web_crawl or web_map call may take in all (default: 120)",
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
    from pipeline.agent.mcp_server import serve_stdio, web_server

    args = parse_command(build_parser(), sys.argv[1:] if argv is None else argv)
    if isinstance(args, int):
        return args
    try:
        settings = settings_from_args(args)
        server = web_server(settings, untrusted=args.envelope)  # loads the handlers
    except PipelineError as exc:
        print(f"extract-pipeline mcp: error: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    try:
        anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        return 130
    return 0

"""``python -m pipeline search`` and ``python -m pipeline backends``.

``search`` prints a readable list on a terminal and one JSON object per result otherwise
(or with ``--json``); a failed search is one line on stderr and exit status 1, a usage or
configuration error (a bad argument included) one line and exit status 2.
``backends`` shows every provider, what it can do, whether it is configured, and which
provider each capability resolves to and why.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO, get_args

from pydantic import ValidationError

from pipeline.cli.command import EXIT_USAGE, CommaList, command_parser, parse_command
from pipeline.core.errors import PROG, PipelineError, describe_validation
from pipeline.core.models import SearchResponse
from pipeline.core.settings import Settings, load_settings
from pipeline.providers.base import TimeRange
from pipeline.providers.http import NETWORK_ERROR, TIMED_OUT
from pipeline.providers.registry import CAPABILITIES, Registry, default_registry

# What to do when no provider was reached: the machine may be offline.
OFFLINE_HINT = ("search needs the network: check the connection (or set a proxy: "
                "PIPELINE_PROXY), or name a provider you can reach with --backend NAME "
                "(the 'backends' command lists them)")
# The search request's fields, by the flags that set them.
_SEARCH_FLAGS = {"max_results": "--max-results", "time_range": "--time-range",
                 "include_domains": "--include-domain", "exclude_domains": "--exclude-domain",
                 "language": "--language", "region": "--region"}


def _search_parser() -> argparse.ArgumentParser:
    parser = command_parser("search", description="Search the web.",
                            epilog="Exit status: 0 done, 1 the search failed, 2 usage or "
                            "configuration error.")
    parser.add_argument("query", nargs="+", help="what to search for")
    parser.add_argument("--backend", help="provider name, or a comma-separated failover chain")
    parser.add_argument("--max-results", type=int, metavar="N", help="1..100 (clamped)")
    parser.add_argument("--time-range", choices=get_args(TimeRange))
    parser.add_argument("--include-domain", action=CommaList, default=[], metavar="DOMAIN",
                        help="repeatable or A,B; only results from these domains")
    parser.add_argument("--exclude-domain", action=CommaList, default=[], metavar="DOMAIN",
                        help="repeatable or A,B; no results from these domains")
    parser.add_argument("--language", help="e.g. en, pt-BR")
    parser.add_argument("--region", help="country code, e.g. us")
    parser.add_argument("--json", action="store_true", help="one JSON object per result")
    parser.add_argument("--config", metavar="FILE", help="TOML settings file")
    return parser


def _start(parser: argparse.ArgumentParser, argv: Sequence[str]
           ) -> tuple[argparse.Namespace, Settings] | int:
    """The parsed arguments and the settings they name, or the exit status to return now
    (0 after ``--help``, 2 for a usage or configuration error, told in one line)."""
    args = parse_command(parser, argv)
    if isinstance(args, int):
        return args
    try:
        return args, load_settings(config_file=args.config)
    except PipelineError as exc:
        _error(parser, exc.message)
        return EXIT_USAGE


def _error(parser: argparse.ArgumentParser, message: str) -> None:
    print(f"{PROG} {parser.prog.rsplit(' ', 1)[-1]}: error: {message}", file=sys.stderr)


def search_main(argv: Sequence[str], *, stdout: TextIO | None = None) -> int:
    """Run ``search``; returns the exit status."""
    from pipeline.agent.kernel import SearchArgs, web_search

    out = stdout or sys.stdout
    parser = _search_parser()
    started = _start(parser, argv)
    if isinstance(started, int):
        return started
    args, settings = started
    backend = [b.strip() for b in args.backend.split(",") if b.strip()] if args.backend \
        else None
    request = dict(query=" ".join(args.query), max_results=args.max_results,
                   time_range=args.time_range, include_domains=args.include_domain,
                   exclude_domains=args.exclude_domain, language=args.language,
                   region=args.region)
    try:  # what the kernel checks, told here by the flags
        SearchArgs.model_validate(request)
    except ValidationError as exc:
        _error(parser, describe_validation(exc, SearchArgs, names=_SEARCH_FLAGS))
        return EXIT_USAGE
    response = asyncio.run(web_search(**request, backend=backend, settings=settings))
    for warning in response.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not response.ok:
        error = response.failed_with
        if error.kind in ("invalid_request", "config"):  # the command line's mistake
            _error(parser, error.message)
            return EXIT_USAGE
        unreached = error.kind == "provider" and any(
            f": {what}" in error.message for what in (NETWORK_ERROR, TIMED_OUT))
        _error(parser, f"{error.kind}: {error.message}"
               + (f"; {OFFLINE_HINT}" if unreached else ""))
        return 1
    if args.json or not out.isatty():
        for row in response.results:
            out.write(json.dumps({**row.model_dump(), "provider": response.provider},
                                 ensure_ascii=False) + "\n")
    else:
        _print_table(response, out)
    return 0


def _print_table(response: SearchResponse, out: TextIO) -> None:
    try:
        width = max(40, min(os.get_terminal_size(out.fileno()).columns, 120))
    except (OSError, ValueError, AttributeError):  # not a real terminal
        width = 100
    if not response.results:
        out.write(f"No results ({response.provider}).\n")
        return
    for row in response.results:
        out.write(f"{row.position:>3}. {row.title}\n     {row.url}\n")
        for line in textwrap.wrap(row.snippet, width - 5)[:3]:
            out.write(f"     {line}\n")
        out.write("\n")
    out.write(f"{len(response.results)} results from {response.provider}\n")


def _backends_parser() -> argparse.ArgumentParser:
    parser = command_parser("backends",
                            description="List providers and the selection for each capability.",
                            epilog="Exit status: 0 every capability resolves, 1 one does not, "
                            "2 usage or configuration error.")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--config", metavar="FILE", help="TOML settings file")
    return parser


def describe_backends(settings: Settings, registry: Registry | None = None) -> dict[str, Any]:
    """Every provider with its capabilities and configuration, and each capability's
    resolution (or the configuration error that prevents one)."""
    registry = registry or default_registry()
    providers = []
    for spec in registry.specs():
        configured = {cap: registry.is_configured(spec.name, settings, capability=cap)
                      for cap in CAPABILITIES if cap in spec.capabilities}
        providers.append({"name": spec.name,
                          "capabilities": sorted(spec.capabilities),
                          "configured": configured, "how": spec.hint})
    selection = {}
    for cap in CAPABILITIES:
        try:
            resolution = registry.resolve(cap, settings)
            selection[cap] = {"chain": resolution.chain, "reason": resolution.reason,
                              "warnings": resolution.warnings}
        except PipelineError as exc:
            selection[cap] = {"error": f"{exc.kind}: {exc.message}"}
    return {"providers": providers, "selection": selection}


def backends_main(argv: Sequence[str], *, stdout: TextIO | None = None) -> int:
    """Run ``backends``; returns the exit status (1 when a capability cannot resolve)."""
    out = stdout or sys.stdout
    started = _start(_backends_parser(), argv)
    if isinstance(started, int):
        return started
    args, settings = started
    report = describe_backends(settings)
    failed = any("error" in s for s in report["selection"].values())
    if args.json:
        out.write(json.dumps(report) + "\n")
        return 1 if failed else 0
    out.write(f"{'provider':<12}" + "".join(f"{cap:<10}" for cap in CAPABILITIES)
              + "how to configure\n")
    for p in report["providers"]:
        cells = []
        for cap in CAPABILITIES:
            state = p["configured"].get(cap)
            cells.append("-" if state is None else ("ready" if state else "no"))
        out.write(f"{p['name']:<12}" + "".join(f"{cell:<10}" for cell in cells)
                  + f"{p['how']}\n")
    out.write("\n")
    for cap, chosen in report["selection"].items():
        if "error" in chosen:
            out.write(f"{cap:<8} ✗ {chosen['error']}\n")
            continue
        out.write(f"{cap:<8} → {' → '.join(chosen['chain'])}  ({chosen['reason']})\n")
        for warning in chosen["warnings"]:
            out.write(f"         warning: {warning}\n")
    return 1 if failed else 0

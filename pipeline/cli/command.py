"""The command line: ``python -m pipeline URLS [-o OUT.jsonl] [flags]``.

Sub-commands ``search``, ``backends``, ``mcp`` and ``merge`` are dispatched to their modules
(imported only when used). The run itself is :mod:`pipeline.batch.run` (one process),
:mod:`pipeline.batch.shards.shard_run` (``--shard K/N``),
:mod:`pipeline.batch.shards.processes` (``--processes N``) or
:mod:`pipeline.batch.shards.ray_engine` (``--engine ray``), imported once the settings are known.
Exit status: 0 when the run completes (per-URL errors are data), 1 when a shard of a sharded
run failed, 2 for usage or configuration errors, 74 when the output cannot be written (a full
disk: resumable), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
import textwrap
from collections.abc import Mapping, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, NoReturn

from pipeline import __version__
from pipeline.cli.inputs import add_input_arguments, input_from_args
from pipeline.core.errors import PROG, OutputError, PipelineError, UsageError
from pipeline.core.settings import Settings, load_settings

if TYPE_CHECKING:
    from pipeline.batch.engine import Summary
    from pipeline.batch.input.run_input import RunInput
    from pipeline.batch.run_plan import RunMode, RunPlan
    from pipeline.fetch.base import Fetcher

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_OUTPUT = 74  # sysexits' EX_IOERR: the output could not be written
SUBCOMMANDS: dict[str, str] = {
    "search": "pipeline.cli.search:search_main",
    "backends": "pipeline.cli.search:backends_main",
    "mcp": "pipeline.cli.mcp:main",
    "merge": "pipeline.cli.merge:merge_main",
    "crawl": "pipeline.cli.crawl:crawl_main",
    "map": "pipeline.cli.crawl:map_main",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see --help)")


class CommaList(argparse.Action):
    """A repeatable flag whose values hold no comma (names, CIDRs, hosts): ``--flag a,b``
    is ``--flag a --flag b``."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        items = list(getattr(namespace, self.dest, None) or [])
        items.extend(part.strip() for part in str(values).split(",") if part.strip())
        setattr(namespace, self.dest, items)


def invoked_as() -> str:
    """The program's name as the user ran it, for usage lines: ``python -m pipeline`` or the
    console script's name."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if name == "__main__.py":
        return "python -m pipeline"
    return name if name.startswith(PROG) else PROG


def command_parser(command: str, **keywords: Any) -> argparse.ArgumentParser:
    """A sub-command's parser with the batch command's conventions (see
    :func:`parse_command`); its usage names the program as invoked."""
    return _Parser(prog=f"{invoked_as()} {command}", **keywords)


def parse_command(parser: argparse.ArgumentParser, argv: Sequence[str]
                  ) -> argparse.Namespace | int:
    """``argv`` parsed, or the exit status to return now: 0 after ``--help``, 2 after a
    mistake, which is one line on stderr."""
    try:
        return parser.parse_args(list(argv))
    except UsageError as exc:
        command = parser.prog.rsplit(" ", 1)[-1]
        print(f"{PROG} {command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # --help
        return int(exc.code or 0)


# Help for settings whose description does not fit a flag (or that have none).
_HELP = {
    "format": "content format of records",
    "workers": "handler worker processes in all (a sharded run shares them out among its "
    "shard processes); default: the machine's cores ({default})",
    "processes": "run the input as N shards in N processes at once (needs -o OUT_DIR; "
    "see docs/batch.md 'Scaling out'); default: {default}",
    "user_agent": "User-Agent header sent with every request",
    "instruction": "what the compressor should keep (with --compress)",
    "extract_backend": "extract provider(s) in order of preference",
    "compress": "compress long content with the configured LLM compressor",
    "head": "skip the HEAD request sent first to refuse oversized/binary URLs early",
    "max_redirects": "redirects followed per URL",
    "backend": "provider chain shared by search and extract",
    "cache_dir": "full-text cache directory: re-runs skip pages fetched within --cache-ttl "
    "and revalidate older ones (ETag/Last-Modified, 304 = cached record) (library and MCP "
    "server: default the user cache directory)",
    "cache": "library and MCP server: do not keep full texts in the on-disk cache",
    "warc_out": "write every response the run receives (and its request) as WARC/1.1 files "
    "in DIR, gzip per record (extra 'warc'; see docs/corpus.md)",
    "links": "add each HTML page's out-links to its record (links, nofollow_links)",
    "detect_lang": "leave out metadata.detected_lang(_score), the language of the extracted "
    "text",
}


def _default(name: str) -> str:
    """A setting's help: its description and its default, when the default says something
    (not None, an empty list or an off switch: those are the absence the flag changes)."""
    info = Settings.model_fields[name]
    value = info.get_default(call_default_factory=True)
    text = _HELP.get(name, info.description or "")
    if "{default}" in text:
        return text.format(default=value)
    if value is None or value is False or value in ([], (), {}):
        return text
    return f"{text}; default: {value}" if text else f"default: {value}"


# The batch command's --help groups, in order; "input" is pipeline.cli.inputs'.
OUTPUT, FETCH, CONTENT, RENDERING, CORPUS, SCALE_OUT, CACHE, FILES = (
    "output", "fetch and politeness (see docs/fetch-options.md, docs/safety.md)", "content",
    "rendering (see docs/rendering.md)", "corpus (see docs/corpus.md)",
    "scale-out (see docs/batch.md 'Scaling out')", "cache and compressor", "settings files")
_GROUP_OF: dict[str, str] = {name: group for group, names in {
    OUTPUT: ("ordered", "quiet", "markdown_dir"),
    FETCH: ("concurrency", "per_host", "rate", "max_bytes", "timeout", "connect_timeout",
            "read_timeout", "retries", "retry_after_cap", "max_redirects", "head", "head_trust",
            "user_agent", "allow_net", "allow_private", "robots", "crawl_delay_cap", "proxy",
            "trust_env", "allow_proxy_net", "headers", "cookie_file", "credential_hosts",
            "credential_headers"),
    CONTENT: ("max_chars", "format", "html_extractor", "pdf_max_pages", "pdf_time_limit",
              "handler_timeout", "handlers", "include_comments", "structured_raw", "fields_schema",
              "fields_model", "links", "detect_lang", "extract_backend", "backend"),
    RENDERING: ("render", "render_concurrency", "browser_path", "render_wait",
                "render_max_bytes", "render_restart_pages", "render_max_memory_mb"),
    CORPUS: ("warc_out", "warc_max_bytes", "dedup", "drop_duplicates", "languages"),
    SCALE_OUT: ("processes", "workers"),
    CACHE: ("cache_dir", "cache_ttl", "cache_max_mb", "compress", "instruction",
            "compress_floor", "compress_deadline"),
}.items() for name in names}


# (flag, settings field, argparse keywords) for every limit and switch.
_VALUED: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("--concurrency", "concurrency", {"type": int, "metavar": "N"}),
    ("--per-host", "per_host", {"type": int, "metavar": "N"}),
    ("--rate", "rate", {"type": float, "metavar": "PER_S"}),
    ("--max-bytes", "max_bytes", {"type": int, "metavar": "BYTES"}),
    ("--max-chars", "max_chars", {"type": int, "metavar": "CHARS"}),
    ("--timeout", "timeout", {"type": float, "metavar": "SECONDS"}),
    ("--connect-timeout", "connect_timeout", {"type": float, "metavar": "SECONDS"}),
    ("--read-timeout", "read_timeout", {"type": float, "metavar": "SECONDS"}),
    ("--retries", "retries", {"type": int, "metavar": "N"}),
    ("--retry-after-cap", "retry_after_cap", {"type": float, "metavar": "SECONDS"}),
    ("--max-redirects", "max_redirects", {"type": int, "metavar": "N"}),
    ("--crawl-delay-cap", "crawl_delay_cap", {"type": float, "metavar": "SECONDS"}),
    ("--head-trust", "head_trust", {"type": int, "metavar": "N"}),
    ("--pdf-max-pages", "pdf_max_pages", {"type": int, "metavar": "N"}),
    ("--pdf-time-limit", "pdf_time_limit", {"type": float, "metavar": "SECONDS"}),
    ("--format", "format", {"choices": ("markdown", "text")}),
    ("--html-extractor", "html_extractor", {"choices": ("builtin", "readability")}),
    ("--schema", "fields_schema", {"metavar": "NAME|FILE.json"}),
    ("--workers", "workers", {"type": int, "metavar": "N"}),
    ("--processes", "processes", {"type": int, "metavar": "N"}),
    ("--handler-timeout", "handler_timeout", {"type": float, "metavar": "SECONDS"}),
    ("--user-agent", "user_agent", {"metavar": "TEXT"}),
    ("--instruction", "instruction", {"metavar": "TEXT"}),
    ("--compress-floor", "compress_floor", {"type": int, "metavar": "CHARS"}),
    ("--compress-deadline", "compress_deadline", {"type": float, "metavar": "SECONDS"}),
    ("--cache", "cache_dir", {"metavar": "DIR"}),
    ("--cache-ttl", "cache_ttl", {"type": float, "metavar": "SECONDS"}),
    ("--cache-max-mb", "cache_max_mb", {"type": int, "metavar": "MIB"}),
    ("--proxy", "proxy", {"metavar": "URL"}),
    ("--cookie-file", "cookie_file", {"metavar": "FILE"}),
    ("--warc-out", "warc_out", {"metavar": "DIR"}),
    ("--markdown-dir", "markdown_dir", {"metavar": "DIR"}),
    ("--warc-max-bytes", "warc_max_bytes", {"type": int, "metavar": "BYTES"}),
    ("--render", "render", {"choices": ("never", "auto", "always")}),
    ("--render-concurrency", "render_concurrency", {"type": int, "metavar": "N"}),
    ("--browser-path", "browser_path", {"metavar": "PATH"}),
    ("--render-wait", "render_wait", {"type": float, "metavar": "SECONDS"}),
    ("--render-max-bytes", "render_max_bytes", {"type": int, "metavar": "BYTES"}),
    ("--render-restart-pages", "render_restart_pages", {"type": int, "metavar": "N"}),
    ("--render-max-memory", "render_max_memory_mb", {"type": int, "metavar": "MIB"}),
    ("--dedup", "dedup", {"choices": ("off", "exact", "near")}),
)
# Settings only the batch command reads: other commands (mcp) offer no flag for them.
BATCH_ONLY = frozenset({"ordered", "quiet", "processes", "dedup", "drop_duplicates",
                        "languages", "structured_raw", "warc_out", "warc_max_bytes",
                        "fields_schema", "links", "markdown_dir"})
# Settings the batch command never reads (the library's and the MCP server's): not in its help.
NOT_BATCH = frozenset({"cache"})
_REPEATED: tuple[tuple[str, str, str], ...] = (
    ("--allow-net", "allow_net", "CIDR"),
    ("--handler", "handlers", "MODULE:ATTR"),
    ("--extract-backend", "extract_backend", "NAME"),
    ("--backend", "backend", "NAME"),
    ("--allow-proxy-net", "allow_proxy_net", "CIDR"),
    ("--header", "headers", "'NAME: VALUE'"),
    ("--credential-host", "credential_hosts", "HOST[:PORT]"),
    ("--credential-header", "credential_headers", "NAME"),
    ("--lang", "languages", "CODE"),
)
_WHOLE_VALUES = frozenset({"headers"})  # a header's value may hold commas: never split
_SWITCHES: tuple[tuple[str, str, bool], ...] = (
    ("--no-head", "head", False),
    ("--allow-private", "allow_private", True),
    ("--ordered", "ordered", True),
    ("--quiet", "quiet", True),
    ("--robots", "robots", True),
    ("--include-comments", "include_comments", True),
    ("--links", "links", True),
    ("--structured-raw", "structured_raw", True),
    ("--fields-model", "fields_model", True),
    ("--compress", "compress", True),
    ("--no-cache", "cache", False),
    ("--trust-env", "trust_env", True),
    ("--drop-duplicates", "drop_duplicates", True),
    ("--no-detect-lang", "detect_lang", False),
)


# The flag that sets each setting (for messages about a bad value); mcp adds its own.
FLAG_OF: dict[str, str] = {
    **{name: flag for flag, name, _ in _VALUED}, **{name: flag for flag, name, _ in _REPEATED},
    **{name: flag for flag, name, _ in _SWITCHES}, "search_backend": "--search-backend",
}


def _examples(prog: str) -> str:
    examples = (
        ("urls.txt -o out.jsonl", "one JSON record per URL"),
        ("- < urls.txt > out.jsonl", "stdin in, stdout out"),
        ("urls.txt -o out.jsonl --resume", "finish an interrupted run"),
        ("urls.txt --allow-net 127.0.0.1/32", "a local test server"),
        ("--sitemap URL -o out.parquet", "every URL of a sitemap, as columns"),
    )
    width = max(len(args) for args, _ in examples) + len(prog) + 3
    return "\n".join(f"  {f'{prog} {args}':<{width}}# {what}" for args, what in examples)


def build_parser() -> argparse.ArgumentParser:
    prog = invoked_as()
    parser = _Parser(
        prog=prog,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # keeps the examples' lines
        description=textwrap.fill(
            "Turn a list of URLs (one per line) into JSON lines of clean text. Other commands: "
            f"{', '.join(SUBCOMMANDS)} (e.g. '{prog} search --help').", width=78),
        epilog=textwrap.fill(
            "Flags override PIPELINE_* environment variables, which override the config "
            "file. Exit status: 0 done, 1 a shard failed, 2 usage/config error, 74 output not "
            "writable (resumable), 130 interrupted.", width=78)
        + f"\n\nexamples:\n{_examples(prog)}",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_input_arguments(parser)  # its group comes first
    groups = {title: parser.add_argument_group(title) for title in
              (OUTPUT, FETCH, CONTENT, RENDERING, CORPUS, SCALE_OUT, CACHE, FILES)}
    parser.add_argument("urls", metavar="URLS", nargs="?",
                        help="file of URLs, one per line (or a table: --input-format); '-' "
                        "for stdin; or http(s) URLs, the list themselves; optional with "
                        "--sitemap/--feed")
    parser.add_argument("more_inputs", metavar="MORE", nargs="*",
                        help="more http(s) URLs; with --input-format warc: more WARC files, "
                        "directories or lists")
    output, scale_out = groups[OUTPUT], groups[SCALE_OUT]
    output.add_argument("-o", "--output", metavar="OUT",
                        help="write records to this file ('-' or default: stdout; OUT.parquet: "
                        "a directory of Parquet files), or for a sharded run to this directory")
    output.add_argument("--resume", action="store_true",
                        help="skip URLs already recorded in OUT (needs -o), append the rest")
    output.add_argument("--overwrite", action="store_true",
                        help="replace what OUT holds (without --resume or --overwrite a "
                        "non-empty OUT is refused)")
    scale_out.add_argument("--shard", metavar="K/N",
                           help="run only shard K (0..N-1) of N: the URLs whose host hashes to "
                           "K (needs -o OUT_DIR)")
    add_engine_arguments(scale_out, shards="4 per CPU of the cluster")
    add_settings_arguments(parser, groups=groups)
    return parser


def add_engine_arguments(group: Any, *, shards: str) -> None:
    """``--engine``, ``--address`` and ``--shards`` (``shards``: their default count)."""
    group.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="ray: run the shards as Ray tasks (needs -o OUT_DIR and the "
                       "'ray' extra); default: local")
    group.add_argument("--address", metavar="ADDRESS",
                       help="with --engine ray: the cluster (auto, ray://HOST:10001); "
                       "default: start a local Ray")
    group.add_argument("--shards", type=int, metavar="N",
                       help=f"with --engine ray: how many shards; default: {shards} (or the "
                       "resumed run's)")


def add_settings_arguments(parser: argparse.ArgumentParser, *, batch: bool = True,
                           groups: Mapping[str, Any] | None = None) -> None:
    """``--config`` and a flag for every setting the command reads (``mcp`` passes
    ``batch=False``: no :data:`BATCH_ONLY` ones; the batch command has no :data:`NOT_BATCH`
    ones), in ``groups`` by their title when given; read them back with
    :func:`settings_from_args`."""
    def where(name: str) -> Any:  # a setting no group names stays loose (a test finds it)
        group = FILES if name == "config" else _GROUP_OF.get(name)
        return groups[group] if groups is not None and group is not None else parser

    def offered(name: str) -> bool:
        return name not in (NOT_BATCH if batch else BATCH_ONLY)

    where("config").add_argument("--config", metavar="FILE",
                                 help="TOML settings file (env PIPELINE_CONFIG)")
    for flag, name, keywords in _VALUED:
        if offered(name):
            where(name).add_argument(flag, dest=name, default=None, help=_default(name),
                                     **keywords)
    for flag, name, metavar in _REPEATED:
        if offered(name):
            whole = name in _WHOLE_VALUES
            where(name).add_argument(flag, dest=name, default=None, metavar=metavar,
                                     action="append" if whole else CommaList,
                                     help=f"repeatable{'' if whole else ' or A,B'}; "
                                     f"{_default(name)}")
    for flag, name, value in _SWITCHES:
        if offered(name):
            help_text = _HELP[name] if name in ("head", "cache", "detect_lang") \
                else _default(name)
            where(name).add_argument(flag, dest=name, action="store_const", const=value,
                                     default=None, help=help_text)


def _dispatch(name: str, argv: list[str]) -> int:
    module_name, _, function = SUBCOMMANDS[name].partition(":")
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        print(f"{PROG}: error: the '{name}' command is not available in this build",
              file=sys.stderr)
        return EXIT_USAGE
    return int(getattr(module, function)(argv) or 0)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from parsed flags > environment > config file; a bad value is named by its
    flag, variable or file."""
    overrides = {name: getattr(args, name) for name in Settings.model_fields if hasattr(args, name)}
    return load_settings(overrides, config_file=args.config, names=FLAG_OF)


def plan_from_args(args: argparse.Namespace, run_input: RunInput,
                   settings: Settings) -> RunPlan:
    """The run the flags ask for (typed and frozen: nothing under :mod:`pipeline.batch` sees
    the parsed flags), or a ``UsageError`` for flags that do not go together."""
    from pipeline.batch.run_plan import RunPlan

    mode = run_mode(args, settings)
    shard = None
    if mode == "shard":
        from pipeline.batch.shards.plan import parse_shard

        shard = parse_shard(args.shard)
    if args.shards is not None and args.shards < 1:
        raise UsageError("--shards must be at least 1")
    return RunPlan(mode, run_input, settings, output=args.output, resume=args.resume,
                   overwrite=args.overwrite, shard=shard, shards=args.shards,
                   address=args.address)


def run_mode(args: argparse.Namespace, settings: Settings) -> RunMode:
    """Which run the flags ask for, or a ``UsageError``."""
    if args.engine == "ray":
        if settings.processes > 1 or args.shard:
            raise UsageError("--engine ray runs every shard itself: drop --processes/--shard")
        return "ray"
    if args.shards is not None or args.address is not None:
        raise UsageError("--shards and --address go with --engine ray")
    if args.shard and settings.processes > 1:
        raise UsageError("--shard K/N runs one shard in this process: drop --processes")
    if args.shard:
        return "shard"
    return "processes" if settings.processes > 1 else "plain"


def _run(plan: RunPlan, fetcher: Fetcher | None) -> Summary:
    if plan.mode == "ray":
        from pipeline.batch.shards.ray_engine import run_ray

        return run_ray(plan)
    if plan.mode == "processes":
        from pipeline.batch.shards.processes import run_processes

        return run_processes(plan)
    if plan.mode == "shard":
        from pipeline.batch.shards.shard_run import run_one_shard

        return run_one_shard(plan, fetcher=fetcher)
    from pipeline.batch.run import run_batch

    return asyncio.run(run_batch(plan, fetcher=fetcher))


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush cannot fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None, *, fetcher: Fetcher | None = None) -> int:
    """Run the command line; returns the exit status. ``fetcher`` replaces the HTTP
    fetcher (for embedding and tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return _dispatch(argv[0], argv[1:])
    args: argparse.Namespace | None = None
    try:
        args = build_parser().parse_args(argv)
        if args.output == "-":  # as for the input: stdout
            args.output = None
        if args.resume and not args.output:
            raise UsageError("--resume needs -o OUT (the output to resume)")
        run_input = input_from_args(args)
        settings = settings_from_args(args)
        if args.input_note and not settings.quiet:  # the input's format, from its name
            print(f"{PROG}: {args.input_note}", file=sys.stderr)
        from pipeline.batch.run_check import check_run

        plan = plan_from_args(args, run_input, settings)
        check_run(plan, injected_fetcher=fetcher is not None)
        summary = _run(plan, fetcher)  # opens things only now
    except (UsageError, PipelineError) as exc:
        return usage_failure(exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; {_resume_hint(args)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Whoever read stdout is gone (``| head``): stop quietly, like any other filter.
        _drop_stdout()
        return EXIT_OK
    except OutputError as exc:  # a full disk: what was written is whole, so say how to go on
        assert args is not None  # nothing is written before the flags are read
        hint = ("free some space, then run the same command with --resume to finish"
                if args.output else "use -o OUT.jsonl to be able to --resume")
        print(f"{PROG}: error: cannot write {exc.filename}: {exc.strerror}; {hint}",
              file=sys.stderr)
        if not args.output:
            _drop_stdout()
        return EXIT_OUTPUT
    return _report(plan, summary)


def usage_failure(exc: UsageError | PipelineError) -> int:
    """A usage or configuration error, found before anything was fetched: its one line on
    stderr; the exit status."""
    message = exc.message if isinstance(exc, PipelineError) else str(exc)
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _resume_hint(args: argparse.Namespace | None) -> str:
    """How to go on after a stop (nothing was started yet when ``args`` is None)."""
    return "nothing was written" if args is None else _going_on(args.output)


def _going_on(output: str | None) -> str:
    """How to finish a run that wrote to ``output`` (None: stdout)."""
    return ("run the same command with --resume to finish" if output
            else "use -o OUT.jsonl to be able to --resume")


def _report(plan: RunPlan, summary: Summary) -> int:
    """The closing lines on stderr, and the exit status."""
    settings = plan.settings
    if not settings.quiet:
        print(f"{PROG}: {summary.describe()}", file=sys.stderr)
    for failure in summary.failed:
        print(f"{PROG}: {failure}", file=sys.stderr)
    if summary.interrupted or summary.failed:
        what = "interrupted" if summary.interrupted else "not every shard finished"
        print(f"{PROG}: {what}; finished records were written; {_going_on(plan.output)}",
              file=sys.stderr)
        return EXIT_INTERRUPTED if summary.interrupted else EXIT_FAILED
    if plan.sharded and plan.output and not settings.quiet:
        parts = os.path.join(plan.output, "part-*.jsonl")
        print(f"{PROG}: records are in {parts}; one file in input order: "
              f"{invoked_as()} merge {shlex.quote(plan.output)} -o OUT.jsonl", file=sys.stderr)
    return EXIT_OK


__all__ = ["SUBCOMMANDS", "build_parser", "main"]

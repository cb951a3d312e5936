"""``python -m pipeline crawl START_URL… -o OUT`` and ``python -m pipeline map START_URL -o
urls.txt``: a site's pages as records, or its URLs (docs/crawl.md).

Both take the batch command's page flags (politeness, rendering, content, cache, WARC,
dedup); the crawl's own flags say what to follow. Exit status as the batch command: 0 done,
2 a usage or configuration error (before anything is fetched), 74 the output not writable,
130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from pipeline.cli.command import (
    CACHE,
    CONTENT,
    CORPUS,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    FETCH,
    FILES,
    OUTPUT,
    RENDERING,
    SCALE_OUT,
    _Parser,
    add_engine_arguments,
    add_settings_arguments,
    invoked_as,
    settings_from_args,
    usage_failure,
)
from pipeline.core.errors import PROG, OutputError, PipelineError, UsageError
from pipeline.core.settings import Settings

CRAWL = "crawl (see docs/crawl.md)"
_SWITCHES = (
    ("--ignore-robots", "do not obey robots.txt (obeyed by default, Crawl-delay too)"),
    ("--follow-nofollow", "follow rel=nofollow links too"),
    ("--no-sitemap", "do not seed the crawl from the sitemaps robots.txt names (or "
     "/sitemap.xml)"),
)


def _add_crawl_arguments(parser: argparse.ArgumentParser, output: Any, *,
                         mapping: bool) -> None:
    from pipeline.crawl.scope import SCOPES

    group = parser.add_argument_group(CRAWL)
    parser.add_argument("starts", metavar="START_URL", nargs="+",
                        help="http(s) page(s) the crawl starts from (depth 0)")
    group.add_argument("--scope", choices=SCOPES, default="origin",
                       help="what may be fetched: origin (the start page's scheme, host and "
                       "port, after its redirects), domain (its registrable domain and "
                       "subdomains), prefix (its directory, by whole segments), any; "
                       "default: origin")
    group.add_argument("--include", action="append", default=[], metavar="GLOB",
                       help="repeatable: only URLs whose path?query matches one (* within a "
                       "segment, ** across; '/docs/**')")
    group.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                       help="repeatable: never URLs whose path?query matches ('*.pdf', "
                       "'/search?*')")
    group.add_argument("--max-depth", type=int, metavar="N",
                       help="link hops from a start page (sitemap URLs are depth 0 too)")
    group.add_argument("--max-pages", type=int, default=1000, metavar="N",
                       help="at most N pages (records); default: 1000")
    group.add_argument("--max-pages-per-prefix", type=int, metavar="N",
                       help="at most N pages under one first path segment of a host")
    for flag, text in _SWITCHES:
        group.add_argument(flag, action="store_true", help=text)
    group.add_argument("--skipped", metavar="FILE",
                       help="write every URL not fetched, with its reason, as JSON lines")
    output.add_argument("-o", "--output", metavar="OUT",
                        help=("URLs, one a line (OUT.jsonl: JSON lines with depth, parent, "
                              "title); default: stdout") if mapping else
                        "records as JSON lines (OUT.parquet: Parquet); default: stdout")
    output.add_argument("--resume", action="store_true",
                        help=f"go on with a {'map' if mapping else 'crawl'} that was stopped "
                        "(even by kill -9): the pages done are not fetched again, the rest "
                        "of its frontier log (OUT.frontier.jsonl) is crawled")
    output.add_argument("--overwrite", action="store_true",
                        help="replace what OUT holds (a non-empty OUT is refused otherwise)")
    if not mapping:
        _add_shard_arguments(parser)


def _add_shard_arguments(parser: argparse.ArgumentParser) -> None:
    """A sharded crawl's flags (``--processes N`` is a setting's)."""
    group = next(group for group in parser._action_groups if group.title == SCALE_OUT)
    add_engine_arguments(group, shards="one per CPU of the cluster")


def build_parser(*, mapping: bool) -> argparse.ArgumentParser:
    name = "map" if mapping else "crawl"
    parser = _Parser(
        prog=f"{invoked_as()} {name}",
        description=("Find a site's pages from start pages (sitemaps and links, in scope and "
                     "on budget) and write their URLs." if mapping else
                     "Crawl a site from start pages: every page in scope once, as a record "
                     "(the batch command's JSON lines)."),
    )
    groups = {title: parser.add_argument_group(title) for title in
              (OUTPUT, FETCH, CONTENT, RENDERING, CORPUS, SCALE_OUT, CACHE, FILES)}
    _add_crawl_arguments(parser, groups[OUTPUT], mapping=mapping)
    add_settings_arguments(parser, groups=groups)
    return parser


def _options(args: argparse.Namespace) -> Any:
    from pipeline.crawl.run import CrawlOptions

    for flag, value in (("--max-pages", args.max_pages), ("--max-depth", args.max_depth),
                        ("--max-pages-per-prefix", args.max_pages_per_prefix)):
        if value is not None and value < (0 if flag == "--max-depth" else 1):
            raise UsageError(f"{flag} must be at least {0 if flag == '--max-depth' else 1}")
    return CrawlOptions(scope=args.scope, include=tuple(args.include),
                        exclude=tuple(args.exclude), max_depth=args.max_depth,
                        max_pages=args.max_pages,
                        max_pages_per_prefix=args.max_pages_per_prefix,
                        robots=not args.ignore_robots, follow_nofollow=args.follow_nofollow,
                        sitemap=not args.no_sitemap, links=bool(args.links))


def _check(args: argparse.Namespace, settings: Settings, *, mapping: bool) -> None:
    """Everything that can be judged before a request (UsageError, PipelineError)."""
    from pipeline.batch.output.output_check import OutputTarget, check_output
    from pipeline.batch.run_check import check_config, check_corpus
    from pipeline.crawl.rules import Rules
    from pipeline.crawl.run import check_start_urls

    check_start_urls(args.starts)
    Rules.compile(args.include, args.exclude)
    if mapping and settings.processes > 1:
        raise UsageError("map runs in one process: drop --processes")
    if _sharded(args, settings):
        _check_sharded(args, settings)
        return
    if mapping and args.output is not None and args.output.lower().endswith(".parquet"):
        raise UsageError("map writes URLs: -o urls.txt or urls.jsonl")
    resume = args.resume
    if resume and args.output is None:
        raise UsageError("--resume needs -o OUT (the output and its frontier log)")
    check_output(OutputTarget(args.output), input_path=None, resume=resume,
                 overwrite=args.overwrite)
    check_config(settings)
    check_corpus("plain", settings)


def _sharded(args: argparse.Namespace, settings: Settings) -> bool:
    """A sharded crawl (``--processes N``, ``--engine ray``), which writes a directory."""
    return settings.processes > 1 or getattr(args, "engine", "local") == "ray"


def _check_sharded(args: argparse.Namespace, settings: Settings) -> None:
    from pipeline.batch.output.output_check import OutputTarget, check_output
    from pipeline.batch.run_check import check_config, check_corpus, check_sharded_output

    ray = args.engine == "ray"
    if ray and settings.processes > 1:
        raise UsageError("--engine ray runs every shard itself: drop --processes")
    if args.shards is not None and args.shards < 1:
        raise UsageError("--shards must be at least 1")
    check_sharded_output(args.output, "--engine ray" if ray else "--processes")
    check_output(OutputTarget(args.output, directory=True), input_path=None,
                 resume=args.resume, overwrite=args.overwrite)
    check_config(settings)
    check_corpus("ray" if ray else "processes", settings)


def _run_sharded(args: argparse.Namespace, settings: Settings, options: Any) -> Any:
    """A sharded crawl into the directory ``-o`` names (docs/crawl.md)."""
    from pipeline.crawl.shards import ShardedCrawl

    plan = ShardedCrawl(tuple(args.starts), options, settings, args.output,
                        args.shards if args.engine == "ray" else settings.processes,
                        engine=args.engine, resume=args.resume, overwrite=args.overwrite,
                        skipped=args.skipped, address=args.address)
    if args.engine == "ray":
        from pipeline.crawl.ray_crawl import run_crawl_ray

        return run_crawl_ray(plan)
    from pipeline.crawl.processes import run_crawl_processes

    return run_crawl_processes(plan)


def _open_skipped(path: str | None, *, append: bool) -> IO[str] | None:
    if path is None:
        return None
    try:
        return open(path, "a" if append else "w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from exc


def _main(argv: Sequence[str], *, mapping: bool) -> int:
    from pipeline.batch.output.sinks import repair_tail
    from pipeline.batch.run import STOP_SIGNALS, RunOutput, open_sink, scan_output
    from pipeline.crawl.ledger import Ledger
    from pipeline.crawl.resume import FrontierLog, log_path, read_resume
    from pipeline.crawl.run import CrawlResult, run_crawl

    try:
        args = build_parser(mapping=mapping).parse_args(list(argv))
        if args.output == "-":
            args.output = None
        settings = settings_from_args(args)
        options = _options(args)
        _check(args, settings, mapping=mapping)
        if not mapping and (args.shards is not None or args.address is not None) \
                and args.engine != "ray":
            raise UsageError("--shards and --address go with --engine ray")
        if not mapping and _sharded(args, settings):
            return _report(_run_sharded(args, settings, options), settings, args.output)
        resume = args.resume
        resumed = None
        if resume:
            # a torn last line (kill -9) is cut off first
            if not mapping:
                scan_output(args.output)
            elif os.path.isfile(args.output):
                repair_tail(args.output)
            resumed = read_resume(args.output, mapping=mapping)
            if not settings.quiet:
                print(f"{PROG}: resuming: {len(resumed.done)} pages already done in "
                      f"{args.output}, {len(resumed.queued)} URLs in its frontier log",
                      file=sys.stderr)
        ledger = Ledger(_open_skipped(args.skipped, append=resume))
        log = (FrontierLog(log_path(args.output), append=resume)
               if args.output is not None else None)
        if mapping:
            open_output = _map_output(args.output, log, append=resume)
        else:
            def open_output() -> RunOutput:
                sink = open_sink(args.output, append=resume)
                return RunOutput(sink.write, sink.close)
        try:
            result: CrawlResult = asyncio.run(run_crawl(
                args.starts, options, settings, open_output, ledger=ledger,
                signals=STOP_SIGNALS, log=log, resumed=resumed))
        finally:
            ledger.close()
            if log is not None:
                log.close()
    except (UsageError, PipelineError) as exc:
        return usage_failure(exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; finished records were written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OutputError as exc:
        print(f"{PROG}: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_OUTPUT
    return _report(result, settings, None)


def _report(result: Any, settings: Settings, directory: str | None) -> int:
    """The closing lines on stderr, and the exit status (``directory``: a sharded crawl's)."""
    if not settings.quiet:
        print(f"{PROG}: {result.describe()}", file=sys.stderr)
    for failure in result.summary.failed:
        print(f"{PROG}: {failure}", file=sys.stderr)
    if result.summary.interrupted or result.summary.failed:
        print(f"{PROG}: {'interrupted' if result.summary.interrupted else 'a shard failed'}; "
              "finished records were written", file=sys.stderr)
        return EXIT_INTERRUPTED if result.summary.interrupted else EXIT_FAILED
    if directory is not None and not settings.quiet:
        print(f"{PROG}: records are in {directory}/part-*.jsonl; one file: {invoked_as()} "
              f"merge {directory} -o OUT.jsonl", file=sys.stderr)
    return EXIT_OK


def _written_urls(path: str, *, as_json: bool) -> set[str]:
    """The URLs a stopped map's output holds (its torn last line already cut off)."""
    urls: set[str] = set()
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as lines:
        for line in lines:
            if not as_json:
                urls.add(line.rstrip("\n"))
                continue
            with contextlib.suppress(ValueError):
                if isinstance(row := json.loads(line), dict) and isinstance(row.get("url"), str):
                    urls.add(row["url"])
    return urls


def _map_output(path: str | None, log: Any = None, *, append: bool = False
                ) -> Callable[[], Any]:
    """A map's output: URL lines, or JSON lines for ``.jsonl``. With ``log`` (the frontier
    log), each page is logged done once its line is in the file (``map --resume`` knows the
    pages done from it); with ``append`` (a resumed map), a URL the file holds already is
    not written again (its page was done, not yet logged, when the map stopped)."""
    from pipeline.batch.run import RunOutput
    from pipeline.core.models import Record
    from pipeline.crawl.run import mapped

    def open_output() -> RunOutput:
        as_json = path is not None and path.lower().endswith(".jsonl")
        written = _written_urls(path, as_json=as_json) if append and path else set()
        try:
            # closed by the output's close()
            stream = sys.stdout if path is None else open(  # noqa: SIM115
                path, "a" if append else "w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror}") from exc

        def write(record: Record) -> None:
            # a page that failed is no URL of the site's map, but it is done
            found = mapped(record) if record.ok else None
            if found is not None and found.url not in written:
                if as_json:
                    stream.write(json.dumps({"url": found.url, "depth": found.depth,
                                             "parent": found.parent, "title": found.title,
                                             "via": found.via}, ensure_ascii=False) + "\n")
                else:
                    stream.write(found.url + "\n")
            if log is not None:
                stream.flush()  # the line reaches the file before the log says it is done
                log.event(f=record.url, i=record.index)
                log.flush()

        def close() -> None:
            if stream is sys.stdout:
                stream.flush()
            else:
                stream.close()

        return RunOutput(write, close)

    return open_output


def crawl_main(argv: Sequence[str]) -> int:
    return _main(argv, mapping=False)


def map_main(argv: Sequence[str]) -> int:
    return _main(argv, mapping=True)


__all__ = ["crawl_main", "map_main"]

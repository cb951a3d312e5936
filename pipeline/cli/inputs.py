"""The batch command's input flags: tables, sitemaps and feeds, local files.

:func:`add_input_arguments` declares them; :func:`input_from_args` checks them (a mistake is
a ``UsageError``, before any output is opened) and builds the run's
:class:`~pipeline.batch.input.sources.RunInput`.
"""

from __future__ import annotations

import argparse
import os
import re

from pipeline.batch.input.run_input import DEFAULT_DEPTH, ExpandOptions, RunInput
from pipeline.batch.input.tables import (
    INPUT_FORMATS,
    check_table,
    format_by_name,
    table_hint,
)
from pipeline.core.errors import UsageError
from pipeline.fetch.local_files import LocalFiles

_HTTP = re.compile(r"https?://", re.IGNORECASE)  # an argument that is a URL, not a path


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("input (see docs/inputs.md)")
    group.add_argument("--input-format", choices=(*INPUT_FORMATS, "warc"), default=None,
                       help="lines: the first field of each line is the URL; csv/tsv (a header "
                       "row) and jsonl: one column is, the others travel as the record's "
                       "'input'; warc: URLS are WARC files, directories or lists of them, "
                       "whose response records are extracted without fetching (extra "
                       "'warc'); default: by the file's name (.csv, .tsv, .jsonl, .warc, "
                       ".warc.gz), else lines")
    group.add_argument("--warc-captures", choices=("last", "all"), default=None,
                       help="with --input-format warc, a URL captured several times (a "
                       "retried fetch): one record from its last capture (default), or one "
                       "per capture")
    group.add_argument("--url-column", metavar="NAME|N",
                       help="the URL column of a table (N counts from 1); default: the "
                       "column named 'url', else the first")
    group.add_argument("--sitemap", action="append", default=[], metavar="URL",
                       help="repeatable; fetch this sitemap (index, .xml.gz, robots.txt) and "
                       "extract every URL it lists, recursively")
    group.add_argument("--feed", action="append", default=[], metavar="URL",
                       help="repeatable; extract the item links of this RSS, Atom or JSON feed")
    group.add_argument("--max-urls", type=int, metavar="N",
                       help="with --sitemap/--feed: stop after N URLs")
    group.add_argument("--sitemap-depth", type=int, default=DEFAULT_DEPTH, metavar="N",
                       help="sitemap indexes followed at most N levels below the root; "
                       f"default: {DEFAULT_DEPTH}")
    group.add_argument("--include", action="append", default=[], metavar="REGEX",
                       help="repeatable; with --sitemap/--feed: keep only URLs matching one")
    group.add_argument("--exclude", action="append", default=[], metavar="REGEX",
                       help="repeatable; with --sitemap/--feed: drop URLs matching one")
    group.add_argument("--same-host", action="store_true",
                       help="with --sitemap/--feed: keep only URLs on the root's host")
    group.add_argument("--allow-files", metavar="DIR",
                       help="read input lines that are paths or file: URLs, if they lie "
                       "under DIR (symlinks resolved); relative paths start at the list's "
                       "directory")


def _patterns(flag: str, patterns: list[str]) -> tuple[str, ...]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"{flag} {pattern!r}: not a regular expression ({exc})") from None
    return tuple(patterns)


def _roots(flag: str, urls: list[str]) -> tuple[str, ...]:
    for url in urls:
        if not _HTTP.match(url):
            raise UsageError(f"{flag} wants an http(s) URL, not {url[:200]!r}")
    return tuple(urls)


def _input_format(path: str | None, given: str | None) -> tuple[str, str | None]:
    """The input's format and a note for stderr when it was read off the file's name; a
    ``UsageError`` when a URL list's first line is a table's header."""
    if given is not None:
        return given, None
    named = format_by_name(path)
    if named is not None:
        return named, (f"reading {path} as {named} (by its name; --input-format lines reads "
                       "it as URL lines)")
    hinted = table_hint(path) if path is not None and os.path.exists(path) else None
    if hinted is not None:
        raise UsageError(f"{path} looks like a {hinted} table (its first line is not a URL): "
                         f"add --input-format {hinted}, or --input-format lines to read it "
                         "as URL lines")
    return "lines", None


def input_from_args(args: argparse.Namespace) -> RunInput:
    """The run's input as the flags describe it; a ``UsageError`` for any mistake."""
    expand = ExpandOptions(
        sitemaps=_roots("--sitemap", args.sitemap), feeds=_roots("--feed", args.feed),
        max_urls=args.max_urls, max_depth=args.sitemap_depth,
        include=_patterns("--include", args.include),
        exclude=_patterns("--exclude", args.exclude), same_host=args.same_host)
    args.input_note = None
    if args.input_format is None and str(args.urls).lower().endswith((".warc", ".warc.gz")) \
            and not _HTTP.match(str(args.urls)):
        args.input_format = "warc"
        args.input_note = (f"reading {args.urls} as WARC (by its name; --input-format lines "
                           "reads it as URL lines)")
    if args.input_format == "warc":
        return _warc_input(args, expand)
    if getattr(args, "warc_captures", None) is not None:
        raise UsageError("--warc-captures goes with --input-format warc")
    given = _url_arguments(args)
    if given:  # URLs to run over, not the paths of lists
        if args.input_format not in (None, "lines") or args.url_column is not None:
            raise UsageError("URL arguments are read as URLs: drop --input-format and "
                             "--url-column (they describe a list file)")
        args.urls, args.more_inputs = None, []
    if getattr(args, "more_inputs", None):
        raise UsageError(f"one URL list at a time (several inputs go with --input-format "
                         f"warc): {args.more_inputs[0]!r}")
    if args.urls is None and not expand.roots and not given:
        raise UsageError("give URLS (a file, '-' for stdin, or http(s) URLs), --sitemap URL "
                         "or --feed URL")
    if not expand.roots and (args.max_urls is not None or args.include or args.exclude
                             or args.same_host):
        raise UsageError("--max-urls, --include, --exclude and --same-host go with "
                         "--sitemap/--feed")
    if args.max_urls is not None and args.max_urls < 1:
        raise UsageError("--max-urls must be at least 1")
    if args.sitemap_depth < 0:
        raise UsageError("--sitemap-depth must be at least 0")
    args.input_format, args.input_note = _input_format(args.urls, args.input_format)
    if args.url_column is not None and args.input_format == "lines":
        raise UsageError("--url-column goes with --input-format csv, tsv or jsonl")
    if args.urls not in (None, "-") and not os.path.exists(args.urls):
        raise UsageError(f"no such file: {args.urls}")
    local_files = None
    if args.allow_files is not None:
        base = os.path.dirname(args.urls) if args.urls not in (None, "-") else os.curdir
        local_files = LocalFiles(args.allow_files, base or os.curdir)
    if args.urls is not None:
        check_table(args.urls, args.input_format, args.url_column)
    return RunInput(args.urls, args.input_format, args.url_column, expand, local_files,
                    given=given)


def _url_arguments(args: argparse.Namespace) -> tuple[str, ...]:
    """The positional arguments when they are http(s) URLs (a run over them); () when they
    are a list's path; a ``UsageError`` when URLs and paths are mixed."""
    given = [args.urls, *(getattr(args, "more_inputs", None) or [])] \
        if args.urls is not None else []
    urls = tuple(arg for arg in given if _HTTP.match(arg))
    if urls and len(urls) < len(given):
        path = next(arg for arg in given if not _HTTP.match(arg))
        raise UsageError(f"give http(s) URLs or one list of them, not both: {path!r}")
    return urls


def _warc_input(args: argparse.Namespace, expand: ExpandOptions) -> RunInput:
    """``--input-format warc``: the paths checked, fastwarc installed."""
    from pipeline.batch.input.warc_in import WarcRecords
    from pipeline.batch.output.warc_out import require_fastwarc

    paths = [args.urls, *(getattr(args, "more_inputs", None) or [])]
    if args.urls in (None, "-"):
        raise UsageError("--input-format warc reads WARC files, directories or lists of "
                         "them: give their paths (not stdin)")
    if expand.roots or args.allow_files is not None or args.url_column is not None:
        raise UsageError("--input-format warc takes no --sitemap, --feed, --allow-files or "
                         "--url-column: its URLs are the WARC records'")
    for path in paths:
        if not os.path.exists(path):
            raise UsageError(f"no such file: {path}")
        if not (os.path.isfile(path) or os.path.isdir(path)):  # opening a FIFO would block
            raise UsageError(f"{path} is not a file nor a directory (a FIFO, socket or "
                             "device): WARC input reads files")
    require_fastwarc("--input-format warc")
    return RunInput(args.urls, "warc", None, expand, WarcRecords(), tuple(paths[1:]),
                    getattr(args, "warc_captures", None) or "last")

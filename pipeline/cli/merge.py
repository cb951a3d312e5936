"""``python -m pipeline merge OUT_DIR [-o OUT.jsonl] [--dedup exact|near]``: a finished sharded
run's parts as one file in input order (:mod:`pipeline.batch.output.merge`), its duplicates
marked again across shards with ``--dedup``. The output is checked first as the
batch command's is: never a file inside the run directory, never one that holds records
unless ``--overwrite``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.batch.dedup import Deduplicator
from pipeline.batch.output.merge import merge_to
from pipeline.batch.output.output_check import check_merge_output
from pipeline.cli.command import command_parser, parse_command
from pipeline.core.errors import PROG, UsageError


def merge_main(argv: Sequence[str]) -> int:
    parser = command_parser(
        "merge", description="Merge the parts of a sharded run (--shard, --processes, "
        "--engine ray) into one JSONL file in input order (or Parquet: -o OUT.parquet).")
    parser.add_argument("directory", metavar="OUT_DIR", help="the sharded run's output")
    parser.add_argument("-o", "--output", metavar="OUT.jsonl",
                        help="write here ('-' or default: stdout); a name ending in .parquet "
                        "writes Parquet")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace what OUT holds (refused without it)")
    parser.add_argument("--dedup", choices=("off", "exact", "near"), default="off",
                        help="mark duplicates again across the shards, in input order "
                        "(each shard marked its own); default: off")
    parser.add_argument("--drop-duplicates", action="store_true",
                        help="with --dedup: a duplicate becomes a 'filtered' record without "
                        "content")
    args = parse_command(parser, argv)
    if isinstance(args, int):
        return args
    if args.output == "-":  # as for the batch command: stdout
        args.output = None
    try:
        if args.drop_duplicates and args.dedup == "off":
            raise UsageError("--drop-duplicates goes with --dedup exact|near")
        deduplicator = (None if args.dedup == "off"
                        else Deduplicator(args.dedup, drop=args.drop_duplicates))
        check_merge_output(args.output, Path(args.directory), overwrite=args.overwrite)
        count = merge_to(Path(args.directory), args.output, deduplicator)
    except UsageError as exc:
        print(f"{PROG} merge: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG} merge: error: {exc.filename or args.directory}: {exc.strerror}",
              file=sys.stderr)
        return 2
    if args.output:
        print(f"{PROG}: {count} records merged into {args.output}", file=sys.stderr)
    return 0

"""The batch command's flags as a run plan (:class:`pipeline.batch.run_plan.RunPlan`): the
one place the parsed flags become typed values; which run they ask for is decided here."""

from __future__ import annotations

import argparse

from pipeline.batch.input.run_input import RunInput
from pipeline.batch.run_plan import RunMode, RunPlan
from pipeline.core.errors import UsageError
from pipeline.core.settings import Settings


def plan_from_args(args: argparse.Namespace, run_input: RunInput,
                   settings: Settings) -> RunPlan:
    """The run the flags ask for, or a ``UsageError`` for flags that do not go together."""
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

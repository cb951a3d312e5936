"""The run plan: the command line's flags become one typed, frozen value, and the flags that
do not go together are refused there."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.batch.run_plan import RunPlan
from pipeline.cli.command import build_parser, plan_from_args, settings_from_args
from pipeline.cli.inputs import input_from_args
from pipeline.core.errors import UsageError


def plan(tmp_path, *flags: str) -> RunPlan:
    urls = tmp_path / "urls.txt"
    urls.write_text("http://example.test/\n")
    args = build_parser().parse_args([str(urls), *flags])
    return plan_from_args(args, input_from_args(args), settings_from_args(args))


@pytest.mark.parametrize("flags, mode, shard", [
    ((), "plain", None),
    (("--shard", "1/4", "-o", "out"), "shard", (1, 4)),
    (("--processes", "2", "-o", "out"), "processes", None),
    (("--engine", "ray", "--shards", "8", "-o", "out"), "ray", None),
])
def test_the_flags_make_a_plan_of_one_mode(tmp_path, flags, mode, shard):
    made = plan(tmp_path, *flags)
    assert made.mode == mode and made.shard == shard
    assert made.sharded is (mode != "plain")
    assert made.input.path == str(tmp_path / "urls.txt")
    if mode == "processes":
        assert made.settings.processes == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.mode = "plain"  # type: ignore[misc]


def test_the_plan_carries_the_output_and_how_to_treat_it(tmp_path):
    made = plan(tmp_path, "-o", "out.jsonl", "--resume", "--concurrency", "7")
    assert (made.output, made.resume, made.overwrite) == ("out.jsonl", True, False)
    assert made.settings.concurrency == 7
    assert plan(tmp_path, "-o", "out.jsonl", "--overwrite").overwrite


@pytest.mark.parametrize("flags, message", [
    (("--engine", "ray", "--processes", "2"), "--engine ray runs every shard itself"),
    (("--shards", "4",), "--shards and --address go with --engine ray"),
    (("--address", "auto"), "--shards and --address go with --engine ray"),
    (("--shard", "0/2", "--processes", "2"), "drop --processes"),
    (("--engine", "ray", "--shards", "0"), "--shards must be at least 1"),
    (("--shard", "2/2"), "--shard wants K/N"),
])
def test_flags_that_do_not_go_together_are_refused(tmp_path, flags, message):
    with pytest.raises(UsageError, match=message):
        plan(tmp_path, *flags)

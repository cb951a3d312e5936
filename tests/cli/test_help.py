"""The batch command's --help: flags in groups, only defaults that say something, and no flag
the batch command does not read (issue 33, item 9)."""

from __future__ import annotations

import re

from pipeline.cli import command as cli
from pipeline.cli import mcp

GROUPS = ["input", "output", "fetch and politeness", "content", "rendering", "corpus",
          "scale-out", "cache and compressor", "settings files"]


def help_text(parser) -> str:
    return parser.format_help()


def test_every_flag_is_in_a_named_group_in_order():
    parser = cli.build_parser()
    titles = [group.title for group in parser._action_groups]
    assert titles[:2] == ["positional arguments", "options"]
    assert [re.sub(r" \(see .*\)$", "", title) for title in titles[2:]] == GROUPS
    loose = [action.dest for action in parser._action_groups[1]._group_actions]
    assert loose == ["help", "version"], "give each flag a group: command._GROUP_OF"
    assert all(group._group_actions for group in parser._action_groups)


def test_no_default_that_says_nothing():
    for parser in (cli.build_parser(), mcp.build_parser()):
        text = " ".join(help_text(parser).split())  # unwrapped
        assert not re.findall(r"default: (?:\[\]|None|\{\}|False)", text)
    text = " ".join(help_text(cli.build_parser()).split())
    assert "default: 64" in text and "default: markdown" in text  # the meaningful ones stay


def test_library_and_mcp_only_flags_are_not_in_the_batch_help():
    assert "--no-cache" not in help_text(cli.build_parser())
    assert "--no-cache" in help_text(mcp.build_parser())
    assert "--ordered" not in help_text(mcp.build_parser())  # BATCH_ONLY, as before

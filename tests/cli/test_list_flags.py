"""Repeatable flags whose values hold no comma also take ``A,B``; the others keep commas."""

from __future__ import annotations

import pytest

from pipeline.cli import command as cli
from pipeline.cli.mcp import build_parser as mcp_parser
from pipeline.cli.search import _search_parser


@pytest.mark.parametrize("flag, name, given, expected", [
    ("--allow-net", "allow_net", ["127.0.0.1/32,10.0.0.0/8", "192.168.0.0/16"],
     ["127.0.0.1/32", "10.0.0.0/8", "192.168.0.0/16"]),
    ("--allow-proxy-net", "allow_proxy_net", ["127.0.0.1/32, 10.0.0.0/8"],
     ["127.0.0.1/32", "10.0.0.0/8"]),
    ("--backend", "backend", ["jina,native"], ["jina", "native"]),
    ("--extract-backend", "extract_backend", ["tavily,", "native"], ["tavily", "native"]),
    ("--handler", "handlers", ["a.b:C,d.e:F"], ["a.b:C", "d.e:F"]),
])
def test_a_list_flag_takes_comma_separated_values(flag, name, given, expected):
    argv = ["urls.txt", *(part for value in given for part in (flag, value))]
    args = cli.build_parser().parse_args(argv)
    assert getattr(args, name) == expected


def test_a_header_keeps_its_commas():
    args = cli.build_parser().parse_args(["urls.txt", "--header", "Accept: text/html, */*"])
    assert cli.settings_from_args(args).headers == {"Accept": "text/html, */*"}


def test_patterns_and_roots_keep_their_commas():
    args = cli.build_parser().parse_args([
        "urls.txt", "--include", "/p/[0-9]{1,3}$", "--exclude", "a,b",
        "--sitemap", "https://example.test/map?a=1,2"])
    assert (args.include, args.exclude) == (["/p/[0-9]{1,3}$"], ["a,b"])
    assert args.sitemap == ["https://example.test/map?a=1,2"]


def test_search_and_mcp_list_flags_take_comma_separated_values():
    args = _search_parser().parse_args(["q", "--include-domain", "a.org,b.org",
                                        "--include-domain", "c.org",
                                        "--exclude-domain", "x.org, y.org"])
    assert args.include_domain == ["a.org", "b.org", "c.org"]
    assert args.exclude_domain == ["x.org", "y.org"]
    assert mcp_parser().parse_args(["--search-backend", "brave,duckduckgo"]).search_backend == [
        "brave", "duckduckgo"]

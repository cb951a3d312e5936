"""``search`` and ``backends`` commands, against a local SearXNG stand-in."""

import asyncio
import io
import json
import socket

import pytest

from pipeline.cli.search import OFFLINE_HINT, backends_main, search_main
from tests.support.scripted_server import reply_json, reply_text

ANSWER = {"query": "q", "results": [
    {"url": "https://a.example/", "title": "A", "content": "first", "score": 2.0},
    {"url": "https://b.example/", "title": "B", "content": "second"}]}


class Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY",
                 "FIRECRAWL_API_KEY", "FIRECRAWL_API_URL", "JINA_API_KEY", "SEARXNG_URL",
                 "PIPELINE_BACKEND", "PIPELINE_SEARCH_BACKEND", "PIPELINE_EXTRACT_BACKEND",
                 "PIPELINE_CONFIG"):
        monkeypatch.delenv(name, raising=False)


async def run(main, argv, out=None):
    out = out if out is not None else io.StringIO()
    code = await asyncio.to_thread(main, argv, stdout=out)
    return code, out.getvalue()


async def test_search_json_lines_when_not_a_tty(server, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", server.url)
    server.route("GET", "/search", reply_json(ANSWER))
    code, out = await run(search_main, ["open", "source", "--backend", "searxng",
                                        "--max-results", "9999", "--time-range", "week"])
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["position"] for r in rows] == [1, 2]
    assert rows[0] == {"title": "A", "url": "https://a.example/", "snippet": "first",
                       "position": 1, "score": 2.0, "published": None, "provider": "searxng"}
    assert server.requests[0].query["q"] == "open source"


async def test_search_table_on_a_tty(server, monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", server.url)
    server.route("GET", "/search", reply_json(ANSWER))
    code, out = await run(search_main, ["q", "--backend", "searxng"], Tty())
    assert code == 0
    assert "  1. A\n     https://a.example/\n     first" in out
    assert "2 results from searxng" in out


async def test_search_failure_exits_1_with_error_on_stderr(server, monkeypatch, capsys):
    monkeypatch.setenv("SEARXNG_URL", server.url)
    server.route("GET", "/search", reply_text("nope", status=403))
    code, out = await run(search_main, ["q", "--backend", "searxng"])
    assert code == 1 and out == ""
    assert "error: provider: searxng:" in capsys.readouterr().err


def one_line_error(capsys, command: str) -> str:
    """The single stderr line a usage or config error gives, without its prefix."""
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    prefix = f"extract-pipeline {command}: error: "
    assert line.startswith(prefix), line
    return line.removeprefix(prefix)


@pytest.mark.parametrize("argv, message", [
    ([], "the following arguments are required: query (see --help)"),
    (["q", "--max-results", "many"], "argument --max-results: invalid int value: 'many'"),
    (["q", "--time-range", "decade"], "argument --time-range: invalid choice: 'decade'"),
    (["q", "--config", "missing.toml"], "config file not found: missing.toml"),
    (["q", "--include-domain", "not a domain", "--backend", "duckduckgo"],
     "--include-domain: 'not a domain' is not valid (only results from these domains)"),
    (["q", "--language", "$$", "--backend", "duckduckgo"],
     "--language: '$$' is not valid (result language, e.g. 'en' or 'pt-BR')"),
])
def test_search_usage_and_config_errors_are_one_line_and_exit_2(argv, message, capsys):
    assert search_main(argv) == 2
    assert message in one_line_error(capsys, "search")


@pytest.mark.parametrize("argv, message", [
    (["--bogus"], "unrecognized arguments: --bogus (see --help)"),
    (["--config", "missing.toml"], "config file not found: missing.toml"),
])
def test_backends_usage_and_config_errors_are_one_line_and_exit_2(argv, message, capsys):
    assert backends_main(argv) == 2
    assert message in one_line_error(capsys, "backends")


def test_help_names_the_program_as_invoked(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["/somewhere/pipeline/__main__.py", "search", "--help"])
    assert search_main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: python -m pipeline search ")
    monkeypatch.setattr("sys.argv", ["/venv/bin/extract-pipeline", "backends", "--help"])
    assert backends_main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: extract-pipeline backends ")


def test_backends_table(monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    out = io.StringIO()
    assert backends_main([], stdout=out) == 0
    text = out.getvalue()
    assert "brave       ready" in text
    assert "search   → brave → duckduckgo  (auto-detected from BRAVE_API_KEY)" in text
    assert "extract  → native  (zero-key default)" in text


def test_backends_json_and_config_error(monkeypatch):
    monkeypatch.setenv("PIPELINE_EXTRACT_BACKEND", "brave")
    out = io.StringIO()
    assert backends_main(["--json"], stdout=out) == 1
    report = json.loads(out.getvalue())
    assert {p["name"] for p in report["providers"]} >= {"duckduckgo", "native", "jina"}
    assert report["selection"]["search"]["chain"] == ["duckduckgo"]
    assert "cannot extract" in report["selection"]["extract"]["error"]


def test_a_named_backend_without_its_key_is_a_config_error_not_another_vendor(capsys):
    assert search_main(["x", "--backend", "brave"]) == 2  # no query leaves the machine
    message = one_line_error(capsys, "search")
    assert "'brave', which is not configured (set BRAVE_API_KEY)" in message
    assert message.endswith("configured search providers: duckduckgo")


async def test_a_provider_out_of_reach_says_what_to_do(monkeypatch, capsys):
    with socket.socket() as closed:  # a port nothing listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("SEARXNG_URL", f"http://127.0.0.1:{port}")
    code, out = await run(search_main, ["q", "--backend", "searxng"])
    assert code == 1 and out == ""
    [line] = capsys.readouterr().err.splitlines()
    assert "searxng: network error" in line
    assert line.endswith(f"; {OFFLINE_HINT}")


async def test_a_provider_that_answered_gets_no_network_hint(server, monkeypatch, capsys):
    monkeypatch.setenv("SEARXNG_URL", server.url)
    server.route("GET", "/search", reply_text("nope", status=403))
    assert (await run(search_main, ["q", "--backend", "searxng"]))[0] == 1
    assert "network" not in capsys.readouterr().err

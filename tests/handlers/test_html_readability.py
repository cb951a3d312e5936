"""``--html-extractor readability``: readability-lxml picks the block, the rest is ours."""

from __future__ import annotations

import sys

import pytest

from handlers.html import HTML_HANDLER
from handlers.registry import HandlerContext
from pipeline.agent.kernel import web_extract
from pipeline.cli import command as cli
from pipeline.cli.mcp import build_parser as mcp_parser
from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings
from tests.support.records import read_records, text_fetcher

PARA = ("The council met on Tuesday to discuss the new bridge, which has been delayed twice, "
        "and agreed to publish the engineers' report before the summer recess. ")
PAGE = (
    "<html><head><title>Bridge report due - Town News</title>"
    "<meta property='article:published_time' content='2024-09-05T10:00:00+02:00'></head>"
    "<body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
    f"<article><h1>Bridge report due</h1><p>{PARA}</p><p>{PARA}</p><p>{PARA}</p>"
    "</article><footer>Copyright Town News</footer></body></html>"
).encode()


def hide_readability(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the extra look uninstalled (an import of it raises ImportError)."""
    for name in ("readability", "readability.readability"):
        monkeypatch.setitem(sys.modules, name, None)


def handle(options: dict, fmt: str = "text"):
    return HTML_HANDLER.handle(PAGE, HandlerContext(url="https://news.test/a", format=fmt,
                                                    options=options))


def test_readability_picks_the_block_and_the_handler_keeps_metadata_and_rendering():
    ours = handle({})
    theirs = handle({"html_extractor": "readability"})
    assert PARA.strip() in theirs.content
    assert "Home" not in theirs.content and "Copyright" not in theirs.content
    assert theirs.title == ours.title == "Bridge report due"
    assert theirs.metadata["published"] == ours.metadata["published"]
    # our renderer: a markdown heading, paragraphs apart
    markdown = handle({"html_extractor": "readability"}, "markdown").content
    assert markdown.startswith("# Bridge report due\n\nThe council met")


def test_missing_extra_is_a_config_error_in_the_handler(monkeypatch):
    hide_readability(monkeypatch)
    with pytest.raises(PipelineError) as caught:
        handle({"html_extractor": "readability"})
    assert caught.value.kind == "config"
    assert "pip install -e '.[readability]'" in caught.value.message


def test_missing_extra_stops_the_command_line_with_one_line(tmp_path, monkeypatch, capsys):
    hide_readability(monkeypatch)
    urls = ["http://example.test/a"]
    url_file = tmp_path / "urls.txt"
    url_file.write_text(urls[0] + "\n")
    out = tmp_path / "out.jsonl"
    status = cli.main([str(url_file), "-o", str(out), "--html-extractor", "readability",
                       "--workers", "1"], fetcher=text_fetcher(urls, media_type="text/html"))
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and "pip install -e '.[readability]'" in err
    assert "Traceback" not in err


def test_the_command_line_runs_readability_when_installed(tmp_path):
    urls = ["http://example.test/a"]
    url_file = tmp_path / "urls.txt"
    url_file.write_text(urls[0] + "\n")
    out = tmp_path / "out.jsonl"
    fetcher = text_fetcher(urls, media_type="text/html")
    fetcher.routes[urls[0]].body = PAGE
    assert cli.main([str(url_file), "-o", str(out), "--html-extractor", "readability",
                     "--workers", "1", "--format", "text", "--quiet"], fetcher=fetcher) == 0
    [record] = read_records(out)
    assert record["ok"] and PARA.strip() in record["content"]


async def test_missing_extra_is_a_config_error_in_the_library(monkeypatch):
    hide_readability(monkeypatch)
    response = await web_extract("https://example.test/a",
                                 settings=Settings(html_extractor="readability", cache=False))
    assert not response.ok
    assert response.error is not None and response.error.kind == "config"


def test_mcp_server_takes_the_option():
    args = mcp_parser().parse_args(["--html-extractor", "readability"])
    assert cli.settings_from_args(args).html_extractor == "readability"
    with pytest.raises(cli.UsageError):  # the mcp command tells it in one line, exit 2
        mcp_parser().parse_args(["--html-extractor", "bogus"])


def test_cached_texts_are_kept_apart_per_extractor():
    from pipeline.store.paging import text_identity

    assert (text_identity(Settings(html_extractor="readability"), ["native"])
            != text_identity(Settings(), ["native"]))

"""What rendering needs, said in one line before any work: Playwright, a Chromium, and no
proxy the browser would go around."""

from __future__ import annotations

import importlib.util

import pytest

from pipeline.browser import locate
from pipeline.cli.command import main
from pipeline.core.errors import PipelineError
from pipeline.core.settings import Settings


def test_without_playwright_the_error_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "playwright" else real(name, *a))
    with pytest.raises(PipelineError) as failure:
        locate.check_rendering(Settings(render="auto"))
    assert failure.value.kind == "config"
    assert "pip install -e '.[browser]'" in failure.value.message


def test_the_command_line_says_it_in_one_line_before_any_work(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(locate, "require_playwright", lambda: (_ for _ in ()).throw(
        PipelineError("config", "--render needs Playwright: " + locate.INSTALL_HINT)))
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:9/\n")
    out = tmp_path / "out.jsonl"
    assert main([str(urls), "-o", str(out), "--render", "auto"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install -e '.[browser]'" in err[0]
    assert not out.exists()


def test_a_browser_path_that_is_not_an_executable_is_refused(tmp_path):
    plain = tmp_path / "chrome"
    plain.write_text("not a program")
    with pytest.raises(PipelineError, match="not an executable"):
        locate.find_browser(str(plain))


def test_no_browser_anywhere_names_what_to_install(monkeypatch):
    monkeypatch.setattr(locate, "playwright_chromium", lambda: None)
    monkeypatch.setattr(locate, "KNOWN_PATHS", ())
    monkeypatch.setattr(locate.shutil, "which", lambda name: None)
    with pytest.raises(PipelineError) as failure:
        locate.find_browser(None)
    assert "apt-get install chromium" in failure.value.message


@pytest.mark.parametrize("option", [{"proxy": "http://127.0.0.1:3128"}, {"trust_env": True}])
def test_rendering_is_refused_beside_a_proxy_it_would_go_around(option):
    with pytest.raises(PipelineError, match="--proxy"):
        locate.check_rendering(Settings(render="always", **option))

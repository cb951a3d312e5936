"""Third-party handlers through the ``pipeline.handlers`` entry-point group."""

from __future__ import annotations

import logging
import multiprocessing
import textwrap
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import handlers
from handlers import builtin_handlers, default_registry
from handlers.registry import HandlerContext, HandlerRegistry, load_entry_point_handlers

PLUGIN_MODULE = '''
from dataclasses import dataclass
from pipeline.core.models import Document

@dataclass(frozen=True)
class ShoutHandler:
    name: str = "shout"
    media_types: tuple = ("application/xml", "text/x-shout")

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"SHOUT:")

    def handle(self, body, ctx):
        return Document(content=body.decode().upper(), format=ctx.format)

SHOUT = ShoutHandler()

class Whisper:
    name = "whisper"
    media_types = ("text/x-whisper",)

    def sniff(self, head):
        return False

    def handle(self, body, ctx):
        return Document(content=body.decode().lower(), format=ctx.format)

def make_echo():
    return ShoutHandler(name="echo", media_types=("text/x-echo",))
'''


def install_fake_distribution(root: Path, entry_points: str) -> None:
    """A module plus a ``*.dist-info`` folder: what ``pip install`` of a plugin leaves."""
    (root / "shout_plugin.py").write_text(PLUGIN_MODULE)
    info = root / "shout_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    install_fake_distribution(tmp_path, """\
        [pipeline.handlers]
        shout = shout_plugin:SHOUT
        whisper = shout_plugin:Whisper
        echo = shout_plugin:make_echo
        broken = shout_plugin_missing:NOPE
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    default_registry.cache_clear()
    yield tmp_path
    default_registry.cache_clear()


def test_plugins_load_ahead_of_builtins(plugin_path: Path) -> None:
    registry = HandlerRegistry(builtin_handlers())
    load_entry_point_handlers(registry)
    names = [handler.name for handler in registry.handlers]
    assert names[:3] == ["shout", "whisper", "echo"]
    assert names.index("shout") < names.index("xml")
    # The plugin claims application/xml too, and wins over the built-in XML handler.
    assert registry.select("application/xml", b"<a/>").name == "shout"


def test_classes_and_factories_are_instantiated(plugin_path: Path) -> None:
    registry = default_registry()
    assert registry.select("text/x-whisper", b"hi").name == "whisper"
    assert registry.select("text/x-echo", b"hi").name == "echo"


def test_plugin_sniff_is_consulted_for_generic_types(plugin_path: Path) -> None:
    handler = default_registry().select("application/octet-stream", b"SHOUT: hello")
    assert handler.handle(b"SHOUT: hello", HandlerContext(url="u")).content == "SHOUT: HELLO"


def test_a_broken_plugin_is_logged_and_skipped(
    plugin_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="handlers.registry"):
        registry = default_registry()
    assert "broken" in caplog.text
    assert registry.get("shout").name == "shout"


def _extract_in_worker(media_type: str, body: bytes) -> tuple[str, str]:
    """What a batch worker does: build its own registry, select, handle."""
    handler = handlers.default_registry().select(media_type, body)
    return handler.name, handler.handle(body, HandlerContext(url="u")).content


def test_plugins_run_in_a_fresh_worker_process(plugin_path: Path) -> None:
    # spawn: the worker shares nothing with this process but sys.path, like a real pool.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        name, content = pool.submit(_extract_in_worker, "text/x-shout", b"quiet").result(60)
    assert (name, content) == ("shout", "QUIET")

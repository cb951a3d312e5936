"""A missing extra is named with a command that works from a checkout (issue 33, item 7)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from yarl import URL

from pipeline.core.errors import PipelineError, UsageError
from pipeline.core.extras import install_hint

ROOT = Path(__file__).resolve().parents[2]
# ``pip install 'NAME[extra]'`` (or unquoted): a package index name, not the checkout.
INDEX_INSTALL = re.compile(r"pip install +(?!-e\b)['\"]?[A-Za-z][\w.-]*\[")


def test_the_hint_installs_the_extra_into_the_checkout():
    assert install_hint("pdf").startswith("pip install -e '.[pdf]'")


def test_no_message_or_page_names_an_index_package_with_extras():
    files = [*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "handlers").rglob("*.py"),
             *(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    found = [f"{path.relative_to(ROOT)}: {match[0]}" for path in files
             for match in INDEX_INSTALL.finditer(path.read_text(encoding="utf-8"))]
    assert not found, found
    assert INDEX_INSTALL.search("pip install 'extract-pipeline[pdf]'")  # the check can fail


def test_parquet_without_pyarrow_names_the_checkout_install(monkeypatch):
    from pipeline.batch.output import parquet_sink

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed
    with pytest.raises(UsageError) as caught:
        parquet_sink._pyarrow()
    assert install_hint("parquet") in str(caught.value)


def test_near_dedup_without_rensa_names_the_checkout_install(monkeypatch):
    from pipeline.batch.dedup import require_rensa

    monkeypatch.setitem(sys.modules, "rensa", None)
    with pytest.raises(UsageError) as caught:
        require_rensa()
    assert install_hint("dedup") in str(caught.value)


def test_a_socks_proxy_without_aiohttp_socks_names_the_checkout_install(monkeypatch):
    from pipeline.fetch.proxy import socks_connector

    monkeypatch.setitem(sys.modules, "aiohttp_socks", None)
    with pytest.raises(PipelineError) as caught:
        socks_connector(URL("socks5://127.0.0.1:1080"))
    assert caught.value.kind == "config" and install_hint("socks") in caught.value.message

import subprocess
import sys
from pathlib import Path

import pytest

import pipeline

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("aiohttp", "mcp", "sqlite3", "jsonschema", "lxml", "pipeline.agent.kernel",
         "pipeline.providers")


def test_import_pipeline_stays_light():
    code = (
        "import sys, pipeline; "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""


def test_lazy_names_resolve_and_unknown_names_fail():
    from pipeline.agent.rendering import render

    assert pipeline.render is render
    assert "web_extract" in dir(pipeline)
    with pytest.raises(AttributeError):
        pipeline.no_such_name  # noqa: B018


def test_kernel_functions_load_on_first_use():
    from pipeline.agent import kernel as web

    assert pipeline.web_extract is web.web_extract
    assert pipeline.web_search_sync is web.web_search_sync
    assert pipeline.ExtractArgs is web.ExtractArgs

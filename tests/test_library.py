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


_SERVE_AND_EXTRACT = """
import http.server, sys, threading
import pipeline

class Page(http.server.BaseHTTPRequestHandler):
    BODY = (b"<html><body><article><p>" + b"A served paragraph of text. " * 20
            + b"</p></article></body></html>")
    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.BODY)))
        self.end_headers()
    def do_GET(self):
        self.do_HEAD()
        self.wfile.write(self.BODY)
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_port}/page"
answer = pipeline.web_extract_sync(url, settings=pipeline.Settings(allow_net=["127.0.0.1/32"]))
server.shutdown()
print(answer.records[0].ok, "served paragraph" in (answer.records[0].content or ""))
print(sorted({"pebble", "pipeline.batch.pool", "pipeline.batch.run", "pipeline.batch.engine",
              "concurrent.futures.process"} & set(sys.modules)))
"""


def test_the_agent_path_extracts_without_loading_the_batch_runtime():
    """``import pipeline; web_extract(...)`` reads a page without the batch pool (pebble,
    worker processes) or the batch engine."""
    shown = subprocess.run([sys.executable, "-c", _SERVE_AND_EXTRACT], cwd=REPO,
                           capture_output=True, text=True, check=True, timeout=60).stdout
    assert shown.split("\n")[:2] == ["True True", "[]"]


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

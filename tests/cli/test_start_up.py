"""Start-up of the batch command: what a run loads and starts before its first record.

Each case runs in a fresh interpreter: this one has loaded everything long ago.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, tmp_path: Path) -> str:
    """Run ``code`` in a fresh interpreter (the repository importable); its stdout."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""}, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_run_whose_pages_need_no_pool_never_loads_it(tmp_path):
    (tmp_path / "urls.txt").write_text("http://example.test/a\nhttp://example.test/b\n")
    out = run_python("""
        import sys
        from pipeline.cli.command import main
        from tests.support.records import text_fetcher

        fetcher = text_fetcher(["http://example.test/a", "http://example.test/b"])
        assert main(["urls.txt", "-o", "out.jsonl", "--quiet"], fetcher=fetcher) == 0
        print(sorted({"pebble", "concurrent.futures.process"} & set(sys.modules)))
    """, tmp_path)
    assert out.strip() == "[]"  # small text pages are handled inline: no pool machinery
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 2

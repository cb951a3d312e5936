"""Start-up of the batch command: what a run loads and starts before its first record.

Each case runs in a fresh interpreter: this one has loaded everything long ago.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
        from pipeline.cli import main
        from tests.cli.conftest import text_fetcher

        fetcher = text_fetcher(["http://example.test/a", "http://example.test/b"])
        assert main(["urls.txt", "-o", "out.jsonl", "--quiet"], fetcher=fetcher) == 0
        print(sorted({"pebble", "concurrent.futures.process"} & set(sys.modules)))
    """, tmp_path)
    assert out.strip() == "[]"  # small text pages are handled inline: no pool machinery
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_handler_pool_server_starts_up_beside_the_first_fetch(tmp_path):
    (tmp_path / "urls.txt").write_text("http://example.test/a\n")
    out = run_python("""
        import os
        from pipeline.cli import main
        from tests.cli.conftest import text_fetcher

        def children():
            found = []
            for entry in os.listdir("/proc"):
                try:
                    with open(f"/proc/{entry}/stat") as stat:
                        parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                    with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                        command = cmdline.read()
                except (OSError, ValueError):
                    continue
                if parent == os.getpid():
                    found.append(command)
            return found

        class Watching:
            def __init__(self, fetcher):
                self.fetcher, self.seen = fetcher, None

            async def fetch(self, url, **options):
                self.seen = [c for c in children() if b"forkserver" in c]
                return await self.fetcher.fetch(url, **options)

            async def __aenter__(self):
                return self

            async def __aexit__(self, *exc_info):
                return None

        fetcher = Watching(text_fetcher(["http://example.test/a"]))
        assert main(["urls.txt", "--quiet"], fetcher=fetcher) == 0
        print(len(fetcher.seen))
    """, tmp_path)
    assert out.strip().splitlines()[-1] == "1"  # already importing the handlers

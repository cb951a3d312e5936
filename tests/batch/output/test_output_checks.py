"""Where records go, checked before anything is opened: the output is never the input, an
existing output is never replaced unasked, ``-o -`` is stdout, and no configuration error
costs an output a byte."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import command as cli
from tests.support.records import read_records, text_fetcher

ROOT = Path(__file__).resolve().parents[3]
URLS = [f"http://example.test/{i}" for i in range(5)]
LIST = "".join(f"{url}\n" for url in URLS)
# One whole record, then a line torn by a crash: --resume would repair (cut) the tail.
HELD = b'{"url":"http://example.test/0","index":0,"ok":true}\n{"url":"http://exa'


def run(argv: list[str]) -> int:
    return cli.main([*argv, "--workers", "1"], fetcher=text_fetcher(URLS))


def one_error_line(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert all(needle in err for needle in needles), err
    return err


@pytest.fixture
def url_file(tmp_path: Path) -> Path:
    path = tmp_path / "list.txt"
    path.write_text(LIST)
    return path


# --- the output is not the input ---------------------------------------------------------------

def _same_path(url_file: Path) -> str:
    return str(url_file)


def _other_spelling(url_file: Path) -> str:
    return str(url_file.parent / "." / url_file.name)


def _symlink(url_file: Path) -> str:
    link = url_file.parent / "link.jsonl"
    link.symlink_to(url_file)
    return str(link)


def _hard_link(url_file: Path) -> str:
    link = url_file.parent / "hard.jsonl"
    os.link(url_file, link)
    return str(link)


@pytest.mark.parametrize("spell", [_same_path, _other_spelling, _symlink, _hard_link])
@pytest.mark.parametrize("flags", [[], ["--resume"], ["--overwrite"]])
def test_an_output_that_is_the_input_is_refused(spell, flags, url_file, capsys):
    out = spell(url_file)
    assert run([str(url_file), "-o", out, *flags]) == 2
    one_error_line(capsys, "is the input")
    assert url_file.read_text() == LIST


def test_stdin_read_from_the_output_is_refused(url_file, monkeypatch, capsys):
    with open(url_file, "rb") as stdin:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin))
        assert run(["-", "-o", str(url_file), "--resume"]) == 2
    one_error_line(capsys, "is the input")
    assert url_file.read_text() == LIST


def test_stdout_appending_to_the_input_is_refused(url_file):
    with open(url_file, "ab") as stdout:  # python -m pipeline list.txt >> list.txt
        proc = subprocess.run(
            [sys.executable, str(ROOT / "tests" / "cli" / "fake_cli.py"), str(url_file)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=stdout,
            stderr=subprocess.PIPE, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert b"is the input" in proc.stderr and b"Traceback" not in proc.stderr
    assert url_file.read_text() == LIST


# --- an existing output ------------------------------------------------------------------------

def test_a_non_empty_output_is_kept_unless_resume_or_overwrite(url_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    out.write_bytes(HELD)
    assert run([str(url_file), "-o", str(out)]) == 2
    one_error_line(capsys, str(out), "--resume", "--overwrite")
    assert out.read_bytes() == HELD

    assert run([str(url_file), "-o", str(out), "--overwrite"]) == 0
    assert sorted(r["index"] for r in read_records(out)) == list(range(5))


def test_an_empty_output_needs_no_flag(url_file, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"")
    assert run([str(url_file), "-o", str(out)]) == 0
    assert len(read_records(out)) == 5


def test_resume_and_overwrite_do_not_go_together(url_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    out.write_bytes(HELD)
    assert run([str(url_file), "-o", str(out), "--resume", "--overwrite"]) == 2
    one_error_line(capsys, "--resume", "--overwrite")
    assert out.read_bytes() == HELD


def test_a_sharded_directory_holding_a_run_is_kept_unless_resume_or_overwrite(url_file, tmp_path,
                                                                              capsys):
    out = tmp_path / "out"
    assert run([str(url_file), "-o", str(out), "--shard", "0/2", "--quiet"]) == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    assert run([str(url_file), "-o", str(out), "--shard", "0/2"]) == 2
    one_error_line(capsys, str(out), "--resume", "--overwrite")
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    # another shard of the same run is not in the way of this one
    assert run([str(url_file), "-o", str(out), "--shard", "1/2", "--quiet"]) == 0
    assert run([str(url_file), "-o", str(out), "--shard", "0/2", "--overwrite", "--quiet"]) == 0
    # a whole-run driver (--processes) finds parts: refused too
    assert cli.main([str(url_file), "-o", str(out), "--processes", "2"]) == 2
    one_error_line(capsys, "--resume", "--overwrite")


# --- -o - ---------------------------------------------------------------------------------------

def test_dash_output_is_stdout(url_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run([str(url_file), "-o", "-", "--quiet"]) == 0
    assert not (tmp_path / "-").exists()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and all('"index":' in line for line in lines)


# --- configuration errors cost the output nothing ---------------------------------------------

CONFIG_ERRORS = [
    (["--allow-net", "999.0.0.0/8"], {}, "invalid CIDR"),
    (["--allow-proxy-net", "nonsense"], {}, "invalid CIDR"),
    (["--compress"], {}, "--compress needs a compressor model"),
    (["--compress"], {"PIPELINE_COMPRESS_MODEL": "m", "PIPELINE_COMPRESS_CONCURRENCY": "0"},
     "concurrency"),
    (["--extract-backend", "nope"], {}, "unknown provider"),
    (["--cookie-file", "{tmp}/missing.txt"], {}, "cannot read cookie file"),
    (["--handler", "nowhere:thing"], {}, "cannot load handlers"),
]


@pytest.mark.parametrize(("flags", "env", "message"), CONFIG_ERRORS)
@pytest.mark.parametrize("keep", ["--resume", "--overwrite"])
def test_a_configuration_error_leaves_the_output_as_it_was(flags, env, message, keep, url_file,
                                                           tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PIPELINE_COMPRESS_MODEL", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "out.jsonl"
    out.write_bytes(HELD)
    flags = [flag.replace("{tmp}", str(tmp_path)) for flag in flags]
    assert run([str(url_file), "-o", str(out), keep, *flags]) == 2
    one_error_line(capsys, message)
    assert out.read_bytes() == HELD


@pytest.mark.parametrize("keep", ["--resume", "--overwrite"])
def test_an_error_found_while_opening_the_fetcher_leaves_the_output_as_it_was(keep, url_file,
                                                                              tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    out.write_bytes(HELD)
    # a proxy on loopback is refused when the fetcher opens (no --allow-proxy-net)
    code = cli.main([str(url_file), "-o", str(out), keep, "--workers", "1",
                     "--proxy", "http://127.0.0.1:9"])
    assert code == 2
    one_error_line(capsys, "proxy 127.0.0.1 refused")
    assert out.read_bytes() == HELD


def test_a_sharded_resume_with_a_configuration_error_exits_2(url_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert run([str(url_file), "-o", str(out), "--shard", "0/2", "--quiet"]) == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    assert run([str(url_file), "-o", str(out), "--shard", "0/2", "--resume",
                "--allow-net", "999.0.0.0/8"]) == 2
    one_error_line(capsys, "invalid CIDR")
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before

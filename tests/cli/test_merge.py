"""``merge`` checks its output as the batch command does: never inside the run directory,
never over records without ``--overwrite``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import command as cli
from tests.support.records import read_records, text_fetcher

URLS = [f"http://127.0.0.1:9/page/{n}" for n in range(6)]
QUIET = ["--quiet"]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished two-shard run of :data:`URLS`."""
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(URLS) + "\n")
    out = tmp_path / "run"
    for shard in ("0/2", "1/2"):
        assert cli.main([str(listing), "-o", str(out), "--shard", shard, *QUIET],
                        fetcher=text_fetcher(URLS)) == 0
    return out


def test_merge_refuses_an_output_holding_records_without_overwrite(run_dir, tmp_path, capsys):
    target = tmp_path / "merged.jsonl"
    target.write_text('{"url": "kept"}\n')
    assert cli.main(["merge", str(run_dir), "-o", str(target)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "already holds records: --overwrite replaces it" in line
    assert target.read_text() == '{"url": "kept"}\n'
    assert cli.main(["merge", str(run_dir), "-o", str(target), "--overwrite"]) == 0
    assert [record["url"] for record in read_records(target)] == URLS


@pytest.mark.parametrize("target", ["/dev/stdout", "-"])
@pytest.mark.parametrize("into", ["pipe", "file"])
def test_merge_writes_to_dev_stdout_and_dash(run_dir, tmp_path, target, into):
    """/dev/stdout was refused: no temporary file can be made beside it and renamed."""
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "pipeline", "merge", str(run_dir), "-o", target]
    env = {**os.environ, "PYTHONPATH": str(root)}
    if into == "pipe":
        done = subprocess.run(command, capture_output=True, cwd=root, env=env)
        out = done.stdout.decode()
    else:
        with (tmp_path / "out.jsonl").open("wb") as stdout:
            done = subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, cwd=root,
                                  env=env)
        out = (tmp_path / "out.jsonl").read_text()
    assert done.returncode == 0, done.stderr.decode()
    assert [json.loads(line)["url"] for line in out.splitlines()] == URLS


def test_merge_writes_an_empty_file_in_place(run_dir, tmp_path):
    target = tmp_path / "empty.jsonl"
    target.touch()
    assert cli.main(["merge", str(run_dir), "-o", str(target)]) == 0
    assert [record["url"] for record in read_records(target)] == URLS


@pytest.mark.parametrize("name", ["merged.jsonl", "part-00000-of-00002.jsonl", "x.parquet"])
def test_merge_never_writes_inside_the_run_directory(run_dir, capsys, name):
    before = sorted((path.name, path.stat().st_size) for path in run_dir.iterdir())
    target = run_dir / name
    assert cli.main(["merge", str(run_dir), "-o", str(target), "--overwrite"]) == 2
    assert "is inside the run directory" in capsys.readouterr().err
    assert sorted((path.name, path.stat().st_size) for path in run_dir.iterdir()) == before


def test_merge_refuses_a_parquet_output_holding_parts(run_dir, tmp_path, capsys):
    target = tmp_path / "merged.parquet"
    assert cli.main(["merge", str(run_dir), "-o", str(target)]) == 0
    assert cli.main(["merge", str(run_dir), "-o", str(target)]) == 2
    assert "already holds records: --overwrite replaces it" in capsys.readouterr().err
    assert cli.main(["merge", str(run_dir), "-o", str(target), "--overwrite"]) == 0


def test_merge_refuses_an_output_that_is_one_of_its_parts_under_another_name(run_dir, tmp_path,
                                                                            capsys):
    part = run_dir / "part-00000-of-00002.jsonl"
    before = part.read_bytes()
    alias = tmp_path / "alias.jsonl"
    os.link(part, alias)  # outside the run directory, yet the same file
    assert cli.main(["merge", str(run_dir), "-o", str(alias), "--overwrite"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert f"the output {alias} is a file of the run {run_dir} it merges" in line
    assert part.read_bytes() == before


def test_merge_refuses_a_stdout_that_is_one_of_its_parts(run_dir, monkeypatch, capsys):
    part = run_dir / "part-00001-of-00002.jsonl"
    before = part.read_bytes()
    with open(part, "a") as appended:  # as `merge RUN >> RUN/part-…` would
        monkeypatch.setattr(sys, "stdout", appended)
        assert cli.main(["merge", str(run_dir)]) == 2
    assert "the output stdout is a file of the run" in capsys.readouterr().err
    assert part.read_bytes() == before


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["plain", "overwrite"])
def test_merge_never_replaces_a_parquet_directory_holding_other_files(run_dir, tmp_path,
                                                                     capsys, overwrite):
    target = tmp_path / "notes.parquet"  # a directory of the user's, not a Parquet output
    target.mkdir()
    (target / "notes.txt").write_text("kept")
    assert cli.main(["merge", str(run_dir), "-o", str(target), *overwrite]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert f"{target} holds files that are not Parquet parts (notes.txt)" in line
    assert (target / "notes.txt").read_text() == "kept"


def test_merge_never_replaces_a_parquet_directory_holding_the_run(tmp_path, capsys):
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(URLS) + "\n")
    target = tmp_path / "all.parquet"
    run = target / "run"
    assert cli.main([str(listing), "-o", str(run), "--shard", "0/1", *QUIET],
                    fetcher=text_fetcher(URLS)) == 0
    assert cli.main(["merge", str(run), "-o", str(target), "--overwrite"]) == 2
    assert "holds files that are not Parquet parts (run)" in capsys.readouterr().err
    assert [record["url"] for record in read_records(run / "part-00000-of-00001.jsonl")] == URLS

"""Shards of different runs never mix in one directory: each shard run compares the
directory's manifest (N, the input, how items are made, the settings that change records)
with its own before it writes, and refuses a mismatch in one line naming what differs, as
``--resume`` does."""

from __future__ import annotations

import errno
import io
import json
import os

import pytest

from pipeline.batch.output.output_dir import open_output_dir, read_manifest
from pipeline.batch.shards import plan
from pipeline.cli import command as cli
from pipeline.core.errors import UsageError
from pipeline.fetch.base import FakeFetcher
from tests.batch.shards.test_sharded import write_urls

URLS = [f"http://h{n}.test/page" for n in range(6)]


def _fetcher() -> FakeFetcher:
    return FakeFetcher({url: f"Text of {url}, some words.".encode() for url in URLS},
                       media_type="text/plain")


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = cli.main([*argv, "--quiet"], fetcher=_fetcher())
    return code, capsys.readouterr().err.strip()


def test_a_shard_of_another_run_is_refused_naming_what_differs(tmp_path, capsys):
    urls = write_urls(tmp_path / "urls.txt", URLS)
    other = write_urls(tmp_path / "other.txt", URLS[:3])
    out = str(tmp_path / "out")
    assert _run(capsys, str(urls), "--shard", "0/2", "-o", out)[0] == 0
    before = sorted(p.name for p in (tmp_path / "out").iterdir())
    refused = [
        (["--max-chars", "500"], "--max-chars 100000 there, 500 here"),
        (["--format", "text", "--html-extractor", "readability"],
         '--format "markdown" there, "text" here'),
        (["--input-format", "tsv"], '--input-format "lines" there, "tsv" here'),
    ]
    for flags, named in refused:
        code, err = _run(capsys, str(urls), "--shard", "1/2", "-o", out, *flags)
        assert code == 2 and named in err and len(err.splitlines()) == 1, (flags, err)
    code, err = _run(capsys, str(other), "--shard", "1/2", "-o", out)
    assert code == 2 and "another input file" in err
    code, err = _run(capsys, str(urls), "--shard", "1/3", "-o", out)
    assert code == 2 and "N 2 there, 3 here" in err
    # --overwrite of one shard would still leave the other run's shard beside it
    code, err = _run(capsys, str(urls), "--shard", "0/2", "-o", out, "--overwrite",
                     "--max-chars", "500")
    assert code == 2 and "holds the shards of another run" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == before  # nothing written
    # the same run's other shard is welcome, and the two merge
    assert _run(capsys, str(urls), "--shard", "1/2", "-o", out)[0] == 0
    merged = tmp_path / "merged.jsonl"
    assert cli.main(["merge", out, "-o", str(merged)]) == 0
    assert [json.loads(line)["index"] for line in merged.read_text().splitlines()] == \
        list(range(len(URLS)))


def test_a_whole_run_with_overwrite_replaces_another_runs_shards(tmp_path, capsys):
    urls = write_urls(tmp_path / "urls.txt", URLS)
    out = tmp_path / "out"
    assert _run(capsys, str(urls), "--shard", "0/3", "-o", str(out))[0] == 0
    found = read_manifest(out)
    assert found is not None and found["shards"] == 3
    wanted = {**found, "shards": 2}
    with pytest.raises(UsageError, match="N 3 there, 2 here"):
        open_output_dir(str(out), wanted, resume=True)
    open_output_dir(str(out), wanted, resume=False, replacing=True)  # --processes --overwrite
    assert not list(out.glob("part-*")) and read_manifest(out) == wanted


def test_a_shard_starting_keeps_the_list_of_warc_files_written_so_far(tmp_path, capsys):
    urls = write_urls(tmp_path / "urls.txt", URLS)
    out = tmp_path / "out"
    assert _run(capsys, str(urls), "--shard", "0/2", "-o", str(out))[0] == 0
    found = read_manifest(out)
    assert found is not None
    listed = {"directory": str(tmp_path / "warc"), "files": ["part-00000-of-00002-00000.warc.gz"]}
    (out / "manifest.json").write_text(json.dumps({**found, "warc": listed}))
    open_output_dir(str(out), found, resume=False, shard=1)  # shard 1 of the same run
    assert read_manifest(out) == {**found, "warc": listed}
    open_output_dir(str(out), found, resume=False, replacing=True)  # its files are removed
    assert read_manifest(out) == found


class _FullDisk(io.RawIOBase):
    """A file on a disk with ``room`` bytes left: then ENOSPC, as a full tmpfs says."""

    def __init__(self, room: int) -> None:
        self.room = room

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return len(data)


def test_a_full_disk_while_processes_spool_is_exit_74_with_the_resume_hint(
        tmp_path, capsys, monkeypatch):
    urls = write_urls(tmp_path / "urls.txt", [f"http://10.0.0.{n}/page" for n in range(300)])
    out = tmp_path / "out"
    argv = [str(urls), "-o", str(out), "--processes", "2", "--workers", "2"]
    monkeypatch.setattr(plan, "open", lambda path, mode: io.BufferedWriter(_FullDisk(1000)),
                        raising=False)
    assert cli.main(argv) == 74
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("extract-pipeline: error: cannot write ") and \
        "No space left on device" in err[-1] and "--resume" in err[-1]
    assert not list(out.glob(".items-*"))  # the spool is gone
    monkeypatch.undo()  # space freed: the resumed run does it all (each address refused)
    assert cli.main([*argv, "--resume", "--quiet"]) == 0
    merged = tmp_path / "merged.jsonl"
    assert cli.main(["merge", str(out), "-o", str(merged)]) == 0
    assert len(merged.read_text().splitlines()) == 300

"""``python -m pipeline URL [URL…]``: a run over the URLs given; a path stays a list."""

from __future__ import annotations

import pytest

from pipeline.cli import command as cli
from tests.cli.test_end_to_end import run_cli, site
from tests.support.pages import serve
from tests.support.records import read_records, text_fetcher

URLS = [f"https://t.test/{n}" for n in range(3)]
QUIET = ["--quiet", "--workers", "1"]


async def test_url_arguments_are_a_run_over_them_against_a_server(tmp_path):
    app, gets = site()
    async with serve(app) as base:
        given = [f"{base}/text/1", f"{base}/json/2"]
        out = tmp_path / "out.jsonl"
        code, stderr = await run_cli(*given, "-o", str(out), "--allow-net", "127.0.0.1/32",
                                     "--workers", "1")
        assert code == 0, stderr
        records = sorted(read_records(out), key=lambda record: record["index"])
        assert [(r["index"], r["url"], r["ok"]) for r in records] == [
            (0, given[0], True), (1, given[1], True)]
        assert "Page 1." in records[0]["content"]
        code, stderr = await run_cli(*given, "-o", str(out), "--allow-net", "127.0.0.1/32",
                                     "--workers", "1", "--resume")  # nothing left to do
    assert code == 0, stderr
    assert gets == {"/text/1": 1, "/json/2": 1}
    assert len(read_records(out)) == 2


def test_one_url_argument_is_a_run_and_a_path_is_still_a_list(tmp_path):
    out = tmp_path / "one.jsonl"
    fetcher = text_fetcher(URLS)
    assert cli.main([URLS[2], "-o", str(out), *QUIET], fetcher=fetcher) == 0
    assert [r["url"] for r in read_records(out)] == [URLS[2]]
    listed = tmp_path / "urls.txt"
    listed.write_text("\n".join(URLS[:2]) + "\n")
    out = tmp_path / "list.jsonl"
    assert cli.main([str(listed), "-o", str(out), "--ordered", *QUIET], fetcher=fetcher) == 0
    assert [r["url"] for r in read_records(out)] == URLS[:2]


@pytest.mark.parametrize("extra, said", [
    (["urls.txt"], "give http(s) URLs or one list of them, not both: 'urls.txt'"),
    (["--input-format", "csv"], "URL arguments are read as URLs"),
    (["--url-column", "2"], "URL arguments are read as URLs"),
])
def test_url_arguments_with_a_list_or_its_flags_are_a_one_line_error(tmp_path, capsys, extra,
                                                                     said):
    (tmp_path / "urls.txt").write_text(URLS[0] + "\n")
    argv = [URLS[0], *extra, "-o", str(tmp_path / "out.jsonl"), *QUIET]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert cli.main(argv, fetcher=text_fetcher(URLS)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0]
    assert not (tmp_path / "out.jsonl").exists()


def test_a_resumed_shard_over_other_url_arguments_is_refused_naming_them(tmp_path, capsys):
    out = tmp_path / "shards"
    fetcher = text_fetcher(URLS)
    assert cli.main([*URLS[:2], "--shard", "0/1", "-o", str(out), *QUIET], fetcher=fetcher) == 0
    assert cli.main([URLS[0], URLS[2], "--shard", "0/1", "-o", str(out), "--resume", *QUIET],
                    fetcher=fetcher) == 2
    assert "URL arguments" in capsys.readouterr().err

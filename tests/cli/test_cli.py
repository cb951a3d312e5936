"""The command line in-process, with a FakeFetcher: exit codes, output, progress, resume."""

from __future__ import annotations

import gc
import io
import json
import sys
import types
from pathlib import Path

import pytest

from pipeline.batch import engine
from pipeline.cli import command as cli
from tests.support.records import read_records, text_fetcher

URLS = [f"http://example.test/{i}" for i in range(30)]


@pytest.fixture
def url_file(tmp_path):
    path = tmp_path / "urls.txt"
    path.write_text("# list\n" + "\n".join(URLS) + "\nnot a url\n\n")
    return path


def run(argv, fetcher=None):
    return cli.main([*argv, "--workers", "1"], fetcher=fetcher or text_fetcher(URLS))


def test_batch_run_writes_one_record_per_url_and_a_summary(url_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert run([str(url_file), "-o", str(out), "--max-chars", "60", "--format", "text"]) == 0
    records = read_records(out)
    assert sorted(r["index"] for r in records) == list(range(31))
    assert sum(r["ok"] for r in records) == 30
    assert all(r["format"] == "text" for r in records if r["ok"])
    stderr = capsys.readouterr().err
    assert "31 records" in stderr and "ok 30" in stderr and "invalid_url 1" in stderr
    assert "\r" not in stderr and "url/s" not in stderr  # stderr is not a terminal: no bar


def test_stdin_to_stdout_in_input_order(monkeypatch, capsys):
    data = "\n".join(reversed(URLS)).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert run(["-", "--ordered", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert [line.split('"index":')[1].split(",")[0] for line in lines] == [
        str(i) for i in range(30)]
    assert all(f'"url":"{u}"' in line for u, line in zip(reversed(URLS), lines, strict=True))


def test_progress_bar_on_a_terminal(url_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert run([str(url_file), "-o", str(tmp_path / "out.jsonl")]) == 0
    stderr = capsys.readouterr().err
    assert "31/31" in stderr and "ok=30" in stderr


def test_resume_repairs_the_torn_line_and_finishes_the_rest(url_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert run([str(url_file), "-o", str(out), "--ordered"]) == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:12]) + lines[12][:40])  # a crash mid-write
    fetcher = text_fetcher(URLS)
    assert run([str(url_file), "-o", str(out), "--resume"], fetcher) == 0
    records = read_records(out)
    assert sorted(r["index"] for r in records) == list(range(31))
    assert sum(fetcher.calls.values()) == 30 - 12
    assert "resuming: 12 records" in capsys.readouterr().err


def test_resume_redoes_a_line_that_is_not_a_whole_record(url_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert run([str(url_file), "-o", str(out), "--ordered"]) == 0
    lines = out.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5][:40] + b"\n"  # cut in half, its newline kept
    out.write_bytes(b"".join(lines))
    fetcher = text_fetcher(URLS)
    assert run([str(url_file), "-o", str(out), "--resume"], fetcher) == 0
    assert dict(fetcher.calls) == {URLS[5]: 1}
    whole = [json.loads(line) for line in out.read_bytes().splitlines() if line != lines[5][:-1]]
    assert sorted(r["index"] for r in whole) == list(range(31))
    assert "1 lines are not whole records" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_disk_stops_the_run_with_one_line_and_the_resume_hint(url_file, capsys):
    assert run([str(url_file), "-o", "/dev/full"]) == cli.EXIT_OUTPUT == 74
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "cannot write /dev/full: No space left on device" in err and "--resume" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{urls}", "--bogus-flag"], "unrecognized arguments"),
        ([], "give URLS"),
        (["missing.txt"], "no such file"),
        (["{urls}", "--resume"], "--resume needs -o"),
        (["{urls}", "--concurrency", "0"], "concurrency"),
        (["{urls}", "--format", "pdf"], "invalid choice"),
        (["{urls}", "--config", "nowhere.toml"], "config file not found"),
        (["{urls}", "--handler", "no_such_module:handler"], "cannot load handlers"),
        (["{urls}", "-o", "no/such/dir/out.jsonl"], "cannot write"),
        (["{tmp}"], "cannot read"),
        (["{urls}", "-o", "{tmp}", "--resume"], "cannot resume"),
        (["{urls}", "--header", "X-Token"], "is not 'Name: value'"),
        (["{urls}", "--proxy", "ftp://proxy.test:21"], "proxy scheme 'ftp' not supported"),
    ],
)
def test_usage_and_config_errors_exit_2_with_one_line(argv, message, url_file, capsys):
    argv = [a.replace("{urls}", str(url_file)).replace("{tmp}", str(url_file.parent))
            for a in argv]
    assert cli.main(argv, fetcher=text_fetcher(URLS)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_environment_and_config_file_feed_the_settings(url_file, tmp_path, monkeypatch, capsys):
    config = tmp_path / "conf.toml"
    config.write_text("max_chars = 60\nformat = 'text'\n")
    monkeypatch.setenv("PIPELINE_QUIET", "true")
    out = tmp_path / "out.jsonl"
    assert run([str(url_file), "-o", str(out), "--config", str(config), "--max-chars", "70"]) == 0
    assert capsys.readouterr().err == ""
    assert all(r["format"] == "text" for r in read_records(out) if r["ok"])


def test_subcommands_are_dispatched_lazily(monkeypatch, capsys):
    seen = {}
    fake = types.SimpleNamespace(search_main=lambda argv: seen.setdefault("search", argv) and 0,
                                 backends_main=lambda argv: 3)
    monkeypatch.setitem(sys.modules, "pipeline.cli.search", fake)
    assert cli.main(["search", "some query", "--limit", "3"]) == 0
    assert seen["search"] == ["some query", "--limit", "3"]
    assert cli.main(["backends"]) == 3


def test_missing_subcommand_module_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pipeline.cli.mcp", None)  # import fails
    assert cli.main(["mcp"]) == 2
    assert "'mcp' command is not available" in capsys.readouterr().err


def test_a_file_named_like_a_subcommand_is_still_a_url_list(tmp_path, monkeypatch, capsys):
    (tmp_path / "search").write_text(URLS[0] + "\n")
    monkeypatch.chdir(tmp_path)
    assert run(["./search", "-o", "out.jsonl"]) == 0
    assert [r["url"] for r in read_records(tmp_path / "out.jsonl")] == [URLS[0]]


def test_a_config_error_leaves_an_existing_output_alone(url_file, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"url":"http://example.test/0","index":0}\n')
    assert run([str(url_file), "-o", str(out), "--handler", "nowhere:thing"]) == 2
    assert out.read_text() == '{"url":"http://example.test/0","index":0}\n'


def test_every_setting_has_a_flag_with_its_default_in_the_help():
    parser = cli.build_parser()
    flags = {action.dest: action for action in parser._actions}
    # search_backend: the 'search' command's own flags; provider_env: a config-file table
    # of vendor keys (secrets do not belong on a command line); NOT_BATCH and the crawl
    # provider's (web_crawl's) two settings: mcp's flags
    batch_only = {"search_backend", "provider_env", "crawl_backend", "crawl_deadline",
                  *cli.NOT_BATCH}
    missing = [n for n in cli.Settings.model_fields if n not in flags and n not in batch_only]
    assert missing == [], f"add a flag for {missing} in pipeline/cli/command.py"
    assert "default: 100000" in flags["max_chars"].help


def test_workers_that_cannot_start_stop_the_run_with_exit_2(url_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    status = run([str(url_file), "-o", str(out), "--handler",
                  "tests.support.faulty_handlers:parent_only"],
                 fetcher=text_fetcher(URLS, media_type="text/html"))
    assert status == 2
    assert "parent_only cannot load in a worker" in capsys.readouterr().err


def test_the_collector_settings_of_a_run_are_restored(url_file, tmp_path, monkeypatch):
    seen: list[tuple[int, int]] = []
    real_run = engine.BatchEngine.run

    async def spying_run(self, *args, **kwargs):
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        return await real_run(self, *args, **kwargs)

    monkeypatch.setattr(engine.BatchEngine, "run", spying_run)
    before = (gc.get_threshold(), gc.get_freeze_count())
    assert run([str(url_file), "-o", str(tmp_path / "out.jsonl")]) == 0
    assert seen and seen[0][0] == engine.RUN_GC_THRESHOLD and seen[0][1] > 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_the_summary_names_the_way_out_of_a_refused_address(tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:9/a\nhttp://127.0.0.1:9/b\n")  # refused before any socket
    out = tmp_path / "out.jsonl"
    assert cli.main([str(urls), "-o", str(out), "--workers", "1"]) == 0
    [first, _] = read_records(out)
    assert first["error"]["kind"] == "blocked"
    assert "--allow-net 127.0.0.1/32 or --allow-private" in first["error"]["message"]
    summary = capsys.readouterr().err.strip().splitlines()[-1]
    assert "blocked 2" in summary
    assert summary.endswith("; to fetch refused addresses: --allow-net 127.0.0.1/32 or "
                            "--allow-private")


def test_batch_help_ends_with_examples(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["/somewhere/pipeline/__main__.py", "--help"])
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m pipeline ")
    examples = out.rstrip().split("\nexamples:\n", 1)[1].splitlines()
    assert len(examples) >= 3
    assert all(line.startswith("  python -m pipeline ") for line in examples)
    assert any("--resume" in line for line in examples)
    assert "--ordered" in out and "--processes" in out  # the batch command has its own flags


def test_an_unreadable_cookie_file_stops_the_run_with_exit_2(url_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    code = cli.main([str(url_file), "-o", str(out), "--workers", "1",
                     "--cookie-file", str(tmp_path / "missing.txt")])
    captured = capsys.readouterr()
    assert code == 2
    assert "cannot read cookie file" in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_a_sharded_run_ends_naming_its_parts_and_the_merge_as_invoked(url_file, tmp_path,
                                                                       monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["/somewhere/pipeline/__main__.py"])
    out = f"{tmp_path / 'run dir'}/"  # a trailing slash, a space
    assert run([str(url_file), "-o", out, "--shard", "0/1"]) == 0
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == (f"extract-pipeline: records are in {tmp_path}/run dir/part-*.jsonl; one file "
                    f"in input order: python -m pipeline merge '{out}' -o OUT.jsonl")


def test_version_prints_the_package_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"extract-pipeline {version('extract-pipeline')}\n"


@pytest.mark.parametrize(("flags", "env", "toml", "message"), [
    (["--max-chars", "10"], {}, "", "error: --max-chars must be at least 50\n"),
    (["--per-host", "0", "--timeout", "0"], {}, "",
     "error: --per-host must be at least 1; --timeout must be more than 0\n"),
    ([], {"PIPELINE_MAX_CHARS": "20"}, "", "error: PIPELINE_MAX_CHARS must be at least 50\n"),
    ([], {"PIPELINE_RETRIES": "many"}, "", "error: PIPELINE_RETRIES must be a whole number\n"),
    ([], {}, "max_chars = 10\n", "error: max_chars in {config} must be at least 50\n"),
    ([], {}, "[pipeline]\nformat = 'pdf'\n",
     "error: format in {config} must be one of 'markdown' or 'text'\n"),
    ([], {}, "max_char = 500\n", "error: max_char in {config} is not a known name\n"),
])
def test_a_bad_setting_is_named_as_given_in_plain_words(url_file, tmp_path, monkeypatch, capsys,
                                                        flags, env, toml, message):
    config = tmp_path / "conf.toml"
    config.write_text(toml)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cli.main([str(url_file), "--config", str(config), *flags]) == 2
    err = capsys.readouterr().err
    assert err == "extract-pipeline: " + message.format(config=config)


def test_the_mcp_command_takes_the_crawl_providers_settings_as_flags():
    from pipeline.cli.mcp import build_parser

    args = build_parser().parse_args(["--crawl-deadline", "7", "--crawl-backend", "tavily"])
    settings = cli.settings_from_args(args)
    assert (settings.crawl_deadline, settings.crawl_backend) == (7.0, ["tavily"])

"""``--allow-files DIR``: local paths and ``file:`` URLs in the batch command only."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import web_extract_sync
from pipeline.cli import command as cli
from pipeline.fetch.local_files import LocalFiles
from tests.cli.test_end_to_end import run_cli
from tests.support.records import read_records, text_fetcher

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
QUIET = ["--quiet", "--workers", "1", "--ordered"]
ARTICLE = "<html><head><title>Local page</title></head><body><article><p>" \
    + "A paragraph of local text that is long enough to be the article. " * 5 \
    + "</p></article></body></html>"


def run(argv: list[str]) -> int:
    return cli.main([*argv, *QUIET], fetcher=text_fetcher([]))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """allowed/ (a page, a note, a symlink escaping to secret/), secret/ (a file), a list."""
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    (allowed / "page.html").write_text(ARTICLE)
    (allowed / "sub" / "note.txt").write_text("A plain note.")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("do not read")
    (allowed / "escape.txt").symlink_to(secret / "key.txt")
    (allowed / "linked-dir").symlink_to(secret, target_is_directory=True)
    (allowed / "inside-link.txt").symlink_to(allowed / "sub" / "note.txt")
    return tmp_path


def test_files_under_the_allowed_directory_are_read_and_the_rest_is_blocked(tree: Path):
    allowed = tree / "allowed"
    listing = allowed / "list.txt"  # relative paths start at the list's directory
    listing.write_text("\n".join([
        "page.html", "sub/note.txt", (allowed / "page.html").as_uri(),
        str(allowed / "sub/note.txt"),
        "inside-link.txt", "escape.txt", "linked-dir/key.txt", "../secret/key.txt",
        (tree / "secret" / "key.txt").as_uri(), "missing.txt", "sub",
        "file://other.host/etc/hostname",
    ]) + "\n")
    out = tree / "out.jsonl"
    assert run([str(listing), "--allow-files", str(allowed), "-o", str(out)]) == 0
    records = read_records(out)
    outcome = [(r["handler"], r["error"]["kind"] if r["error"] else "ok") for r in records]
    assert outcome == [
        ("html", "ok"), ("text", "ok"), ("html", "ok"), ("text", "ok"), ("text", "ok"),
        (None, "blocked"), (None, "blocked"), (None, "blocked"), (None, "blocked"),
        (None, "invalid_url"), (None, "invalid_url"), (None, "blocked"),
    ]
    assert records[0]["title"] == "Local page" and "local text" in records[0]["content"]
    assert records[0]["final_url"] == (allowed / "page.html").as_uri()
    assert records[1]["content"] == "A plain note." and records[1]["url"] == "sub/note.txt"
    assert all("do not read" not in (r["content"] or "") for r in records)
    assert "outside --allow-files" in records[5]["error"]["message"]


def test_without_the_flag_a_path_or_file_url_is_refused_with_the_way_to_allow_it(tree: Path):
    listing = tree / "list.txt"
    listing.write_text("allowed/page.html\n" + (tree / "allowed/page.html").as_uri() + "\n")
    out = tree / "out.jsonl"
    assert run([str(listing), "-o", str(out)]) == 0
    first, second = read_records(out)
    assert first["error"]["kind"] == "invalid_url" and second["error"]["kind"] == "blocked"
    assert all("--allow-files DIR" in r["error"]["message"] for r in (first, second))


def test_a_file_past_the_byte_cap_is_too_large_and_a_bad_directory_is_a_usage_error(
        tree: Path, capsys):
    listing = tree / "list.txt"
    listing.write_text("allowed/page.html\n")
    out = tree / "out.jsonl"
    assert run([str(listing), "--allow-files", str(tree), "--max-bytes", "100",
                "-o", str(out)]) == 0
    assert read_records(out)[0]["error"]["kind"] == "too_large"
    assert run([str(listing), "--allow-files", str(tree / "nowhere")]) == 2
    assert "not a directory" in capsys.readouterr().err


async def test_a_sharded_run_reads_local_files_in_its_shard_processes(tree: Path):
    listing = tree / "allowed" / "list.txt"
    listing.write_text("page.html\nsub/note.txt\nescape.txt\n")
    out = tree / "out"
    code, stderr = await run_cli(str(listing), "--allow-files", str(tree / "allowed"), "-o",
                                 str(out), "--processes", "2", "--workers", "2")
    assert code == 0, stderr
    records = [r for part in sorted(out.glob("part-*.jsonl")) for r in read_records(part)]
    kinds = sorted(r["error"]["kind"] if r["error"] else "ok" for r in records)
    assert kinds == ["blocked", "ok", "ok"]


def test_the_library_and_its_tools_never_read_local_files(tree: Path):
    target = (tree / "allowed" / "page.html").as_uri()
    response = web_extract_sync([target, str(tree / "allowed" / "page.html")])
    assert [r.error.kind for r in response.records] == ["blocked", "invalid_url"]
    parser = cli.build_parser()
    mcp = cli.command_parser("mcp")
    cli.add_settings_arguments(mcp, batch=False)
    assert "--allow-files" in parser.format_help() and "--allow-files" not in mcp.format_help()


def test_the_examples_list_gives_real_records_without_a_network(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    assert cli.main([str(EXAMPLES / "urls.txt"), "--allow-files", str(EXAMPLES),
                     "-o", str(out), *QUIET]) == 0
    article, pdf = read_records(out)
    assert article["ok"] and article["handler"] == "html"
    assert article["title"] == "Why Lighthouses Still Matter"
    assert "Sailors who work those waters" in article["content"]
    assert "Advertisement" not in article["content"]
    assert pdf["ok"] and pdf["handler"] == "pdf" and "Spring tides" in pdf["content"]


def test_claims_are_about_the_input_not_the_disk():
    assert LocalFiles.claims("notes/a.txt") and LocalFiles.claims("FILE:///x")
    assert not LocalFiles.claims("https://a.test/x") and not LocalFiles.claims("mailto:x")

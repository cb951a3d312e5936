"""Tables of URLs (``--input-format``, ``--url-column``) and lines' first field."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.batch.input.items import read_items
from pipeline.batch.input.tables import MAX_ROW_CHARS, read_input
from pipeline.cli import command as cli
from tests.cli.test_end_to_end import run_cli, site
from tests.support.pages import serve
from tests.support.records import read_records, text_fetcher

URLS = [f"https://t.test/{n}" for n in range(4)]
QUIET = ["--quiet", "--workers", "1"]


def run(argv: list[str]) -> int:
    return cli.main([*argv, *QUIET], fetcher=text_fetcher(URLS))


async def test_a_tsv_line_in_lines_mode_is_its_url_not_a_404(tmp_path):
    app, gets = site()
    async with serve(app) as base:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{base}/text/1\tmy label\n{base}/text/2 another label\n")
        out = tmp_path / "out.jsonl"
        code, stderr = await run_cli(str(urls), "-o", str(out), "--allow-net", "127.0.0.1/32",
                                     "--workers", "1")
    assert code == 0, stderr
    records = read_records(out)
    assert sorted(r["url"] for r in records) == [f"{base}/text/1", f"{base}/text/2"]
    assert all(r["ok"] for r in records)
    assert sorted((r["input"]["line"], r["input"]["rest"]) for r in records) == [
        (1, "my label"), (2, "another label")]
    assert gets == {"/text/1": 1, "/text/2": 1}
    assert "2 lines with text after the URL (kept as input.rest)" in stderr


def test_the_rest_of_a_url_line_is_kept_and_a_cut_url_never_fetched(tmp_path, capsys):
    lines = [
        "# a comment is no URL line", "",
        f"{URLS[0]}\tmy label",                      # a tab: always a label
        f"{URLS[1]}   Herons, a field guide",         # spaces, words: a label
        "http://exa mple.invalid/?q",                 # a space cuts the host
        f"{URLS[2]} a/b",                             # the path goes on after a space
        "not a url x",                                # prose: the line is the url
        URLS[3],
        "Notes: see below",
        "example.test  a label",                      # a host without scheme: a URL's try
    ]
    table = tmp_path / "urls.txt"
    table.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    fetcher = text_fetcher(URLS)
    assert cli.main([str(table), "-o", str(out), "--ordered", "--workers", "1"],
                    fetcher=fetcher) == 0
    records = read_records(out)
    assert [(r["index"], r["url"], r["input"]) for r in records] == [
        (0, URLS[0], {"line": 3, "rest": "my label"}),
        (1, URLS[1], {"line": 4, "rest": "Herons, a field guide"}),
        (2, "http://exa mple.invalid/?q", None),
        (3, f"{URLS[2]} a/b", None),
        (4, "not a url x", None),
        (5, URLS[3], None),
        (6, "Notes: see below", None),
        (7, "example.test", {"line": 10, "rest": "a label"}),
    ]
    assert "a space cuts the URL on line 5" in records[2]["error"]["message"]
    assert all(records[n]["error"]["kind"] == "invalid_url" for n in (3, 4, 6, 7))
    assert sorted(fetcher.calls) == [URLS[0], URLS[1], URLS[3]]  # never http://exa
    assert "3 lines with text after the URL (kept as input.rest)" in capsys.readouterr().err


async def test_a_csv_table_against_a_server_keeps_its_other_columns(tmp_path):
    app, _ = site()
    async with serve(app) as base:
        table = tmp_path / "urls.csv"
        table.write_text(f'id,title,URL\n7,"A, quoted",{base}/text/1\n8,plain,{base}/json/2\n'
                         "9,no url,\n")
        out = tmp_path / "out.jsonl"
        code, stderr = await run_cli(str(table), "--input-format", "csv", "-o", str(out),
                                     "--allow-net", "127.0.0.1/32", "--workers", "1", "--ordered")
    assert code == 0, stderr
    records = read_records(out)
    assert [(r["index"], r["url"], r["ok"], r["input"]) for r in records] == [
        (0, f"{base}/text/1", True, {"id": "7", "title": "A, quoted"}),
        (1, f"{base}/json/2", True, {"id": "8", "title": "plain"}),
        (2, "", False, {"id": "9", "title": "no url"}),
    ]
    assert records[2]["error"]["kind"] == "invalid_url"


def test_tsv_without_a_header_and_jsonl_with_any_fields(tmp_path):
    tsv = tmp_path / "urls.tsv"
    tsv.write_text(f'{URLS[0]}\tlabel "one\n{URLS[1]}\tlabel two\textra\n')
    out = tmp_path / "tsv.jsonl"
    assert run([str(tsv), "--input-format", "tsv", "-o", str(out), "--ordered"]) == 0
    assert [(r["url"], r["input"]) for r in read_records(out)] == [
        (URLS[0], {"2": 'label "one'}), (URLS[1], {"2": "label two", "3": "extra"})]

    jsonl = tmp_path / "urls.jsonl"
    jsonl.write_text(json.dumps({"id": 1, "link": URLS[2], "tags": ["a"], "meta": {"k": None}})
                     + "\n[1, 2]\n" + json.dumps({"link": 5}) + "\n")
    out = tmp_path / "jsonl.jsonl"
    assert run([str(jsonl), "--input-format", "jsonl", "--url-column", "link", "-o", str(out),
                "--ordered"]) == 0
    records = read_records(out)
    assert (records[0]["url"], records[0]["ok"]) == (URLS[2], True)
    assert records[0]["input"] == {"id": 1, "tags": ["a"], "meta": {"k": None}}
    assert [r["error"]["kind"] for r in records[1:]] == ["invalid_url", "invalid_url"]
    assert "not a JSON object" in records[1]["error"]["message"]


def test_url_column_by_number_and_a_missing_column_is_a_usage_error(tmp_path, capsys):
    table = tmp_path / "urls.csv"
    table.write_text(f"name,address\nx,{URLS[3]}\n")
    out = tmp_path / "out.jsonl"
    assert run([str(table), "--input-format", "csv", "--url-column", "2", "-o", str(out)]) == 0
    assert [(r["url"], r["input"]) for r in read_records(out)] == [(URLS[3], {"name": "x"})]
    assert run([str(table), "--input-format", "csv", "--url-column", "link"]) == 2
    err = capsys.readouterr().err
    assert "no such column (columns: name, address)" in err and "Traceback" not in err
    assert run([str(table), "--input-format", "lines", "--url-column", "2"]) == 2  # no columns


@pytest.mark.parametrize("format", ["csv", "tsv", "jsonl"])
def test_a_column_number_past_the_table_is_a_usage_error_like_an_unknown_name(
        tmp_path, capsys, format):
    table = tmp_path / f"urls.{format}"
    if format == "jsonl":
        table.write_text(json.dumps({"a": 1, "url": URLS[0], "c": 3, "d": 4}) + "\n")
    else:
        sep = "," if format == "csv" else "\t"
        table.write_text(sep.join(["a", "url", "c", "d"]) + f"\n1{sep}{URLS[0]}{sep}3{sep}4\n")
    out = tmp_path / "out.jsonl"
    assert run([str(table), "--url-column", "9", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--url-column 9: the table has 4 columns (columns: a, url, c, d)" in err
    assert not out.exists()  # refused before any output is opened


def test_a_table_is_read_by_its_name_with_a_note(tmp_path, capsys):
    for name, data in [("urls.csv", f"title,url\nA,{URLS[0]}\n"),
                       ("urls.tsv", f"title\turl\nA\t{URLS[0]}\n"),
                       ("urls.jsonl", json.dumps({"title": "A", "url": URLS[0]}) + "\n")]:
        table = tmp_path / name
        table.write_text(data)
        out = tmp_path / f"{name}.out.jsonl"
        assert cli.main([str(table), "-o", str(out), "--workers", "1"],
                        fetcher=text_fetcher(URLS)) == 0
        [record] = read_records(out)
        assert (record["url"], record["ok"], record["input"]) == (URLS[0], True, {"title": "A"})
        format = name.rsplit(".", 1)[1]
        assert f"reading {table} as {format} (by its name;" in capsys.readouterr().err


@pytest.mark.parametrize(("first", "format"), [
    ("url,title", "csv"), ("Title\tLink", "tsv"), ('{"url": "x"}', "jsonl"), ("URL", "csv")])
def test_a_list_whose_first_line_is_a_header_is_refused_with_the_flag(tmp_path, capsys,
                                                                       first, format):
    table = tmp_path / "urls.txt"
    table.write_text(f"# exported\n{first}\n{URLS[0]},A\n")
    assert run([str(table)]) == 2
    err = capsys.readouterr().err
    assert f"looks like a {format} table" in err and f"--input-format {format}" in err
    assert err.count("\n") == 1


def test_an_invalid_utf8_byte_in_a_csv_url_is_refused_not_replaced(tmp_path):
    table = tmp_path / "urls.csv"
    table.write_bytes(b"url,note\nhttps://t.test/\xff0,caf\xe9\n" + URLS[1].encode()
                      + b",fine\n")
    out = tmp_path / "out.jsonl"
    fetcher = text_fetcher([*URLS, "https://t.test/\ufffd0"])
    assert cli.main([str(table), "-o", str(out), "--ordered", "--quiet", "--workers", "1"],
                    fetcher=fetcher) == 0
    bad, good = read_records(out)
    assert bad["error"]["kind"] == "invalid_url" and "not valid UTF-8" in bad["error"]["message"]
    assert bad["input"] == {"note": "caf\ufffd"}
    assert good["ok"] and list(fetcher.calls) == [URLS[1]]


@pytest.mark.parametrize("field", ['"{huge}"', "{huge}", '"{huge}\n{huge}"'])
def test_a_field_past_the_row_limit_is_one_error_and_the_next_rows_are_read(field):
    huge = "x" * (3 * MAX_ROW_CHARS)
    data = f"url,n\n{URLS[0]},0\n{URLS[1]}," + field.format(huge=huge) + f"\n{URLS[2]},2\n"
    items = list(read_input(io.BytesIO(data.encode()), "csv"))
    assert [(i.index, i.url) for i in items] == [(0, URLS[0]), (1, "row at line 3"),
                                                   (2, URLS[2])]
    assert items[1].problem and "longer than" in items[1].problem
    assert items[2].extra == {"input": {"n": "2"}}


@pytest.mark.parametrize("format", ["csv", "tsv", "jsonl"])
def test_every_row_gives_one_item_in_order(format):
    rows = [f"https://r.test/{n}" for n in range(5)]
    if format == "jsonl":
        data = "".join(json.dumps({"url": url, "n": n}) + "\n" for n, url in enumerate(rows))
    else:
        sep = "," if format == "csv" else "\t"
        data = f"url{sep}n\n" + "".join(f"{url}{sep}{n}\n" for n, url in enumerate(rows))
    items = list(read_input(io.BytesIO(data.encode()), format))
    assert [(i.index, i.url) for i in items] == list(enumerate(rows))
    assert [i.extra["input"]["n"] in (n, str(n)) for n, i in enumerate(items)] == [True] * 5


def test_a_table_with_only_a_header_gives_no_record(tmp_path):
    table = tmp_path / "empty.csv"
    table.write_text("url,title\n")
    out = tmp_path / "out.jsonl"
    assert run([str(table), "--input-format", "csv", "-o", str(out)]) == 0
    assert out.read_text() == ""


PEAK_GROWTH = """
import resource, sys
from pipeline.batch.input.tables import read_input
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open(sys.argv[1], "rb") as handle:
    urls = [item.url for item in read_input(handle, "csv")]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, urls[-1])
"""


def test_a_huge_csv_field_is_read_past_without_being_held(tmp_path):
    """A 64 MiB quoted field: read in pieces (the old reader held it twice, ~2x its size)."""
    field = 64 << 20
    table = tmp_path / "urls.csv"
    with table.open("wb") as handle:
        handle.write(f'url,text\n{URLS[0]},"'.encode())
        for _ in range(field >> 20):
            handle.write(b"y" * (1 << 20))
        handle.write(f'"\n{URLS[1]},after\n'.encode())
    done = subprocess.run([sys.executable, "-c", PEAK_GROWTH, str(table)], check=True,
                          capture_output=True, text=True, cwd=Path(__file__).parents[3])
    growth_kib, last = done.stdout.split()
    assert last == URLS[1]
    assert int(growth_kib) < (field >> 10) // 8, f"peak grew {int(growth_kib) >> 10} MiB"


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,;!'", min_size=1,
               max_size=12)


@given(words=st.lists(WORD, min_size=2, max_size=6))
def test_a_line_of_prose_is_its_own_url(words):
    line = " ".join(words)
    [item] = read_items(io.BytesIO(line.encode() + b"\n"))
    assert (item.url, item.extra) == (line, None)


@given(path=st.from_regex(r"/[a-z0-9]{0,8}", fullmatch=True), label=st.lists(WORD, min_size=1,
                                                                              max_size=4))
def test_a_label_after_a_url_stays_its_rest(path, label):
    url = f"https://t.test{path}"
    [item] = read_items(io.BytesIO(f"{url} {' '.join(label)}\n".encode()))
    assert (item.url, item.extra) == (url, {"input": {"line": 1, "rest": " ".join(label)}})

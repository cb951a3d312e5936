"""Tables of URLs (``--input-format``, ``--url-column``) and lines' first field."""

from __future__ import annotations

import io
import json

import pytest

from pipeline.batch.input.tables import read_input
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
    assert all(r["ok"] and r["input"] is None for r in records)
    assert gets == {"/text/1": 1, "/text/2": 1}


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
    assert run([str(table), "--url-column", "2"]) == 2  # lines have no columns


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

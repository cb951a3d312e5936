"""``-o OUT.parquet``: the same records as columns, written a row group at a time, readable
while the run goes on, and resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from pipeline.batch.output import parquet_sink
from pipeline.batch.output.parquet_sink import ParquetSink, scan_parquet, schema
from pipeline.cli import command as cli
from pipeline.cli.merge import merge_main
from pipeline.core.models import ErrorInfo, Record
from tests.cli.test_end_to_end import run_cli, site
from tests.support.pages import serve
from tests.support.records import read_records, text_fetcher

URLS = [f"https://p.test/{n}" for n in range(12)]
QUIET = ["--quiet", "--workers", "1", "--ordered"]


def rows(path: Path) -> list[dict]:
    """The records of a Parquet directory, as JSON records look (JSON text columns read;
    the columns a record's JSON leaves out when null left out)."""
    found = pq.read_table(path).to_pylist()
    for row in found:
        for name in parquet_sink.JSON_FIELDS:
            if row[name] is not None:
                row[name] = json.loads(row[name])
        Record.leave_out_absent(row)
    return sorted(found, key=lambda row: row["index"])


def test_the_schema_has_every_record_field_in_order():
    assert schema().names == list(Record.model_fields)


def test_parquet_holds_the_same_records_as_jsonl(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_sink, "GROUP_RECORDS", 5)
    table = tmp_path / "urls.csv"
    table.write_text("url,label\n" + "".join(f"{u},L{n}\n" for n, u in enumerate(URLS))
                     + "not a url,bad\n")
    jsonl, parquet = tmp_path / "out.jsonl", tmp_path / "out.parquet"
    for out in (jsonl, parquet):
        argv = [str(table), "--input-format", "csv", "-o", str(out), *QUIET]
        assert cli.main(argv, fetcher=text_fetcher(URLS)) == 0
    assert sorted(p.name for p in parquet.iterdir()) == \
        ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]  # 5 + 5 + 3
    expected = read_records(jsonl)
    found = rows(parquet)
    for record in (*expected, *found):
        record.pop("elapsed_ms")
    assert found == expected
    assert found[0]["input"] == {"label": "L0"} and found[12]["error"]["kind"] == "invalid_url"


def test_row_groups_are_readable_while_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_sink, "GROUP_RECORDS", 4)
    out = tmp_path / "live.parquet"
    sink = ParquetSink(out)
    for n in range(9):
        sink.write(Record(url=URLS[n], index=n, ok=True, content=f"text {n}", chars=6))
    sink.drain()
    # two whole groups are parts already, while the sink is open; the 9th is buffered
    live = ds.dataset(out, format="parquet").to_table()
    assert sorted(live.column("index").to_pylist()) == list(range(8))
    assert len(parquet_sink.parts_in(out)) == 2
    [journal] = parquet_sink.journals_in(out)  # the 9th, kept until its part is written
    assert [json.loads(line)["index"] for line in journal.read_text().splitlines()] == [8]
    sink.close()
    assert list(out.glob(".journal-*")) == []
    assert sorted(pq.read_table(out).column("index").to_pylist()) == list(range(9))


async def test_a_parquet_run_is_resumed_against_a_server(tmp_path):
    app, gets = site()
    async with serve(app) as base:
        lines = [f"{base}/text/{n}" for n in range(12)]
        first = tmp_path / "first.txt"
        first.write_text("\n".join(lines[:7]) + "\n")  # an earlier run that did 7 lines
        every = tmp_path / "urls.txt"
        every.write_text("\n".join(lines) + "\n")
        out = tmp_path / "out.parquet"
        args = ["-o", str(out), "--allow-net", "127.0.0.1/32", "--workers", "1"]
        code, stderr = await run_cli(str(first), *args)
        assert code == 0, stderr
        (out / ".part-00007.parquet.tmp").write_bytes(b"PAR1 torn")  # a crash's leftover
        code, stderr = await run_cli(str(every), *args, "--resume")
        assert code == 0, stderr
    assert "resuming: 7 records already in" in stderr
    found = rows(out)
    assert [row["index"] for row in found] == list(range(12))
    assert [row["url"] for row in found] == lines and all(row["ok"] for row in found)
    assert all(count == 1 for count in gets.values()) and len(gets) == 12
    assert not any(path.name.startswith(".") for path in out.iterdir())
    done, dropped = scan_parquet(out)
    assert len(done) == 12 and dropped == 0 and (11, lines[11]) in done


def test_a_sharded_run_is_refused_parquet_and_merge_writes_it(tmp_path, capsys):
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(URLS) + "\n")
    assert cli.main([str(listing), "-o", str(tmp_path / "x.parquet"), "--processes", "2",
                     *QUIET]) == 2
    assert "merge OUT_DIR -o OUT.parquet" in capsys.readouterr().err
    shards = tmp_path / "shards"
    for shard in ("0/2", "1/2"):
        assert cli.main([str(listing), "-o", str(shards), "--shard", shard, *QUIET],
                        fetcher=text_fetcher(URLS)) == 0
    merged = tmp_path / "merged.parquet"
    assert merge_main([str(shards), "-o", str(merged)]) == 0
    assert [row["url"] for row in rows(merged)] == URLS


def test_an_output_file_named_parquet_is_refused(tmp_path, capsys):
    listing = tmp_path / "urls.txt"
    listing.write_text(URLS[0] + "\n")
    taken = tmp_path / "taken.parquet"
    taken.write_text("a file")
    assert cli.main([str(listing), "-o", str(taken), *QUIET], fetcher=text_fetcher(URLS)) == 2
    assert "Parquet output is a directory" in capsys.readouterr().err
    assert taken.read_text() == "a file"


def test_an_error_record_round_trips_through_the_struct(tmp_path):
    out = tmp_path / "e.parquet"
    sink = ParquetSink(out)
    record = Record.failure("https://p.test/x", ErrorInfo(kind="timeout", message="slow",
                                                         retryable=True), index=3,
                            source="https://p.test/sitemap.xml")
    sink.write(record)
    sink.close()
    [row] = rows(out)
    assert row["error"] == {"kind": "timeout", "message": "slow", "retryable": True}
    assert Record.model_validate(row) == record


@pytest.fixture(autouse=True)
def _pyarrow_present():
    """The module needs the [parquet] extra; the test extra carries it."""
    parquet_sink._pyarrow()


def stopped_by_a_full_disk(tmp_path, monkeypatch, capsys, write_table) -> tuple[Path, Path]:
    """Run over URLS to out.parquet with ``write_table`` in pyarrow's place: exit 74, said
    on stderr. Returns the listing and the output."""
    monkeypatch.setattr(pq, "write_table", write_table)
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(URLS) + "\n")
    out = tmp_path / "out.parquet"
    assert cli.main([str(listing), "-o", str(out), *QUIET], fetcher=text_fetcher(URLS)) == 74
    assert "No space left on device" in capsys.readouterr().err
    return listing, out


def test_a_full_disk_stops_the_run_with_exit_74_and_whole_parts_only(tmp_path, monkeypatch,
                                                                      capsys):
    monkeypatch.setattr(parquet_sink, "GROUP_RECORDS", 3)
    written = []

    def full_after_one(table, where, **options):
        if written:
            Path(where).write_bytes(b"half a part")  # what a full disk leaves behind
            raise OSError(28, "No space left on device")
        written.append(where)
        return real_write(table, where, **options)

    real_write = pq.write_table
    listing, out = stopped_by_a_full_disk(tmp_path, monkeypatch, capsys, full_after_one)
    # the torn part is gone; the records it was to hold wait in a journal
    assert [p.name for p in out.iterdir() if not p.name.startswith(".journal-")] == [
        "part-00000.parquet"]
    monkeypatch.setattr(pq, "write_table", real_write)
    assert cli.main([str(listing), "-o", str(out), "--resume", *QUIET],
                    fetcher=text_fetcher(URLS)) == 0
    assert [row["url"] for row in rows(out)] == URLS
    assert sorted(p.name for p in out.iterdir()) == [
        f"part-{n:05d}.parquet" for n in range(len(list(out.iterdir())))]  # journals gone


def test_a_full_disk_before_the_first_part_loses_no_finished_record(tmp_path, monkeypatch,
                                                                     capsys):
    """A run smaller than a row group: its one part cannot be written. Its records wait in
    the journal, and --resume writes them without fetching any page again."""
    def full(table, where, **options):
        raise OSError(28, "No space left on device")

    real_write = pq.write_table
    listing, out = stopped_by_a_full_disk(tmp_path, monkeypatch, capsys, full)
    assert parquet_sink.parts_in(out) == []
    assert cli.main([str(listing), "-o", str(out), *QUIET]) == 2  # it holds records
    capsys.readouterr()
    monkeypatch.setattr(pq, "write_table", real_write)
    nothing = text_fetcher([])  # every page is in the journal: none is fetched again
    assert cli.main([str(listing), "-o", str(out), "--resume", "--ordered",
                     "--workers", "1"], fetcher=nothing) == 0
    assert "12 already done" in capsys.readouterr().err
    found = rows(out)
    assert [row["url"] for row in found] == URLS and all(row["ok"] for row in found)
    assert list(out.glob(".journal-*")) == []


def test_a_parquet_output_holding_records_needs_resume_or_overwrite(tmp_path, capsys):
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(URLS[:3]) + "\n")
    out = tmp_path / "out.parquet"
    argv = [str(listing), "-o", str(out), *QUIET]
    assert cli.main(argv, fetcher=text_fetcher(URLS)) == 0
    assert cli.main(argv, fetcher=text_fetcher(URLS)) == 2
    assert "already holds records: --resume" in capsys.readouterr().err
    listing.write_text(URLS[5] + "\n")
    assert cli.main([*argv, "--overwrite"], fetcher=text_fetcher(URLS)) == 0
    assert [row["url"] for row in rows(out)] == [URLS[5]]

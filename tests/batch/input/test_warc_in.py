"""``--input-format warc`` over WARC files written by warcio (a writer other than ours): a
Common-Crawl-like file, directories and lists, sharded runs, and hostile or malformed files
(an error record, never a crash)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handlers import HandlerContext, HandlerOptions, registry_for
from pipeline.batch.input.warc_in import WarcRecords, warc_items
from pipeline.cli import command as cli
from pipeline.core.errors import PipelineError
from tests.batch.shards.test_sharded import merged
from tests.support.records import read_records
from tests.support.warc_files import article, chunked, common_crawl_like

pytest.importorskip("fastwarc", reason="the warc extra: pip install -e '.[warc]'")
warcio = pytest.importorskip("warcio", reason="warcio writes the test files (the test extra)")
from warcio.archiveiterator import ArchiveIterator  # noqa: E402
from warcio.statusandheaders import StatusAndHeaders  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def run(*argv: str) -> int:
    return cli.main([*argv, "--input-format", "warc", "--quiet"])


def response_offsets(path: Path) -> dict[str, int]:
    """{target URI: offset} of the response records, as warcio reports them."""
    found = {}
    with open(path, "rb") as handle:
        iterator = ArchiveIterator(handle)
        for record in iterator:
            if record.rec_type == "response":
                found[record.rec_headers.get_header("WARC-Target-URI")] = \
                    iterator.get_record_offset()
    return found


def html_content(body: bytes, url: str) -> str:
    """What our HTML handler makes of ``body`` (the handler a fetched page goes through)."""
    ctx = HandlerContext(url=url, final_url=url, media_type="text/html", charset=None,
                         format="markdown", options=HandlerOptions(max_chars=100_000))
    return registry_for(()).select("text/html", body[:1024]).handle(body, ctx).content


def test_a_common_crawl_like_file_as_it_is(tmp_path):
    path = tmp_path / "CC-MAIN-test-00000.warc.gz"
    pages = common_crawl_like(path)
    out = tmp_path / "out.jsonl"
    assert run(str(path), "-o", str(out)) == 0
    records = sorted(read_records(out), key=lambda r: r["index"])
    offsets = response_offsets(path)
    assert [r["url"] for r in records] == [
        *[f"https://example.test/plain/{n}" for n in range(3)], "https://example.test/wire",
        "https://example.test/cc", "https://example.test/moved",
        "https://example.test/logo.png"]  # warcinfo, request, metadata, revisit, dns: skipped
    assert [r["index"] for r in records] == list(range(7))
    for record in records:
        assert record["source"] == f"{path}@{offsets[record['url']]}"
        assert record["attempts"] == 0 and record["final_url"] == record["url"]
    for record in records[:5]:  # chunked + gzip on the wire, and Common Crawl's decoded form
        assert record["ok"], record["error"]
        assert record["status"] == 200 and record["content_type"] == "text/html"
        assert record["content"] == html_content(pages[record["url"]], record["url"])
    assert records[5]["error"]["kind"] == "http_status" and records[5]["status"] == 301
    assert records[6]["error"]["kind"] == "unsupported_type"


def test_files_directories_and_lists_in_order(tmp_path):
    one, two = tmp_path / "a.warc.gz", tmp_path / "crawl" / "b.warc"
    two.parent.mkdir()
    common_crawl_like(one)
    with open(two, "wb") as handle:  # an uncompressed WARC
        writer = WARCWriter(handle, gzip=False, warc_version="1.1")
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            "http://example.test/plain", "response", payload=io.BytesIO(article("Plain")),
            http_headers=http))
    listed = tmp_path / "lists" / "warc.paths"
    listed.parent.mkdir()
    listed.write_text("# a list, relative to its folder\n../a.warc.gz\n\n../crawl\n"
                      "../missing.warc.gz\n")
    for inputs in ([str(one), str(tmp_path / "crawl")], [str(listed)]):
        out = tmp_path / "out.jsonl"
        assert run(*inputs, "-o", str(out), "--overwrite") == 0
        records = sorted(read_records(out), key=lambda r: r["index"])
        assert [r["url"] for r in records][-2 if inputs[0] == str(listed) else -1] == \
            "http://example.test/plain"
        assert records[7]["ok"] and records[7]["source"].endswith("b.warc@0")
    assert records[-1]["error"]["kind"] == "invalid_url"
    assert "no such WARC file" in records[-1]["error"]["message"]
    assert len(records) == 9


def _members(path: Path) -> list[tuple[int, int]]:
    """(start, end) of each gzip member of a file."""
    data, spans, start = path.read_bytes(), [], 0
    while start < len(data):
        inflater = zlib.decompressobj(31)
        inflater.decompress(data[start:])
        end = len(data) - len(inflater.unused_data)
        spans.append((start, end))
        start = end
    return spans


def test_a_corrupt_record_is_one_error_record_and_the_rest_is_read(tmp_path):
    path = tmp_path / "bad.warc.gz"
    common_crawl_like(path)
    spans = _members(path)
    data = bytearray(path.read_bytes())
    start, _ = spans[5]  # the response record of plain/1
    data[start + 40:start + 60] = b"\xff" * 20
    path.write_bytes(bytes(data))
    out = tmp_path / "out.jsonl"
    assert run(str(path), "-o", str(out)) == 0
    records = sorted(read_records(out), key=lambda r: r["index"])
    bad = [r for r in records if not r["ok"] and r["error"]["kind"] == "decode"]
    assert len(bad) == 1 and bad[0]["source"] == f"{path}@{start}"
    assert "malformed WARC record" in bad[0]["error"]["message"]
    ok = {r["url"] for r in records if r["ok"]}
    assert ok == {"https://example.test/plain/0", "https://example.test/plain/2",
                  "https://example.test/wire", "https://example.test/cc"}


def test_a_torn_end_and_files_that_are_no_warc(tmp_path):
    path = tmp_path / "torn.warc.gz"
    common_crawl_like(path)
    start, end = _members(path)[-2]  # the last page's response record
    path.write_bytes(path.read_bytes()[:start + (end - start) // 2])
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "junk.warc.gz").write_bytes(gzip.compress(b"not a WARC at all"))
    (folder / "empty.warc").write_bytes(b"")
    whole = tmp_path / "whole.warc.gz"  # gzipped as one stream: no record can be read back
    whole.write_bytes(gzip.compress(b"".join(gzip.decompress(
        (tmp_path / "torn.warc.gz").read_bytes()[a:b]) for a, b in _members(path)[:6])))
    out = tmp_path / "out.jsonl"
    assert run(str(path), str(folder), str(whole), "-o", str(out)) == 0
    records = sorted(read_records(out), key=lambda r: r["index"])
    messages = [r["error"]["message"] for r in records if not r["ok"]]
    assert any(m.startswith("torn WARC record") for m in messages)
    assert sum("malformed WARC record" in m for m in messages) == 1  # junk; empty holds none
    assert any("gzipped whole" in m for m in messages)
    assert sum(r["ok"] for r in records) == 4 + 1  # torn's first pages, whole's first record


def _response_record(block: bytes, url: str = "http://example.test/x",
                     headers: bytes = b"") -> bytes:
    """A gzip member holding one response record whose block is ``block``, as is."""
    head = (b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
            b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: " + url.encode()
            + b"\r\nContent-Type: application/http; msgtype=response\r\n" + headers
            + b"Content-Length: %d\r\n\r\n" % len(block))
    return gzip.compress(head + block + b"\r\n\r\n")


HOSTILE = {
    "bomb": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n"
             + gzip.compress(b"<p>" + b"a" * 30_000_000), "too_large"),
    "not http": (b"SSH-2.0-OpenSSH\r\n\r\nhello", "decode"),
    "chunked header, plain body": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                   b"Transfer-Encoding: chunked\r\n\r\n" + article("Plain body"),
                                   None),
    "chunked": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked"
                b"\r\n\r\n" + chunked(article("Chunked body")), None),
    "broken gzip": (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip"
                    b"\r\n\r\n" + gzip.compress(article("Cut"))[:-30], "decode"),
    "huge header": (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\nbody", "decode"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_records_are_records_never_a_crash(tmp_path, name):
    block, kind = HOSTILE[name]
    path = tmp_path / "hostile.warc.gz"
    path.write_bytes(_response_record(block) + _response_record(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + article("After"),
        "http://example.test/after"))
    out = tmp_path / "out.jsonl"
    assert run(str(path), "-o", str(out), "--max-bytes", "1000000") == 0
    first, after = sorted(read_records(out), key=lambda r: r["index"])
    assert after["ok"] and after["url"] == "http://example.test/after"
    if kind is None:
        assert first["ok"] and "body" in first["content"]
    else:
        assert not first["ok"] and first["error"]["kind"] == kind, first["error"]


_SAMPLE: list[bytes] = []


def _sample(factory: pytest.TempPathFactory) -> bytes:
    """One Common-Crawl-like file for every example (its record ids are random)."""
    if not _SAMPLE:
        path = factory.mktemp("sample") / "a.warc.gz"
        common_crawl_like(path)
        _SAMPLE.append(path.read_bytes())
    return _SAMPLE[0]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_damage_gives_items_in_order_never_an_exception(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("damaged")
    path = folder / "a.warc.gz"
    raw = bytearray(_sample(tmp_path_factory))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at:at + 1] = data.draw(st.binary(min_size=0, max_size=3))
    path.write_bytes(bytes(raw))
    items = list(warc_items([str(path)]))
    assert [item.index for item in items] == list(range(len(items)))
    records = WarcRecords()
    for item in items:
        assert item.extra is not None and item.extra["source"].startswith(str(path))
        if item.problem is None:
            assert item.locator is not None
            where, _, offset = item.locator.rpartition("@")
            with contextlib.suppress(PipelineError):  # a typed error, nothing else
                records.read(where, int(offset), 1_000_000)
    records.close()


def test_a_sharded_run_over_warc_input_merges_to_every_record(tmp_path):
    paths = []
    for n in range(2):
        paths.append(tmp_path / f"{n}.warc.gz")
        common_crawl_like(paths[-1])
    out = tmp_path / "out"
    # its own process, as a user runs it (the shard processes fork from it)
    done = subprocess.run([sys.executable, "-m", "pipeline", *map(str, paths), "-o", str(out),
                           "--processes", "2", "--input-format", "warc", "--quiet",
                           "--warc-captures", "all"],  # the two files hold the same URLs
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    records = merged(out, tmp_path)
    assert [r["index"] for r in records] == list(range(14))
    assert [r["source"].split("@")[0] for r in records] == [str(paths[0])] * 7 + [
        str(paths[1])] * 7
    assert sum(r["ok"] for r in records) == 10
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["shards"] == 2


def test_warc_input_mistakes_are_one_line(tmp_path, monkeypatch, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("http://example.test/\n")
    assert cli.main([str(urls), str(urls), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "several inputs go with --input-format warc" in capsys.readouterr().err
    assert run("-", "-o", str(tmp_path / "o.jsonl")) == 2
    assert run(str(urls), "--sitemap", "http://example.test/s.xml") == 2
    assert run(str(urls), "--render", "auto") == 2  # the browser would go to the network
    assert "drop --render auto" in capsys.readouterr().err
    monkeypatch.setenv("FIRECRAWL_API_KEY", "test-key")  # configured: a vendor is never sent
    assert run(str(urls), "--extract-backend", "firecrawl") == 2  # a WARC's records
    assert "extracts with our own pipeline" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "fastwarc", None)
    assert run(str(urls), "-o", str(tmp_path / "o.jsonl")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "needs fastwarc: pip install -e '.[warc]'" in err[-1]


def test_a_shard_over_other_warc_inputs_is_refused_naming_them(tmp_path, capsys):
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:  # directories: no file's bytes to fingerprint, their paths count
        folder.mkdir()
        common_crawl_like(folder / "crawl.warc.gz")
    out = str(tmp_path / "out")
    assert run(str(folders[0]), "--shard", "0/2", "-o", out) == 0
    capsys.readouterr()
    for inputs in ([folders[1]], [folders[0], folders[1]]):
        assert run(*map(str, inputs), "--shard", "1/2", "-o", out) == 2
        err = capsys.readouterr().err.strip()
        assert "WARC inputs" in err and len(err.splitlines()) == 1, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["items"]["format"] == "warc"
    assert run(str(folders[0]), "--shard", "1/2", "-o", out) == 0  # the same run's shard
    assert len(merged(tmp_path / "out", tmp_path)) == 7


def test_a_warc_name_is_read_as_warc_and_said_so(tmp_path, capsys):
    path = tmp_path / "crawl.warc.gz"
    common_crawl_like(path)
    out = tmp_path / "out.jsonl"
    assert cli.main([str(path), "-o", str(out)]) == 0  # no --input-format
    assert f"reading {path} as WARC (by its name" in capsys.readouterr().err
    records = read_records(out)
    assert len(records) == 7 and all(r["source"].startswith(f"{path}@") for r in records)

"""JSONL sink and the resume reader."""

from __future__ import annotations

import errno
import io
import json
from pathlib import Path

import pytest

from pipeline.batch.output.sinks import (
    BACKGROUND_BYTES,
    QUEUED_RECORDS,
    DoneSet,
    JsonlSink,
    repair_tail,
    scan_done,
)
from pipeline.core.errors import OutputError
from pipeline.core.models import ErrorInfo, Record


def records():
    yield Record(url="http://example.test/a", index=0, ok=True, content="x\n\"quoted\"")
    yield Record.failure('http://example.test/"q"\\\u00e9', ErrorInfo(kind="network",
                                                                     message="m"), index=1)
    yield Record(url="http://example.test/c", index=7, ok=True, content="y")


def test_sink_writes_one_json_line_per_record(tmp_path):
    out = tmp_path / "out.jsonl"
    sink = JsonlSink.open(out)
    for record in records():
        sink.write(record)
        # flushed at once: what is written is on disk before the next record
        assert out.read_bytes().endswith(b"\n")
    sink.close()
    lines = out.read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1, 7]


def test_scan_done_reads_pairs_and_repairs_a_torn_tail(tmp_path):
    out = tmp_path / "out.jsonl"
    sink = JsonlSink.open(out)
    for record in records():
        sink.write(record)
    sink.close()
    with out.open("ab") as handle:
        handle.write(b'{"url":"http://example.test/torn","index":9,"ok":tr')
    done, dropped = scan_done(out)
    assert dropped == len(b'{"url":"http://example.test/torn","index":9,"ok":tr')
    assert len(done) == 3
    assert (0, "http://example.test/a") in done
    assert (1, 'http://example.test/"q"\\\u00e9') in done
    assert (7, "http://example.test/c") in done
    assert (9, "http://example.test/torn") not in done
    assert (0, "http://example.test/other") not in done
    assert out.read_bytes().endswith(b"\n") and out.read_bytes().count(b"\n") == 3


def test_scan_done_accepts_lines_in_another_key_order(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"index": 4, "url": "http://example.test/z"}\nnot json\n\n')
    done, _ = scan_done(out)
    assert (4, "http://example.test/z") in done and len(done) == 1
    assert done.invalid == 1  # the blank line is no record, nor an invalid one


def test_repair_tail_edge_cases(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"")
    assert repair_tail(path) == 0
    path.write_bytes(b"no newline at all" * 10_000)
    assert repair_tail(path) == 170_000 and path.read_bytes() == b""
    path.write_bytes(b"a\n" + b"b" * 200_000)  # the last newline is several chunks back
    assert repair_tail(path) == 200_000 and path.read_bytes() == b"a\n"
    assert repair_tail(path) == 0


def test_done_set_sparse_and_dense():
    done = DoneSet()
    done.add(0, "a")
    done.add(10**9, "far")
    done.add(0, "a")
    assert len(done) == 2 and (10**9, "far") in done and (0, "a") in done
    assert (1, "a") not in done and (10**9 + 1, "far") not in done


def test_background_sink_keeps_order_across_large_and_small_records(tmp_path):
    out = tmp_path / "out.jsonl"
    sink = JsonlSink.open(out, background=True)
    sizes = [BACKGROUND_BYTES * 2 if i % 3 == 0 else 10 for i in range(3 * QUEUED_RECORDS)]
    for index, size in enumerate(sizes):
        sink.write(Record(url=f"http://example.test/{index}", index=index, ok=True,
                          content="x" * size))
    sink.close()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["index"] for line in lines] == list(range(len(sizes)))
    assert [len(line["content"]) for line in lines] == sizes


class _FailingStream(io.RawIOBase):
    """Accepts ``good`` writes, then fails every write like a full disk."""

    def __init__(self, good: int) -> None:
        self.good = good
        self.lines: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if len(self.lines) >= self.good:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.lines.append(bytes(data))
        return len(data)


def test_background_sink_reports_a_failed_write_once():
    stream = _FailingStream(good=1)
    sink = JsonlSink(stream, background=True)
    big = "x" * BACKGROUND_BYTES
    sink.write(Record(url="http://example.test/0", index=0, ok=True, content=big))
    sink.write(Record(url="http://example.test/1", index=1, ok=True, content=big))
    with pytest.raises(OSError) as failure:
        for index in range(2, 2 + 4 * QUEUED_RECORDS):  # the thread's failure surfaces
            sink.write(Record(url=f"http://example.test/{index}", index=index, ok=True,
                              content=big))
    assert failure.value.errno == errno.ENOSPC
    sink.close()  # already reported: closing does not raise it again
    assert len(stream.lines) == 1 and b'"index":0' in stream.lines[0]


class _ShortWrites(io.RawIOBase):
    """Takes only ``take`` bytes of the writes numbered in ``short`` (a disk filling up,
    then space coming back), and fails the writes numbered in ``failing``."""

    def __init__(self, short: set[int], take: int = 10, failing: frozenset[int] = frozenset()):
        self.short, self.take, self.failing = short, take, failing
        self.calls = 0
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.calls += 1
        if self.calls in self.failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        taken = bytes(data[: self.take] if self.calls in self.short else data)
        self.data += taken
        return len(taken)


@pytest.mark.parametrize("background", [False, True])
def test_a_short_write_is_continued_so_no_two_records_share_a_line(background):
    stream = _ShortWrites(short={2, 5})
    sink = JsonlSink(stream, background=background)
    sent = list(records())
    for record in sent:
        sink.write(record)
    sink.close()
    lines = bytes(stream.data).splitlines()
    assert [json.loads(line)["index"] for line in lines] == [r.index for r in sent]


def test_a_failed_write_breaks_the_sink_and_cuts_its_partial_line(tmp_path):
    out = tmp_path / "out.jsonl"

    class Filling(io.FileIO):  # the second record gets 10 bytes in, then the disk is full
        calls = 0

        def write(self, data) -> int:
            Filling.calls += 1
            if Filling.calls == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().write(data[:10] if Filling.calls == 2 else data)

    sink = JsonlSink(Filling(out, "wb"), owns=True, name=str(out))
    first, second, third = records()
    sink.write(first)
    with pytest.raises(OutputError) as failure:
        sink.write(second)
    assert failure.value.errno == errno.ENOSPC and failure.value.filename == str(out)
    with pytest.raises(OutputError):  # nothing is ever written after a failure
        sink.write(third)
    sink.close()
    assert out.read_bytes() == first.to_json().encode() + b"\n"


def test_writing_to_a_full_device_raises_an_output_error():
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    sink = JsonlSink.open("/dev/full")
    with pytest.raises(OutputError) as failure:
        sink.write(next(records()))
    sink.close()
    assert failure.value.errno == errno.ENOSPC and failure.value.filename == "/dev/full"


@pytest.mark.parametrize("damage", ["cut in half", "two records on one line"])
def test_resume_does_not_count_a_damaged_line_as_done(tmp_path, damage):
    out = tmp_path / "out.jsonl"
    sink = JsonlSink.open(out)
    for index in range(5):
        sink.write(Record(url=f"http://example.test/{index}", index=index, ok=True,
                          content="text " * 20))
    sink.close()
    lines = out.read_bytes().splitlines(keepends=True)
    if damage == "cut in half":  # its newline kept: repair_tail does not see it
        lines[2] = lines[2][: len(lines[2]) // 2] + b"\n"
    else:  # a short write ignored: the next record went on after the first one's start
        lines[2:4] = [lines[2][: len(lines[2]) // 2] + lines[3]]
    out.write_bytes(b"".join(lines))
    done, dropped = scan_done(out)
    assert (2, "http://example.test/2") not in done
    assert dropped == 0 and done.invalid == 1
    kept = {0, 1, 4} if damage == "two records on one line" else {0, 1, 3, 4}
    assert {i for i in range(5) if (i, f"http://example.test/{i}") in done} == kept

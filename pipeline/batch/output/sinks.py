"""JSONL output: one record per line, each written whole and flushed; and the resume
reader, which finds the (index, url) pairs an earlier run already wrote."""

from __future__ import annotations

import errno
import json
import os
import queue
import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import TypeAdapter
from pydantic_core import from_json

from pipeline.core.errors import OutputError
from pipeline.core.models import Record

_TAIL_CHUNK = 64 * 1024
_DENSE_SLACK = 1 << 20  # indices this far past the dense range go to a dict
# Bytes straight from pydantic's serializer: no str in between to encode (a third faster on
# a 100 KB record).
_RECORD_JSON = TypeAdapter(Record)
StoredText = tuple[int, str | None, int | None]  # a written record's index, content, duplicate_of


class JsonlSink:
    """Writes records to a binary stream, one record per line, each written whole (a short
    write is continued) and flushed, so a crash loses at most the records in flight.

    A write that fails (a full disk, a failing device) raises :class:`OutputError` and
    breaks the sink: no later record is written after a torn line. When the sink opened
    the file itself, the failed record's partial bytes are cut off, so the file holds whole
    records only (else ``--resume`` repairs the torn tail). ``BrokenPipeError`` (stdout's
    reader is gone) passes as it is.

    With ``background=True`` large records are written by a writer thread: the write system
    call runs without the GIL, so on an event loop its kernel time (benchmarks/README.md,
    figures behind the code) overlaps the loop's work instead of adding to it. Small
    records are written at once unless the thread is still busy (records keep their order);
    a thread hand-off would cost them more than their write. At most
    :data:`QUEUED_RECORDS` wait, so a crash loses at most those too, and a slow disk holds
    the caller back. A failed write is raised by the next :meth:`write` or by :meth:`close`.
    """

    def __init__(self, stream: BinaryIO, *, owns: bool = False, background: bool = False,
                 name: str | None = None) -> None:
        self._stream = stream
        self._owns = owns
        self.name = name or str(getattr(stream, "name", "the output"))
        self._failure: OutputError | None = None
        self._writer = _WriterThread(self._write_line) if background else None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, append: bool = False,
             background: bool = False) -> JsonlSink:
        return cls(open(path, "ab" if append else "wb", buffering=0), owns=True,
                   background=background, name=os.fspath(path))

    def write(self, record: Record) -> None:
        line = _RECORD_JSON.dump_json(record) + b"\n"
        if self._writer is None:
            self._write_line(line)
            return
        self._writer.raise_failure()
        if len(line) >= BACKGROUND_BYTES or self._writer.busy:
            self._writer.put(line)
        else:
            self._write_line(line)

    def _write_line(self, line: bytes) -> None:
        if self._failure is not None:
            raise self._failure
        view = memoryview(line)
        done = 0
        try:
            while done < len(line):
                # An unbuffered file may take part of the line (a disk filling up): go on
                # with the rest, so two records never share a line.
                count = self._stream.write(view[done:])
                if not count:  # None: it would block; 0: no progress — neither ends
                    raise OSError(errno.EIO, "the output accepted no bytes")
                done += count
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            if done and self._owns:
                self._cut(done)
            self._failure = OutputError(exc.errno, exc.strerror or str(exc), self.name)
            raise self._failure from exc

    def _cut(self, partial: int) -> None:
        """Cut the failed record's ``partial`` bytes off the end of our own file."""
        try:
            end = self._stream.seek(0, os.SEEK_END)
            self._stream.truncate(end - partial)
            self._stream.seek(end - partial)
        except (OSError, ValueError):
            pass  # --resume repairs a torn last line anyway

    def close(self) -> None:
        """Write what is queued, then close the stream if this sink opened it."""
        try:
            if self._writer is not None:
                self._writer.close()
        finally:
            if self._owns:
                self._stream.close()


QUEUED_RECORDS = 64
BACKGROUND_BYTES = 32 * 1024  # smaller records are written on the caller's thread


class _WriterThread:
    """Calls ``write`` with each queued line, in order, on a daemon thread."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write
        self._queue: queue.Queue[bytes | None] = queue.Queue(QUEUED_RECORDS)
        # One counter per thread (a shared one would lose updates between the two).
        self._queued = 0
        self._written = 0
        self._failure: BaseException | None = None
        self._reported = False
        self._thread = threading.Thread(target=self._run, name="pipeline-writer", daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        return self._written != self._queued

    def _run(self) -> None:
        while (line := self._queue.get()) is not None:
            if self._failure is None:  # after a failure, lines are drained, not written
                try:
                    self._write(line)
                except BaseException as exc:
                    self._failure = exc
            self._written += 1

    def raise_failure(self) -> None:
        """Raise the failed write's error, once (the run it ends has no use for a repeat)."""
        if self._failure is not None and not self._reported:
            self._reported = True
            raise self._failure

    def put(self, line: bytes) -> None:
        self._queued += 1
        self._queue.put(line)

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self.raise_failure()


class DoneSet:
    """(index, url) pairs already recorded. Compact: a dense array of URL hashes by index
    (8 bytes per line), so a million-line output costs about 8 MB. Hashes are only
    compared within one process."""

    def __init__(self) -> None:
        self._dense = array("q")
        self._sparse: dict[int, int] = {}
        self.count = 0
        self.invalid = 0  # lines of the scanned file that are not whole records

    @staticmethod
    def _key(url: str) -> int:
        return hash(url) or 1  # 0 marks "not done"

    def add(self, index: int, url: str) -> None:
        key = self._key(url)
        if index >= len(self._dense) and index < len(self._dense) + _DENSE_SLACK:
            self._dense.extend([0] * (index + 1 - len(self._dense)))
        if index < len(self._dense):
            self.count += self._dense[index] == 0
            self._dense[index] = key
        else:
            self.count += index not in self._sparse
            self._sparse[index] = key

    def __contains__(self, item: tuple[int, str]) -> bool:
        index, url = item
        stored = self._dense[index] if index < len(self._dense) else self._sparse.get(index, 0)
        return stored != 0 and stored == self._key(url)

    def __len__(self) -> int:
        return self.count


def repair_tail(path: str | os.PathLike[str]) -> int:
    """Cut a torn last line (no final newline) off the file; returns the bytes dropped."""
    with open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - _TAIL_CHUNK)
            handle.seek(start)
            chunk = handle.read(end - start)
            if end == size and chunk.endswith(b"\n"):
                return 0
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            end = start
        else:
            keep = 0
        handle.truncate(keep)
        return size - keep


def _load(line: bytes) -> dict[str, Any] | None:
    """One output line as a JSON object, or None when it is not one (cut short, two
    records run together)."""
    try:
        data = from_json(line, cache_strings="keys")
    except ValueError:
        try:  # what jiter refuses and Python's json takes: lone surrogate escapes
            data = json.loads(line)
        except (ValueError, RecursionError):
            return None
    return data if type(data) is dict else None


def _parse(line: bytes) -> tuple[int, str] | None:
    """(index, url) of one output line when it is a whole JSON record, else None: a line
    cut short or two records run together is not done (its URL is fetched again)."""
    if (data := _load(line)) is not None:
        index, url = data.get("index"), data.get("url")
        if type(index) is int and type(url) is str:
            return index, url
    return None


def stored_texts(path: str | os.PathLike[str]) -> Iterator[StoredText]:
    """(index, content, duplicate_of) of each whole record of a JSONL output, in the file's
    order (what ``--dedup`` reads back on ``--resume``)."""
    with open(path, "rb") as handle:
        for line in handle:
            data = _load(line)
            if data is not None and type(data.get("index")) is int and type(
                    data.get("url")) is str:  # a whole record, as scan_done counts them
                content, original = data.get("content"), data.get("duplicate_of")
                yield (data["index"], content if type(content) is str else None,
                       original if type(original) is int else None)


def record_key(line: bytes) -> tuple[int, str] | None:
    """(index, url) of an output line that is a whole record, else None (as
    :func:`scan_done` reads it)."""
    return _parse(line)


def scan_done(path: str | os.PathLike[str]) -> tuple[DoneSet, int]:
    """Repair the file's torn tail, then return the pairs it records and the bytes dropped.
    Every line is parsed whole; the lines that are not records are counted in
    ``DoneSet.invalid`` (they stay in the file; their URLs are not done)."""
    done = DoneSet()
    if not Path(path).exists():
        return done, 0
    dropped = repair_tail(path)
    with open(path, "rb") as handle:
        for line in handle:
            found = _parse(line)
            if found is not None:
                done.add(*found)
            elif line.strip():
                done.invalid += 1
    return done, dropped

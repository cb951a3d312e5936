"""JSONL output: one record per line, each written with one write and flushed; and the
resume reader, which finds the (index, url) pairs an earlier run already wrote."""

from __future__ import annotations

import json
import os
import re
from array import array
from pathlib import Path
from typing import BinaryIO

from pydantic import TypeAdapter

from pipeline.models import Record

# Records are written by pydantic in field order, so a line starts with url then index.
# Inside a JSON string every '"' is escaped, so the first '","index":' ends the URL.
_HEAD = b'{"url":"'
_SEPARATOR = b'","index":'
_DIGITS = re.compile(rb"\d+")
_TAIL_CHUNK = 64 * 1024
_DENSE_SLACK = 1 << 20  # indices this far past the dense range go to a dict
# Bytes straight from pydantic's serializer: no str in between to encode (a third faster on
# a 100 KB record).
_RECORD_JSON = TypeAdapter(Record)


class JsonlSink:
    """Writes records to a binary stream, one ``write`` + ``flush`` per record, so a crash
    loses at most the records in flight."""

    def __init__(self, stream: BinaryIO, *, owns: bool = False) -> None:
        self._stream = stream
        self._owns = owns

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, append: bool = False) -> JsonlSink:
        return cls(open(path, "ab" if append else "wb", buffering=0), owns=True)

    def write(self, record: Record) -> None:
        self._stream.write(_RECORD_JSON.dump_json(record) + b"\n")
        self._stream.flush()

    def close(self) -> None:
        if self._owns:
            self._stream.close()


class DoneSet:
    """(index, url) pairs already recorded. Compact: a dense array of URL hashes by index
    (8 bytes per line), so a million-line output costs about 8 MB. Hashes are only
    compared within one process."""

    def __init__(self) -> None:
        self._dense = array("q")
        self._sparse: dict[int, int] = {}
        self.count = 0

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


def _parse(line: bytes) -> tuple[int, str] | None:
    """(index, url) of one output line, reading only its prefix when it has our shape."""
    if line.startswith(_HEAD) and (end := line.find(_SEPARATOR, len(_HEAD))) >= 0:
        digits = _DIGITS.match(line, end + len(_SEPARATOR))
        literal = line[len(_HEAD):end]
        try:
            url = json.loads(b'"' + literal + b'"') if b"\\" in literal else literal.decode()
        except ValueError:
            url = None
        if digits is not None and isinstance(url, str):
            return int(digits.group()), url
    try:  # not written by us in the usual shape: read it the slow way
        data = json.loads(line)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("index"), int) and \
            isinstance(data.get("url"), str):
        return data["index"], data["url"]
    return None


def scan_done(path: str | os.PathLike[str]) -> tuple[DoneSet, int]:
    """Repair the file's torn tail, then return the pairs it records and the bytes dropped.
    Streams the file and parses only each line's prefix."""
    done = DoneSet()
    if not Path(path).exists():
        return done, 0
    dropped = repair_tail(path)
    with open(path, "rb") as handle:
        for line in handle:
            found = _parse(line)
            if found is not None:
                done.add(*found)
    return done, dropped

"""The parts of a finished sharded run as one JSONL file (or Parquet) in input order
(``index``), every record exactly once (``python -m pipeline merge``: :mod:`pipeline.cli.merge`).

Memory is about 50 bytes per record (each record's index and where it is; the records
themselves are copied from the parts, not held), and with ``--dedup`` what the deduplicator
keeps per distinct record (:mod:`pipeline.batch.dedup`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pipeline.batch.dedup import Deduplicator
from pipeline.batch.output.output_dir import OutputDir, read_manifest
from pipeline.batch.output.parquet_sink import is_parquet
from pipeline.batch.output.sinks import record_key
from pipeline.core.errors import UsageError
from pipeline.core.models import Record

if TYPE_CHECKING:
    from pipeline.batch.output.parquet_sink import ParquetSink

_OFFSET_BITS = 48  # a record's place: part number above, byte offset below


def finished_parts(directory: Path) -> OutputDir:
    """The output directory, checked: a sharded run's, with every shard done."""
    found = read_manifest(directory) if directory.is_dir() else None
    if found is None:
        raise UsageError(f"{directory} is not the output directory of a sharded run")
    output = OutputDir(directory, int(found["shards"]))
    if pending := output.pending():
        shown = ", ".join(map(str, pending[:10])) + (", …" if len(pending) > 10 else "")
        raise UsageError(f"{len(pending)} of {output.shards} shards are not done ({shown}): "
                         "finish the run with --resume first")
    return output


def remarked(line: bytes, deduplicator: Deduplicator) -> bytes:
    """A part's line with its shard's ``duplicate_of`` replaced by ``deduplicator``'s mark,
    which has seen every record of a lower index."""
    record = Record.model_validate_json(line)
    marked = deduplicator.mark(record.model_copy(update={"duplicate_of": None}))
    if marked.duplicate_of == record.duplicate_of and marked.ok == record.ok:
        return line
    return marked.model_dump_json().encode() + b"\n"


def merge(directory: Path, out: BinaryIO, deduplicator: Deduplicator | None = None) -> int:
    """Write every record of the run in ``directory`` to ``out`` in index order; returns
    how many. Lines that are not whole records (left by a resumed shard, whose URLs were
    done again) are passed over. With ``deduplicator`` (``merge --dedup``) the records are
    marked again across shards, in index order."""
    output = finished_parts(directory)
    indices, places = array("q"), array("q")
    parts = [output.part(shard) for shard in range(output.shards)]
    for number, path in enumerate(parts):
        offset, records = 0, 0
        with open(path, "rb") as handle:
            for line in handle:
                if (key := record_key(line)) is not None:
                    indices.append(key[0])
                    places.append(number << _OFFSET_BITS | offset)
                    records += 1
                offset += len(line)
        expected = output.read_marker(number)["records"]
        if records != expected:
            raise UsageError(f"{path.name} has {records} records, its .done marker says "
                             f"{expected}")
    order = sorted(range(len(indices)), key=indices.__getitem__)
    with contextlib.ExitStack() as stack:
        handles = [stack.enter_context(open(path, "rb")) for path in parts]
        previous = -1
        for position in order:
            if indices[position] == previous:
                raise UsageError(f"index {previous} is recorded twice in {directory}")
            previous = indices[position]
            handle = handles[places[position] >> _OFFSET_BITS]
            handle.seek(places[position] & ((1 << _OFFSET_BITS) - 1))
            line = handle.readline()
            out.write(line if deduplicator is None else remarked(line, deduplicator))
    return len(order)


def _written_in_place(target: str) -> bool:
    """A device or pipe, or a descriptor's name (``/dev/stdout``): nothing to rename over."""
    if not os.path.exists(target) or os.path.isdir(target):
        return False
    return not os.path.isfile(target) or target.startswith(("/dev/", "/proc/"))


def merge_to(directory: Path, target: str | None,
             deduplicator: Deduplicator | None = None) -> int:
    """:func:`merge` into ``target`` (through a temporary name, renamed when complete), or
    to stdout when None; a device, a pipe or ``/dev/stdout`` is written as it is."""
    if target is None:
        count = merge(directory, sys.stdout.buffer, deduplicator)
        sys.stdout.buffer.flush()
        return count
    if _written_in_place(target):
        with open(target, "wb") as stream:
            return merge(directory, stream, deduplicator)
    if is_parquet(target):
        return _merge_to_parquet(directory, Path(target), deduplicator)
    folder = Path(target).resolve().parent
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{Path(target).name}.", dir=folder)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            count = merge(directory, handle, deduplicator)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return count


class _ParquetLines:
    """A binary stream for :func:`merge` that writes each record line to a Parquet sink."""

    def __init__(self, sink: ParquetSink) -> None:
        self.sink = sink

    def write(self, line: bytes) -> int:
        self.sink.write(Record.model_validate_json(line))
        return len(line)


def _merge_to_parquet(directory: Path, target: Path,
                      deduplicator: Deduplicator | None) -> int:
    """:func:`merge` into a Parquet directory, built beside ``target`` and renamed over it
    when complete (an earlier ``target`` directory is replaced)."""
    from pipeline.batch.output.parquet_sink import ParquetSink

    building = target.with_name(f".{target.name}.merging")
    shutil.rmtree(building, ignore_errors=True)
    sink = ParquetSink(building)
    try:
        try:
            count = merge(directory, _ParquetLines(sink),  # type: ignore[arg-type]
                          deduplicator)
        finally:
            sink.close()
        if target.is_dir():
            shutil.rmtree(target)
        os.replace(building, target)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return count

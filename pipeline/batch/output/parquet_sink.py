"""Parquet output (``-o OUT.parquet``, extra ``[parquet]``): the records as columns.

``OUT.parquet`` is a directory of part files, as Spark, DuckDB and pyarrow write a dataset:
``part-00000.parquet``, ``part-00001.parquet``, … Records are buffered into a row group
(:data:`GROUP_RECORDS` records, :data:`GROUP_BYTES` of content or :data:`GROUP_SECONDS`,
whichever comes first) and each group is written as a part of its own by a writer thread,
under a hidden temporary name then renamed, so memory stays bounded and every part that
exists is whole: the directory can be read (``pandas.read_parquet``,
``pyarrow.dataset``) while the run goes on, and ``--resume`` reads the parts written. A
crash loses the records still buffered; ``--resume`` does their URLs again.

Columns are the record's fields; ``metadata`` and ``input`` (maps of any JSON) are JSON
text, ``error`` a struct of ``kind``, ``message``, ``retryable``.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.batch.output.sinks import DoneSet, StoredText
from pipeline.core.errors import OutputError, UsageError
from pipeline.core.extras import install_hint
from pipeline.core.models import Record

SUFFIX = ".parquet"
GROUP_RECORDS = 5_000
GROUP_BYTES = 32 * 1024 * 1024  # content characters buffered before a group is written
GROUP_SECONDS = 300.0
PART_PREFIX = "part-"
JSON_FIELDS = ("metadata", "input")


def is_parquet(path: str | os.PathLike[str] | None) -> bool:
    """The one place the output's format is chosen: by its suffix."""
    return path is not None and os.fspath(path).lower().endswith(SUFFIX)


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise UsageError(f"-o OUT.parquet needs pyarrow: {install_hint('parquet')}") from exc
    return pyarrow


def schema() -> Any:
    """The Arrow schema of a record (a test keeps it in step with :class:`Record`)."""
    pa = _pyarrow()
    text, number, flag = pa.string(), pa.int64(), pa.bool_()
    return pa.schema([
        ("url", text), ("index", number), ("ok", flag), ("final_url", text),
        ("status", number), ("content_type", text), ("handler", text), ("title", text),
        ("content", pa.large_string()), ("format", text), ("metadata", text),
        ("truncated", flag), ("next_offset", number), ("compressed", flag), ("chars", number),
        ("bytes", number), ("attempts", number), ("elapsed_ms", number), ("cache", text),
        ("rendered", flag), ("input", text), ("source", text), ("duplicate_of", number),
        ("error", pa.struct([("kind", text), ("message", text), ("retryable", flag)])),
    ])


def _row(record: Record) -> dict[str, Any]:
    row = record.model_dump(mode="json")
    for name in JSON_FIELDS:
        if row[name] is not None:
            row[name] = json.dumps(row[name], ensure_ascii=False, separators=(",", ":"))
    return row


def parts_in(directory: Path) -> list[Path]:
    """The part files of a Parquet output directory, in order."""
    return sorted(directory.glob(f"{PART_PREFIX}*{SUFFIX}"))


class ParquetSink:
    """Writes records to the part files of ``directory``, a row group per part (see the
    module's docstring). ``append`` keeps the parts there (``--resume``); else they are
    removed first. A failed write raises :class:`OutputError` from the next :meth:`write`
    or from :meth:`close`."""

    def __init__(self, directory: str | os.PathLike[str], *, append: bool = False) -> None:
        self._pa = _pyarrow()
        self._schema = schema()
        self.name = os.fspath(directory)
        self._directory = Path(directory)
        if self._directory.exists() and not self._directory.is_dir():
            raise UsageError(f"{self.name} is a file; Parquet output is a directory of parts "
                             "(remove it or choose another name)")
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            for leftover in self._directory.glob(f".{PART_PREFIX}*"):  # a crash's temporary
                leftover.unlink()
            parts = parts_in(self._directory)
            if not append:
                for part in parts:
                    part.unlink()
                parts = []
        except OSError as exc:
            raise UsageError(f"cannot write {self.name}: {exc.strerror}") from exc
        self._next = max((int(p.stem[len(PART_PREFIX):]) for p in parts
                          if p.stem[len(PART_PREFIX):].isdigit()), default=-1) + 1
        self._rows: list[dict[str, Any]] = []
        self._chars = 0
        self._since = time.monotonic()
        self._failure: BaseException | None = None
        self._queue: queue.Queue[tuple[int, list[dict[str, Any]]] | None] = queue.Queue(1)
        self._thread = threading.Thread(target=self._run, name="pipeline-parquet",
                                        daemon=True)
        self._thread.start()

    def write(self, record: Record) -> None:
        self._raise_failure()
        self._rows.append(_row(record))
        self._chars += record.chars
        if (len(self._rows) >= GROUP_RECORDS or self._chars >= GROUP_BYTES
                or time.monotonic() - self._since >= GROUP_SECONDS):
            self._flush()

    def _flush(self) -> None:
        if self._rows:
            self._queue.put((self._next, self._rows))  # waits while the last group is written
            self._next += 1
        self._rows, self._chars, self._since = [], 0, time.monotonic()

    def drain(self) -> None:
        """Wait until every full group handed over is written (the buffer stays)."""
        self._queue.join()

    def _run(self) -> None:
        while (job := self._queue.get()) is not None:
            if self._failure is None:
                try:
                    self._write_part(*job)
                except BaseException as exc:
                    self._failure = exc
            self._queue.task_done()

    def _write_part(self, number: int, rows: list[dict[str, Any]]) -> None:
        table = self._pa.Table.from_pylist(rows, schema=self._schema)
        name = f"{PART_PREFIX}{number:05d}{SUFFIX}"
        temporary = self._directory / f".{name}.tmp"
        try:
            self._pa.parquet.write_table(table, temporary, compression="zstd")
            os.replace(temporary, self._directory / name)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise OutputError(exc.errno, exc.strerror or str(exc), self.name) from exc

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def close(self) -> None:
        """Write the last group, wait for the writer, raise its failure if it had one."""
        if self._thread.is_alive():
            if self._failure is None:
                self._flush()
            self._queue.put(None)
            self._thread.join()
        self._raise_failure()


def scan_parquet(path: str | os.PathLike[str]) -> tuple[DoneSet, int]:
    """The (index, url) pairs the parts of ``path`` record (nothing is torn: a part exists
    whole or not at all, so no bytes are dropped)."""
    pq = _pyarrow().parquet
    done = DoneSet()
    directory = Path(path)
    if not directory.is_dir():
        return done, 0
    for part in parts_in(directory):
        try:
            table = pq.read_table(part, columns=["index", "url"])
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot resume from {part}: {exc}") from exc
        for index, url in zip(table.column("index").to_pylist(),
                              table.column("url").to_pylist(), strict=True):
            done.add(index, url)
    return done, 0


def stored_texts_parquet(path: str | os.PathLike[str]) -> Iterator[StoredText]:
    """(index, content, duplicate_of) of each record in the parts of ``path``, in order
    (what ``--dedup`` reads back on ``--resume``)."""
    pq = _pyarrow().parquet
    for part in parts_in(Path(path)):
        table = pq.read_table(part)
        originals = (table.column("duplicate_of").to_pylist()
                     if "duplicate_of" in table.column_names else [None] * table.num_rows)
        yield from zip(table.column("index").to_pylist(), table.column("content").to_pylist(),
                       originals, strict=True)

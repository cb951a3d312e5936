"""Parquet output (``-o OUT.parquet``, extra ``[parquet]``): the records as columns.

``OUT.parquet`` is a directory of part files, as Spark, DuckDB and pyarrow write a dataset:
``part-00000.parquet``, ``part-00001.parquet``, … Records are buffered into a row group
(:data:`GROUP_RECORDS` records, :data:`GROUP_BYTES` of content or :data:`GROUP_SECONDS`,
whichever comes first) and each group is written as a part of its own by a writer thread,
under a hidden temporary name then renamed, so memory stays bounded and every part that
exists is whole: the directory can be read (``pandas.read_parquet``,
``pyarrow.dataset``) while the run goes on, and ``--resume`` reads the parts written.

The records of the group being buffered are also appended to a hidden journal,
``.journal-NNNNN.jsonl`` (JSONL, written as ``-o OUT.jsonl`` is), removed once its part is
written: a crash or a full disk loses no finished record, as with JSONL output. A failed
write stops the run (exit 74) with the journals kept; ``--resume`` counts their records done
and writes each into the part it was meant for before it goes on.

Columns are the record's fields; ``metadata``, ``fields``, ``fields_meta`` and ``input``
(maps of any JSON) are JSON text, ``error`` a struct of ``kind``, ``message``, ``retryable``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.batch.output.sinks import DoneSet, JsonlSink, StoredText, scan_done, stored_texts
from pipeline.core.errors import OutputError, UsageError
from pipeline.core.extras import install_hint
from pipeline.core.models import Record

SUFFIX = ".parquet"
GROUP_RECORDS = 5_000
GROUP_BYTES = 32 * 1024 * 1024  # content characters buffered before a group is written
GROUP_SECONDS = 300.0
PART_PREFIX = "part-"
JOURNAL_PREFIX = ".journal-"
JOURNAL_SUFFIX = ".jsonl"
JSON_FIELDS = ("metadata", "fields", "fields_meta", "input")


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
        ("fields", text), ("fields_meta", text), ("truncated", flag), ("next_offset", number),
        ("compressed", flag), ("chars", number),
        ("bytes", number), ("attempts", number), ("elapsed_ms", number), ("cache", text),
        ("rendered", flag), ("input", text), ("source", text), ("duplicate_of", number),
        ("depth", number), ("parent", text), ("via", text), ("links", pa.list_(text)),
        ("nofollow_links", pa.list_(text)),
        ("error", pa.struct([("kind", text), ("message", text), ("retryable", flag)])),
    ])


def _row(record: Record) -> dict[str, Any]:
    row = record.model_dump(mode="json")
    for name in JSON_FIELDS:
        if row.get(name) is not None:
            row[name] = json.dumps(row[name], ensure_ascii=False, separators=(",", ":"))
    return row


def parts_in(directory: Path) -> list[Path]:
    """The part files of a Parquet output directory, in order."""
    return sorted(directory.glob(f"{PART_PREFIX}*{SUFFIX}"))


def journals_in(directory: Path) -> list[Path]:
    """The journals a stopped run left (records not in a part yet), in order."""
    return sorted(directory.glob(f"{JOURNAL_PREFIX}*{JOURNAL_SUFFIX}"))


def _number(path: Path, prefix: str) -> int | None:
    digits = path.name[len(prefix):].split(".", 1)[0]
    return int(digits) if digits.isdigit() else None


def journal_path(directory: Path, number: int) -> Path:
    return directory / f"{JOURNAL_PREFIX}{number:05d}{JOURNAL_SUFFIX}"


def _journal_records(path: Path) -> list[Record]:
    """The whole records of a journal (a torn or broken line is left out: its URL is done
    again, as in a JSONL output)."""
    found = []
    with open(path, "rb") as handle:
        for line in handle:
            with contextlib.suppress(ValueError):
                found.append(Record.model_validate_json(line))
    return found


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
            journals = journals_in(self._directory)
            if not append:
                for path in (*parts, *journals):
                    path.unlink()
                parts, journals = [], []
        except OSError as exc:
            raise UsageError(f"cannot write {self.name}: {exc.strerror}") from exc
        numbers = [_number(path, PART_PREFIX) for path in parts]
        numbers += [_number(path, JOURNAL_PREFIX) for path in journals]
        self._next = max((n for n in numbers if n is not None), default=-1) + 1
        for path in journals:  # --resume: each into the part it was meant for
            number = _number(path, JOURNAL_PREFIX)
            if number is not None:
                self._write_part(number, [_row(r) for r in _journal_records(path)], path)
        self._journal: JsonlSink | None = None
        self._rows: list[dict[str, Any]] = []
        self._chars = 0
        self._since = time.monotonic()
        self._failure: BaseException | None = None
        self._queue: queue.Queue[tuple[int, list[dict[str, Any]], Path] | None] = \
            queue.Queue(1)
        self._thread = threading.Thread(target=self._run, name="pipeline-parquet",
                                        daemon=True)
        self._thread.start()

    def write(self, record: Record) -> None:
        self._raise_failure()
        if self._journal is None:
            self._journal = JsonlSink.open(journal_path(self._directory, self._next),
                                           append=True)
        self._journal.write(record)  # a full disk: OutputError, the journal holds the rest
        self._rows.append(_row(record))
        self._chars += record.chars
        if (len(self._rows) >= GROUP_RECORDS or self._chars >= GROUP_BYTES
                or time.monotonic() - self._since >= GROUP_SECONDS):
            self._flush()

    def _flush(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        if self._rows:
            # waits while the last group is written
            self._queue.put((self._next, self._rows, journal_path(self._directory, self._next)))
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

    def _write_part(self, number: int, rows: list[dict[str, Any]], journal: Path) -> None:
        """Part ``number`` of ``rows``, then their ``journal`` is removed (kept on failure)."""
        table = self._pa.Table.from_pylist(rows, schema=self._schema)
        name = f"{PART_PREFIX}{number:05d}{SUFFIX}"
        temporary = self._directory / f".{name}.tmp"
        try:
            if rows:
                self._pa.parquet.write_table(table, temporary, compression="zstd")
                os.replace(temporary, self._directory / name)
            journal.unlink(missing_ok=True)
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
            elif self._journal is not None:
                self._journal.close()  # kept, for --resume
            self._queue.put(None)
            self._thread.join()
        self._raise_failure()


def recorded(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """The (index, url) of every record the parts and journals of ``path`` hold (a part
    exists whole or not at all; a journal's torn or broken line is left out)."""
    pq = _pyarrow().parquet
    directory = Path(path)
    if not directory.is_dir():
        return
    for part in parts_in(directory):
        try:
            table = pq.read_table(part, columns=["index", "url"])
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot resume from {part}: {exc}") from exc
        yield from zip(table.column("index").to_pylist(), table.column("url").to_pylist(),
                       strict=True)
    for journal in journals_in(directory):
        for record in _journal_records(journal):
            if record.index is not None:
                yield record.index, record.url


def scan_parquet(path: str | os.PathLike[str]) -> tuple[DoneSet, int]:
    """The (index, url) pairs the parts and journals of ``path`` record, a journal's torn
    last line cut off first (as a JSONL output's)."""
    done = DoneSet()
    dropped = 0
    directory = Path(path)
    for journal in journals_in(directory) if directory.is_dir() else ():
        found, cut = scan_done(journal)
        dropped += cut
        done.invalid += found.invalid
    for index, url in recorded(path):
        done.add(index, url)
    return done, dropped


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
    for journal in journals_in(Path(path)):
        yield from stored_texts(journal)

"""Tables of URLs: CSV, TSV and JSON lines in, :class:`InputItem` values out.

One column (or JSON field) is the URL: ``--url-column NAME`` or ``N`` (1-based), by default
the column named ``url`` (any case), else the first. The row's other columns travel with the
item as the record's ``input``, so results can be joined back. A CSV/TSV file's first row
names the columns, unless its URL cell already looks like a URL (then columns are named
``"1"``, ``"2"``, …). Every data row gives one item; a row without a usable URL gives an
item with a ``problem`` (an ``invalid_url`` record), never a lost row. A row is read at most
:data:`MAX_ROW_CHARS` at a time: a longer one (one huge field) is read past, never held.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from typing import Any, BinaryIO, TextIO

from pipeline.batch.input.items import (
    MAX_LINE_BYTES,
    SHOWN_URL_CHARS,
    InputItem,
    read_items,
    read_lines,
)
from pipeline.core.errors import UsageError

INPUT_FORMATS = ("lines", "csv", "tsv", "jsonl")
DEFAULT_COLUMN = "url"
MAX_ROW_CHARS = 1 << 20  # a longer CSV/TSV row is an error item, read past in pieces
_SKIP_CHARS = 1 << 16  # the piece size when reading past one
# What a file's name says it holds (``--input-format`` not given).
FORMAT_BY_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
                    ".ndjson": "jsonl"}


def read_input(stream: BinaryIO, format: str = "lines",
               url_column: str | None = None) -> Iterator[InputItem]:
    """The items of an input in ``format`` (one of :data:`INPUT_FORMATS`)."""
    if format == "lines":
        return read_items(stream)
    if format == "jsonl":
        return read_jsonl(stream, url_column)
    return read_delimited(stream, "\t" if format == "tsv" else ",", url_column)


def _position(url_column: str | None) -> int | None:
    """``--url-column N`` as a 0-based position (None for a name or no column given)."""
    if url_column is None or not url_column.isdigit():
        return None
    if int(url_column) < 1:
        raise UsageError("--url-column counts from 1")
    return int(url_column) - 1


def _looks_like_url(cell: str) -> bool:
    return "://" in cell or cell.lower().startswith("file:")


def _named(names: list[str], wanted: str) -> int | None:
    """The position of column ``wanted`` (exact name first, then any case), or None."""
    if wanted in names:
        return names.index(wanted)
    lowered = [name.lower() for name in names]
    return lowered.index(wanted.lower()) if wanted.lower() in lowered else None


def _no_column(url_column: str, names: list[str]) -> UsageError:
    shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
    what = (f"the table has {len(names)} columns" if url_column.isdigit()
            else "no such column")
    return UsageError(f"--url-column {url_column}: {what} (columns: {shown})")


def pick_column(names: list[str], url_column: str | None) -> int:
    """The position of the URL column among ``names``; a ``UsageError`` naming the columns
    when ``url_column`` names none of them (or counts past them)."""
    position = _position(url_column)
    if position is not None and position < len(names):
        return position
    found = _named(names, url_column or DEFAULT_COLUMN) if position is None else None
    if found is not None:
        return found
    if url_column is None:
        return 0
    raise _no_column(url_column, names)


def _readable(cell: str) -> str:
    """A cell with each byte that was not UTF-8 (decoded as a lone surrogate) as U+FFFD."""
    return cell.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _item(index: int, cells: list[str], names: list[str], column: int) -> InputItem:
    if column >= len(cells):
        shown = _readable(",".join(cells)[:SHOWN_URL_CHARS])
        return InputItem(index, shown, f"row has no column {column + 1}")
    others = {names[i] if i < len(names) else str(i + 1): _readable(cell)
              for i, cell in enumerate(cells) if i != column}
    url = _readable(cells[column].strip())
    problem = None if url else "empty URL cell"
    if url != cells[column].strip():
        problem = "URL cell is not valid UTF-8"
    return InputItem(index, url, problem, {"input": others})


class _RowLines:
    """The physical lines of a CSV/TSV text, as ``csv.reader`` takes them, at most
    :data:`MAX_ROW_CHARS` per row. Past that the row is ``cut`` (the reader sees the text
    end) and :meth:`skip_row` reads past its rest in pieces: a line end outside quotes ends
    it (a TSV has no quotes)."""

    def __init__(self, text: TextIO, quoted: bool) -> None:
        self.text = text
        self.quoted = quoted
        self.number = 0  # physical lines read
        self.cut = False
        self._chars = 0  # of the current row
        self._quotes = 0  # '"' in the current row: odd inside a quoted field
        self._open = False  # the last piece read did not end its line

    def __iter__(self) -> _RowLines:
        return self

    def _read(self, limit: int) -> str:
        piece = self.text.readline(limit)
        self._open = bool(piece) and not piece.endswith(("\n", "\r"))
        self.number += bool(piece) and not self._open
        if self.quoted:
            self._quotes += piece.count('"')
        return piece

    def __next__(self) -> str:
        if self.cut:
            raise StopIteration
        line = self._read(MAX_ROW_CHARS + 1 - self._chars)
        self._chars += len(line)
        if self._chars > MAX_ROW_CHARS:
            self.cut = True
        if not line or self.cut:
            raise StopIteration
        return line

    def next_row(self) -> None:
        """The reader finished a row: the next line starts another."""
        self._chars = self._quotes = 0
        self.cut = False

    def skip_row(self) -> None:
        """Read past the rest of a row the reader gave up inside (cut, or a csv error)."""
        while (self._open or self._quotes % 2) and self._read(_SKIP_CHARS):
            pass
        self.next_row()


def read_delimited(stream: BinaryIO, delimiter: str,
                   url_column: str | None = None) -> Iterator[InputItem]:
    """CSV (``,``, quoted fields) or TSV (tabs, no quoting) rows as items."""
    # surrogateescape: a byte that is not UTF-8 stays visible, so a URL holding one is refused
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    lines = _RowLines(text, quoted=delimiter == ",")
    reader = csv.reader(lines, delimiter=delimiter,
                        quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE)
    try:
        yield from _rows(reader, lines, url_column)
    finally:
        text.detach()  # the caller closes the stream (stdin stays open)


def _next_row(reader: Any, lines: _RowLines) -> list[str] | str | None:
    """The next row's cells, why it is unreadable, or None at the end."""
    started = lines.number + 1
    try:
        cells: list[str] = next(reader)
    except StopIteration:
        cells = []
        if not lines.cut:
            return None
    except csv.Error as exc:  # a field past csv's size limit...
        lines.skip_row()
        return f"row at line {started}: unreadable ({exc})"
    if lines.cut:
        lines.skip_row()
        return f"row at line {started}: longer than {MAX_ROW_CHARS} characters"
    lines.next_row()
    return cells


def _rows(reader: Any, lines: _RowLines, url_column: str | None) -> Iterator[InputItem]:
    names: list[str] | None = None
    column = 0
    index = 0
    while (cells := _next_row(reader, lines)) is not None:
        if isinstance(cells, str):
            yield InputItem(index, cells.partition(":")[0], cells)
            index += 1
            continue
        if not any(cell.strip() for cell in cells):
            continue
        if names is None:
            position = _position(url_column)
            first = cells[position or 0] if (position or 0) < len(cells) else ""
            named = url_column is not None and position is None
            if named or not _looks_like_url(first):
                names = [_readable(cell.strip()) for cell in cells]
                column = pick_column(names, url_column)
                continue
            names = [str(i + 1) for i in range(len(cells))]
            column = pick_column(names, url_column)
        yield _item(index, cells, names, column)
        index += 1


def read_jsonl(stream: BinaryIO, url_column: str | None = None) -> Iterator[InputItem]:
    """JSON lines, one object per line: the URL field, the other fields as ``input``."""
    position = _position(url_column)
    checked = url_column is None  # the first object must have the column asked for
    for index, (_, text, problem) in enumerate(read_lines(stream)):
        if problem is not None:
            yield InputItem(index, text, problem)
            continue
        try:
            row: Any = json.loads(text)
        except (ValueError, RecursionError):
            yield InputItem(index, text[:SHOWN_URL_CHARS], "line is not valid JSON")
            continue
        if not isinstance(row, dict) or not row:
            yield InputItem(index, text[:SHOWN_URL_CHARS], "line is not a JSON object")
            continue
        names = list(row)
        if position is not None:
            column = position if position < len(names) else None
        else:
            column = _named(names, url_column or DEFAULT_COLUMN)
            if column is None and url_column is None:
                column = 0
        if not checked:
            if column is None:
                raise _no_column(str(url_column), names)
            checked = True
        if column is None:
            yield InputItem(index, text[:SHOWN_URL_CHARS],
                            f"no field {url_column!r}", {"input": row})
            continue
        key = names[column]
        value = row.pop(key)
        if not isinstance(value, str) or not value.strip():
            yield InputItem(index, text[:SHOWN_URL_CHARS], f"field {key!r} is not a URL string",
                            {"input": row})
            continue
        yield InputItem(index, value.strip(), None, {"input": row})


def check_table(path: str, format: str, url_column: str | None) -> None:
    """Read a regular file's header (a JSON lines file's first object) now, so a
    ``--url-column`` it lacks is a usage error before any output is opened (stdin is checked
    as it is read)."""
    if path == "-" or format == "lines":
        return
    with open(path, "rb") as handle:
        for _ in zip(range(1), read_input(handle, format, url_column), strict=False):
            pass


def format_by_name(path: str | None) -> str | None:
    """The table format a file's name announces (``urls.csv``), or None."""
    if path is None or path == "-":
        return None
    return FORMAT_BY_SUFFIX.get(os.path.splitext(path)[1].lower())


def table_hint(path: str) -> str | None:
    """The table format a URL list's first line gives away (a header row, a JSON object),
    or None when it may well be a URL line."""
    if path == "-" or not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        first = next(read_lines(handle), None)
    if first is None or first[2] is not None:
        return None
    line = first[1]
    if line.startswith("{"):
        return "jsonl"
    delimiter = "\t" if "\t" in line else ","
    cells = [cell.strip().strip('"') for cell in line.split(delimiter)]
    if any(_looks_like_url(cell) for cell in cells):
        return None
    named = any(cell.lower() == DEFAULT_COLUMN for cell in cells)
    if len(cells) > 1 or named:
        return "tsv" if delimiter == "\t" else "csv"
    return None


__all__ = ["INPUT_FORMATS", "MAX_LINE_BYTES", "check_table", "format_by_name", "read_input",
           "table_hint"]

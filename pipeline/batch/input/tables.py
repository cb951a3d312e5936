"""Tables of URLs: CSV, TSV and JSON lines in, :class:`InputItem` values out.

One column (or JSON field) is the URL: ``--url-column NAME`` or ``N`` (1-based), by default
the column named ``url`` (any case), else the first. The row's other columns travel with the
item as the record's ``input``, so results can be joined back. A CSV/TSV file's first row
names the columns, unless its URL cell already looks like a URL (then columns are named
``"1"``, ``"2"``, …). Every data row gives one item; a row without a usable URL gives an
item with a ``problem`` (an ``invalid_url`` record), never a lost row.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any, BinaryIO

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


def pick_column(names: list[str], url_column: str | None) -> int:
    """The position of the URL column among ``names``; a ``UsageError`` naming the columns
    when ``url_column`` names none of them."""
    position = _position(url_column)
    if position is not None:
        return position
    found = _named(names, url_column or DEFAULT_COLUMN)
    if found is not None:
        return found
    if url_column is None:
        return 0
    shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
    raise UsageError(f"--url-column {url_column}: no such column (columns: {shown})")


def _item(index: int, cells: list[str], names: list[str], column: int) -> InputItem:
    if column >= len(cells):
        shown = ",".join(cells)[:SHOWN_URL_CHARS]
        return InputItem(index, shown, f"row has no column {column + 1}")
    others = {names[i] if i < len(names) else str(i + 1): cell
              for i, cell in enumerate(cells) if i != column}
    url = cells[column].strip()
    return InputItem(index, url, None if url else "empty URL cell", {"input": others})


def read_delimited(stream: BinaryIO, delimiter: str,
                   url_column: str | None = None) -> Iterator[InputItem]:
    """CSV (``,``, quoted fields) or TSV (tabs, no quoting) rows as items."""
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
    reader = csv.reader(text, delimiter=delimiter,
                        quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE)
    try:
        yield from _rows(reader, url_column)
    finally:
        text.detach()  # the caller closes the stream (stdin stays open)


def _rows(reader: Any, url_column: str | None) -> Iterator[InputItem]:
    names: list[str] | None = None
    column = 0
    index = 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a field past the size limit, a stray NUL...
            yield InputItem(index, f"row {reader.line_num}", f"unreadable row: {exc}")
            index += 1
            continue
        if not any(cell.strip() for cell in cells):
            continue
        if names is None:
            position = _position(url_column)
            first = cells[position or 0] if (position or 0) < len(cells) else ""
            named = url_column is not None and position is None
            if named or not _looks_like_url(first):
                names = [cell.strip() for cell in cells]
                column = pick_column(names, url_column)
                continue
            names = [str(i + 1) for i in range(len(cells))]
            column = position or 0
        yield _item(index, cells, names, column)
        index += 1


def read_jsonl(stream: BinaryIO, url_column: str | None = None) -> Iterator[InputItem]:
    """JSON lines, one object per line: the URL field, the other fields as ``input``."""
    position = _position(url_column)
    for index, (text, problem) in enumerate(read_lines(stream)):
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
    """Read a regular file's header now, so a ``--url-column`` it lacks is a usage error
    before any output is opened (stdin is checked as it is read)."""
    if path == "-" or format not in ("csv", "tsv"):
        return
    with open(path, "rb") as handle:
        for _ in zip(range(1), read_input(handle, format, url_column), strict=False):
            pass


__all__ = ["INPUT_FORMATS", "MAX_LINE_BYTES", "check_table", "read_input"]

"""Tables as a grid: each cell where its row and column spans put it, and whether a table is
data (a grid of short cells) or layout (cells holding lists, code or other tables)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lxml import etree

# What a GFM table cell cannot hold: a cell with one of these is layout, read as blocks.
_BLOCK_CONTENT = ("ul", "ol", "dl", "pre", "table", "blockquote")
_MAX_SPAN = 100  # a larger rowspan/colspan is a typo or an attack, not a layout
_SPAN_SLOTS = 10_000  # slots a table's spans may cover: the grid's size stays bounded


def own_rows(table: etree._Element) -> Iterator[etree._Element]:
    """The rows of ``table`` itself, not of tables nested in its cells (rendering those
    here as well doubled the work at each level: 22 nested tables took 33 s)."""
    for child in table:
        if child.tag == "tr":
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in child if row.tag == "tr")


def cells(row: etree._Element) -> Iterator[etree._Element]:
    return (cell for cell in row if cell.tag in ("td", "th"))


def is_layout(table: etree._Element) -> bool:
    """A table whose cells hold lists, code, quotations or tables lays out blocks: a
    markdown table cell holds one line."""
    return next(table.iterdescendants(*_BLOCK_CONTENT), None) is not None


def _span(cell: etree._Element, name: str) -> int:
    value = (cell.get(name) or "").strip()
    return min(int(value), _MAX_SPAN) if value.isdigit() and int(value) > 0 else 1


def grid(table: etree._Element, text: Callable[[etree._Element], str]) -> list[list[str]]:
    """The table's rows of cell texts (``text(cell)``), rows without text left out, every
    row as wide as the widest. A cell spanning rows or columns sits at its first slot; the
    slots it covers are empty, so the cells after it stay in their columns."""
    own = list(own_rows(table))
    taken: list[set[int]] = [set() for _ in own]  # per row, the columns spans cover
    budget = _SPAN_SLOTS
    rows: list[list[str]] = []
    for r, row in enumerate(own):
        line: dict[int, str] = {}
        column = 0
        for cell in cells(row):
            while column in taken[r]:
                column += 1
            rowspan, colspan = _span(cell, "rowspan"), _span(cell, "colspan")
            rowspan = min(rowspan, len(own) - r)
            if rowspan * colspan - 1 > budget:  # spans past the budget count as one
                rowspan = colspan = 1
            budget -= rowspan * colspan - 1
            for below in range(r + 1, r + rowspan):
                taken[below].update(range(column, column + colspan))
            line[column] = text(cell)
            column += colspan
        width = max(column, max(taken[r], default=-1) + 1)
        rows.append([line.get(c, "") for c in range(width)])
    rows = [row for row in rows if any(row)]
    width = max((len(row) for row in rows), default=0)
    return [row + [""] * (width - len(row)) for row in rows]

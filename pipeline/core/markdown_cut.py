"""What a cut through markdown must respect: code fences, table rows and links.

:func:`safe_end` moves a cut back to the start of a table row or a link it would split, or
before a code fence that would keep no code; :func:`closing` gives what must follow the kept
text: the line closing a fence it leaves open, or the blank line ending a table. Fences follow
CommonMark (up to three spaces of indent, three or more backticks or tildes, closed by at least
as many of the same); a table row is a line starting with ``|``, as the HTML renderer and most
converters write them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)", re.MULTILINE)
_TABLE_ROW = re.compile(r" {0,3}\|")
# [text](url) or ![alt](src); one level of brackets in the text and of parentheses in the URL.
_LINK = re.compile(
    r"!?\[(?:\\.|[^\[\]\\\n]|\[(?:\\.|[^\[\]\\\n])*\])*\]"
    r"\((?:\\.|[^()\\\n]|\([^()\n]*\))*\)"
)


class Fence(NamedTuple):
    """An open code fence: where its opening line starts and ends, and its marks."""

    start: int
    opener_end: int
    marks: str  # "```", "~~~~", ...


def open_fence(text: str) -> Fence | None:
    """The code fence left open at the end of ``text``, if any."""
    fence = None
    for match in _FENCE.finditer(text):
        marks, rest = match.group(1), match.group(2)
        if fence is None:
            if marks[0] == "`" and "`" in rest:  # backticks in the info string: inline code
                continue
            fence = Fence(match.start(), match.end(), marks)
        elif marks[0] == fence.marks[0] and len(marks) >= len(fence.marks) and not rest.strip():
            fence = None
    return fence


def safe_end(text: str, end: int) -> int:
    """``end``, or an earlier cut when ``text[:end]`` would stop inside a table row or a link,
    or keep a code fence's opening line without any of its code. A cut that would keep nothing
    (only whitespace) stays where it was: a window must always move on."""
    line_start = text.rfind("\n", 0, end) + 1
    if line_start == end:
        return end
    fence = open_fence(text[:line_start])
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    moved = end
    if fence is not None:
        if not text[fence.opener_end:end].strip():  # the fence would keep no code
            moved = fence.start
    elif _FENCE.match(text, line_start) and open_fence(text[line_start:line_end + 1]):
        moved = line_start  # on the opening line of a fence
    elif end < line_end and _TABLE_ROW.match(text, line_start):
        moved = line_start
    else:
        for link in _LINK.finditer(text, line_start, line_end):
            if link.start() < end < link.end():
                moved = link.start()
                break
    return moved if text[:moved].strip() else end


def closing(kept: str, marker: str) -> str:
    """What goes between ``kept`` and ``marker`` so the marker reads as text: the line that
    closes a code fence ``kept`` leaves open, a line break after a closing fence, or a blank
    line after a table row (a line right below a table is one more row of it)."""
    fence = open_fence(kept)
    if fence is not None:
        return f"\n{fence.marks}" + ("\n" if marker else "")
    last_line = kept.rfind("\n") + 1
    if marker and _TABLE_ROW.match(kept, last_line):
        return "\n\n"
    if marker and _FENCE.match(kept, last_line):  # text after a closing fence reopens it
        return "\n"
    return ""

"""Boundary-aware truncation: the output never exceeds the budget, marker included.

The cut goes at the last paragraph break in the latter half of the window, else at the last
sentence end past 30% of it, else at the last word boundary, else a hard cut. What is kept is
always a prefix of the input (trailing whitespace at the cut dropped); for markdown, followed
by what keeps it valid (see :mod:`pipeline.core.markdown_cut`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from pipeline.core.markdown_cut import closing, safe_end

MARKER = " ... [truncated]"  # a space keeps it off the last word or full stop

_PARAGRAPH = re.compile(r"\n[ \t]*\n")
# A sentence ends at . ! ? … or CJK full stops, optionally closed by quotes/brackets,
# followed by whitespace (or directly by text for CJK).
_SENTENCE = re.compile(r"(?:[.!?…](?:[\"'”’)\]]*)(?=\s)|[。！？](?:[」』”’）)]*))")
_SPACE = re.compile(r"\s")
_LOOKAHEAD = 64


class Cut(NamedTuple):
    """Where a window of ``text`` ends: ``end`` is the index just past the kept prefix."""

    end: int
    boundary: str  # "paragraph" | "sentence" | "word" | "hard" | "none"


def find_cut(text: str, budget: int) -> Cut:
    """Best boundary at or before ``budget`` characters of ``text``."""
    if len(text) <= budget:
        return Cut(len(text), "none")
    if budget <= 0:
        return Cut(0, "hard")
    # A boundary starting right after the last kept char still counts, so look a little past.
    window = text[: budget + _LOOKAHEAD]
    last_para = None
    for match in _PARAGRAPH.finditer(window):
        if match.start() <= budget:
            last_para = match.start()
    if last_para is not None and last_para >= budget // 2:
        return Cut(last_para, "paragraph")
    last_sentence = None
    for match in _SENTENCE.finditer(window):
        if match.end() <= budget:
            last_sentence = match.end()
    if last_sentence is not None and last_sentence > budget * 0.3:
        return Cut(last_sentence, "sentence")
    last_space = None
    for match in _SPACE.finditer(window):
        if match.start() <= budget:
            last_space = match.start()
    if last_space:
        return Cut(last_space, "word")
    return Cut(budget, "hard")


class Truncated(NamedTuple):
    text: str
    truncated: bool
    next_offset: int | None  # where the next window starts in the original text


def truncate(text: str, max_chars: int, marker: str = MARKER, *,
             markdown: bool = False) -> Truncated:
    """Fit ``text`` into ``max_chars`` characters, ``marker`` included when cut. With
    ``markdown`` the cut also leaves valid markdown: never inside a table row or a link, a
    code fence left open closed (the closing line counted inside the budget), a table ended
    by a blank line before the marker."""
    if len(text) <= max_chars:
        return Truncated(text, False, None)
    budget = max_chars - len(marker)
    if budget <= 0:  # no room for the marker: a plain hard cut, still inside the budget
        end = max(0, max_chars)
        return Truncated(text[:end], True, end)
    room, closer = budget, ""
    while True:
        end = find_cut(text, room).end
        kept = text[:end].rstrip()
        if not markdown:
            break
        end = safe_end(text, len(kept))
        kept = text[:end].rstrip()
        closer = closing(kept, marker)
        over = len(kept) + len(closer) - budget
        if over <= 0:
            break
        room -= over  # the closing line did not fit: cut earlier
    if markdown and not kept.strip():  # no room for a safe cut: a plain one, to move on
        return truncate(text, max_chars, marker)
    resume = end
    while resume < len(text) and text[resume].isspace():
        resume += 1
    return Truncated(kept + closer + marker, True, resume)


TITLE_CHARS = 1_000
METADATA_CHARS = 2_000
METADATA_ITEMS = 50


def clip_title(title: str | None) -> str | None:
    """A title bounded like content: a hostile page cannot make the record huge through it."""
    return truncate(title, TITLE_CHARS).text if title else title


def clip_metadata(value: Any) -> Any:
    """``value`` with every string cut to ``METADATA_CHARS`` and every list or mapping to
    ``METADATA_ITEMS`` entries, at any depth: metadata is never the unbounded part of a record."""
    if isinstance(value, str):
        return truncate(value, METADATA_CHARS).text
    if isinstance(value, dict):
        return {k: clip_metadata(v) for k, v in list(value.items())[:METADATA_ITEMS]}
    if isinstance(value, list | tuple):
        return [clip_metadata(v) for v in value[:METADATA_ITEMS]]
    return value

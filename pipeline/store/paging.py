"""Reading past the budget: boundary-aware windows over a full text.

A truncated record says where the next window starts (``next_offset``); a call with that
``offset`` gets the following window of the same size from the cached full text, cut with
the same rules as :func:`pipeline.core.truncate.truncate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from pipeline.core.markdown_cut import open_fence
from pipeline.core.models import Record
from pipeline.core.slices import TextSettings
from pipeline.core.truncate import MARKER, truncate


class Window(NamedTuple):
    """One window of a full text and where the next one starts."""

    text: str
    next_offset: int | None  # None: this window reaches the end of the text


def window(full_text: str, offset: int, max_chars: int, marker: str = MARKER, *,
           markdown: bool = False) -> Window:
    """The window of ``full_text`` starting at ``offset``, at most ``max_chars`` characters,
    marker included when more text follows. Offset 0 gives exactly what
    :func:`~pipeline.core.truncate.truncate` gives; a later window skips whitespace at its start.
    With ``markdown``, a window starting inside a code fence opens it again first."""
    if max_chars <= len(marker):
        raise ValueError(f"max_chars must exceed the marker length ({len(marker)})")
    start = max(offset, 0)
    while 0 < start < len(full_text) and full_text[start].isspace():
        start += 1
    fence = open_fence(full_text[:start]) if markdown and start else None
    reopen = full_text[fence.start:fence.opener_end].lstrip() + "\n" if fence else ""
    cut = truncate(reopen + full_text[start:], max_chars, marker, markdown=markdown)
    if cut.next_offset is None:  # not cut
        return Window(cut.text, None)
    if cut.next_offset <= len(reopen):  # no room for any code after the opening line
        return window(full_text, offset, max_chars, marker)
    return Window(cut.text, start + cut.next_offset - len(reopen))


def page_record(full: Record, offset: int, max_chars: int) -> Record:
    """``full`` (an untruncated record) reduced to the window at ``offset``; an offset past
    the end gives empty content, not an error."""
    if not full.ok or full.content is None:
        return full
    if offset <= 0 and len(full.content) <= max_chars and not full.truncated:
        return full  # the whole text fits: nothing to cut, nothing to copy
    text, next_offset = window(full.content, offset, max_chars,
                               markdown=full.format == "markdown")
    return full.model_copy(
        update={
            "content": text,
            "chars": len(text),
            "truncated": next_offset is not None,
            "next_offset": next_offset,
        }
    )


# The budget a full text is extracted with before it is cached and windowed; the byte cap
# on responses bounds it in practice.
FULL_TEXT_CHARS = 10_000_000


def text_identity(settings: TextSettings, backends: Sequence[str]) -> dict[str, Any]:
    """What besides URL and format changes an extracted text: the providers and the
    handler options. Part of every cache key."""
    identity: dict[str, Any] = {
        "backends": list(backends),
        "handlers": list(settings.handlers),
        "pdf_max_pages": settings.pdf_max_pages,
        "include_comments": settings.include_comments,
        "structured_raw": settings.structured_raw,
        "html_extractor": settings.html_extractor,
    }
    if settings.render != "never":  # keys of unrendered texts stay what they were
        identity["render"] = settings.render
    if settings.fields_schema is not None:  # so do keys of records without fields
        identity["fields_schema"] = settings.fields_schema
    return identity

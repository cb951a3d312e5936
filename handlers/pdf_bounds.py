"""How much a PDF's Flate streams inflate to, counted without keeping the output.

A PDF under the byte cap can still hold a content stream that inflates to gigabytes (a
900 KB file made PDFium allocate 1.8 GB and work 11 s), so the handler refuses a document
whose streams inflate past a budget before PDFium sees it. Counting costs one inflate pass
with a 1 MiB window: memory stays flat and the pass stops at the budget.
"""

from __future__ import annotations

import re
import zlib

from pipeline.core.errors import PipelineError

MAX_INFLATED = 256 << 20  # all streams together; a legitimate text PDF stays far below
_WINDOW = 1 << 20
# "stream" plus its end of line, not the tail of "endstream"
_STREAM = re.compile(rb"(?<!end)stream(?:\r\n|\n|\r)")


def inflated_size(data: bytes, budget: int) -> int:
    """Bytes ``data`` inflates to as zlib, counting stops once past ``budget``; 0 if it is
    not zlib at all (other filters are left to PDFium)."""
    inflater = zlib.decompressobj()
    total = 0
    try:
        out = inflater.decompress(data, _WINDOW)
        while True:
            total += len(out)
            if total > budget or not inflater.unconsumed_tail:
                return total
            out = inflater.decompress(inflater.unconsumed_tail, _WINDOW)
    except zlib.error:
        return total  # a broken stream inflates as far as it goes, for PDFium too


def check_inflated_size(body: bytes, limit: int = MAX_INFLATED) -> None:
    """Raise ``too_large`` when the streams of ``body`` inflate past ``limit`` bytes."""
    total = 0
    for match in _STREAM.finditer(body):
        end = body.find(b"endstream", match.end())
        data = body[match.end(): end if end >= 0 else len(body)]
        total += inflated_size(data, limit - total)
        if total > limit:
            raise PipelineError("too_large", f"PDF streams inflate past {limit >> 20} MiB "
                                             "(a compression bomb?)")

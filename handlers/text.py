"""Plain text, Markdown and CSV: decoded, cleaned, passed through."""

from __future__ import annotations

import re

from handlers.decode import decode_body
from handlers.registry import HandlerContext, InlineHandler
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document

# Bytes that never occur in text (NUL and C0 controls other than tab, LF, FF, CR, ESC).
_BINARY = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
_BINARY_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20)])
# Markup is the HTML handler's business: text sniffing must not claim it.
_MARKUP = re.compile(rb"<\s*(?:!doctype|html|head|body|div|p|span|a|table|\?xml|svg)\b", re.I)
_ATX_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_BINARY_WINDOW = 64 * 1024
_BINARY_SHARE = 0.01  # more control bytes than this share (or a few strays) ⇒ not text
_STRAY_BYTES = 8
# Up to this size handling a UTF-8 body (decoding and truncation) costs less than sending it
# to a worker and its text back costs the event loop: batch mode handles it inline
# (benchmarks/README.md, figures behind the code).
INLINE_MAX_BYTES = 256 * 1024


def _decodes_as_text(head: bytes) -> bool:
    if not head.strip() or _BINARY.search(head):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte sequence cut at the window's edge is still text; anything else may be
        # a legacy 8-bit encoding, which the decoder handles, so only C0 bytes disqualify.
        return exc.start >= len(head) - 3 or not _BINARY.search(head)
    return True


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class TextHandler(InlineHandler):
    """text/plain, text/markdown, text/csv and other text/* types."""

    name = "text"
    media_types = ("text/plain", "text/markdown", "text/x-markdown", "text/csv", "text/*")

    def sniff(self, head: bytes) -> bool:
        return _decodes_as_text(head) and not _MARKUP.search(head)

    def inline(self, body: bytes, ctx: HandlerContext) -> bool:
        """True when handling ``body`` costs less than sending it to a worker: small and
        UTF-8 (so no charset detection, which takes milliseconds)."""
        return len(body) <= INLINE_MAX_BYTES and _is_utf8(body)

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        window = body[:_BINARY_WINDOW]
        strays = len(window) - len(window.translate(None, _BINARY_BYTES))  # C speed, not re
        if strays > max(_STRAY_BYTES, _BINARY_SHARE * len(window)):
            raise PipelineError("decode", "body is binary, not text")
        content = decode_body(body, ctx.charset).strip()
        title = None
        if ctx.media_type in {"text/markdown", "text/x-markdown"}:
            heading = _ATX_HEADING.search(content[:4096])
            title = heading.group(1).strip() if heading else None
        return Document(title=title, content=content, format=ctx.format)


handler = TextHandler()

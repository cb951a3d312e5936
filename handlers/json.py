"""JSON documents, pretty-printed (inside a ```json fence in markdown) with size and depth
guards. Malformed JSON ⇒ ``decode``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from handlers.decode import decode_body
from handlers.registry import HandlerContext
from pipeline.core.errors import PipelineError
from pipeline.core.models import Document

MAX_BYTES = 16 * 1024 * 1024  # parsing is done in memory: refuse anything bigger
MAX_DEPTH = 64  # deeper nesting is refused (it also renders into mostly indentation)
_OPENING = re.compile(rb"^(?:\xef\xbb\xbf)?\s*[\[{]")
# How a JSON document (possibly cut short, possibly malformed further on) starts.
_PLAUSIBLE = re.compile(r'\s*(?:\{\s*["}]|\[\s*(?:[\[{"\]\d-]|true|false|null))')


def _depth(value: object, limit: int) -> int:
    """Nesting depth of ``value``, counted iteratively and stopping once past ``limit``."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        children: Iterable[object]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def parse(body: bytes, charset: str | None = None) -> object:
    """The decoded JSON value, or ``PipelineError('decode')``."""
    if len(body) > MAX_BYTES:
        raise PipelineError("too_large", f"JSON body over {MAX_BYTES} bytes")
    try:
        return json.loads(decode_body(body, charset))
    except RecursionError as exc:
        raise PipelineError("decode", f"JSON nested deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:
        raise PipelineError("decode", f"malformed JSON: {exc}") from exc


class JsonHandler:
    """application/json, */*+json and text/json."""

    name = "json"
    media_types = ("application/json", "text/json", "*/*+json")

    def sniff(self, head: bytes) -> bool:
        if not _OPENING.match(head):
            return False
        text = head.decode("utf-8-sig", errors="ignore")
        try:
            json.loads(text)
        except RecursionError:
            return True
        except ValueError:
            # The window may cut a longer body short, and a malformed body whose opening is
            # JSON's is still JSON (its handler reports 'decode'): judge by the opening.
            return bool(_PLAUSIBLE.match(text))
        return True

    def handle(self, body: bytes, ctx: HandlerContext) -> Document:
        value = parse(body, ctx.charset)
        if _depth(value, MAX_DEPTH) > MAX_DEPTH:
            raise PipelineError("decode", f"JSON nested deeper than {MAX_DEPTH} levels")
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
        title = value.get("title") if isinstance(value, dict) else None
        content = f"```json\n{pretty}\n```" if ctx.format == "markdown" else pretty
        return Document(title=title if isinstance(title, str) else None, content=content,
                        format=ctx.format)


handler = JsonHandler()
